/**
 * Recording attempts as they finish: those that finish while a statement runs go together in
 * the next one, and none is lost, not even when one of them cannot be recorded.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, type Sql } from "@printshop/shared/db";
import { ROLES, roleUrl } from "@printshop/shared/db/tenancy";
import type { ServiceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";
import { attemptRecorder } from "./dispatch.ts";
import {
  type AttemptRecord,
  claimDueDeliveries,
  type ClaimedDelivery,
} from "./store/deliveries.ts";
import { recordEvents } from "./store/events.ts";
import { busEvent, subscribedId, webhooksHarness } from "./test_fixtures.ts";

const SCHEDULE = [200, 200] as const;

const success = (): AttemptRecord => ({
  startedAt: new Date(),
  durationMs: 3,
  httpStatus: 204,
  succeeded: true,
  failureReason: null,
  trigger: "automatic",
});

/**
 * Ten deliveries claimed for one subscription, and a pool of its own that lists the statements
 * it sends (the recorder's, to count).
 */
async function tenClaimed(
  h: ServiceHarness<Config>,
): Promise<{ claims: ClaimedDelivery[]; sql: Sql; statements: string[] }> {
  const organizationId = crypto.randomUUID();
  await subscribedId(h, {
    organizationId,
    credentialKind: "tenant_key",
    credentialId: crypto.randomUUID(),
  });
  await recordEvents(h.deps.sql, Array.from({ length: 10 }, () => busEvent(organizationId)));
  const claims = await claimDueDeliveries(h.deps.sql, 100, 60_000);
  assertEquals(claims.length, 10);
  const statements: string[] = [];
  // As the service connects: the runtime role, held to the row-level policies.
  const password = decodeURIComponent(new URL(h.databaseUrl).password);
  const sql = connect(roleUrl(h.databaseUrl, ROLES.app, password), {
    schema: "webhooks",
    max: 2,
    onQuery: (text) => statements.push(text),
  });
  return { claims, sql, statements };
}

Deno.test("attemptRecorder() records attempts that finish together in one statement and loses none", async () => {
  await using h = await webhooksHarness();
  const { claims, sql, statements } = await tenClaimed(h);
  try {
    const record = attemptRecorder(sql, SCHEDULE);
    // A delivery that does not exist: its attempt cannot be recorded (no such delivery), and
    // the statement it shares with others fails.
    const missing: ClaimedDelivery = { ...claims[0]!, id: crypto.randomUUID() };
    const outcomes = await Promise.allSettled([
      ...claims.map((claim) => record(claim, success())),
      record(missing, success()),
    ]);

    assertEquals(outcomes.map((o) => o.status), [...claims.map(() => "fulfilled"), "rejected"]);
    const [done] = await h.sql<{ succeeded: number; attempts: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
             (SELECT count(*) FROM delivery_attempts)::int AS attempts
      FROM deliveries`;
    assertEquals(done, { succeeded: 10, attempts: 10 });
    // The first attempt went alone; the other ten gathered while it ran and went in one
    // statement, which failed for the missing delivery, so those ten were recorded one by one.
    const recording = statements.filter((text) => text.includes("INSERT INTO delivery_attempts"));
    assertEquals(recording.length, 1 + 1 + 10);
  } finally {
    await sql.end();
  }
});

Deno.test("attemptRecorder() records ten attempts that finish together in two statements", async () => {
  await using h = await webhooksHarness();
  const { claims, sql, statements } = await tenClaimed(h);
  try {
    const record = attemptRecorder(sql, SCHEDULE);
    await Promise.all(claims.map((claim) => record(claim, success())));
    const recording = statements.filter((text) => text.includes("INSERT INTO delivery_attempts"));
    // The first alone, as nothing was running; the nine that finished meanwhile together.
    assertEquals(recording.length, 2);
    const [done] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM deliveries WHERE status = 'succeeded'`;
    assertEquals(done?.n, 10);
  } finally {
    await sql.end();
  }
});

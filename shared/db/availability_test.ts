import assert from "node:assert/strict";
import postgres from "postgres";
import { createLogger } from "../log.ts";
import {
  DatabaseAvailability,
  isDatabaseUnavailable,
  onDatabaseBack,
  PROBE_INTERVAL_MS,
} from "./availability.ts";
import { connect } from "./mod.ts";
import { freePort } from "../net.ts";

/** A logger whose lines are kept, to count them. */
function keptLogger(): { logger: ReturnType<typeof createLogger>; lines: { msg: string }[] } {
  const lines: { msg: string }[] = [];
  const logger = createLogger({
    level: "debug",
    fields: {},
    write: (line: string) => lines.push(JSON.parse(line)),
  });
  return { logger, lines };
}

Deno.test("isDatabaseUnavailable knows a gone database from a bad statement", async () => {
  // A real refused connect, as postgres.js reports it.
  const sql = connect(`postgres://x:y@127.0.0.1:${freePort()}/db`, { schema: "public", max: 1 });
  const refused = await sql`SELECT 1`.then(() => null, (error) => error);
  await sql.end({ timeout: 1 });
  assert.ok(isDatabaseUnavailable(refused), String(refused));
  for (const code of ["CONNECTION_CLOSED", "CONNECT_TIMEOUT", "ECONNRESET"]) {
    assert.ok(isDatabaseUnavailable(Object.assign(new Error(code), { code })), code);
  }
  const server = (code: string): postgres.PostgresError =>
    Object.assign(Object.create(postgres.PostgresError.prototype), { code, message: code });
  for (const code of ["57P01", "57P02", "57P03", "08006", "08001", "53300"]) {
    assert.ok(isDatabaseUnavailable(server(code)), code);
  }
  for (const code of ["23505", "42P01", "40001", "22P02"]) {
    assert.ok(!isDatabaseUnavailable(server(code)), `${code} is the statement's fault`);
  }
  assert.ok(!isDatabaseUnavailable(new Error("boom")));
  assert.ok(!isDatabaseUnavailable(null));
});

Deno.test("DatabaseAvailability logs an outage once when it starts and once when it ends", async () => {
  const { logger, lines } = keptLogger();
  let up = false;
  let probes = 0;
  const watch = new DatabaseAvailability(() => {
    probes++;
    return up ? Promise.resolve() : Promise.reject(new Error("still down"));
  }, logger);
  let backs = 0;
  const forget = onDatabaseBack(() => backs++);
  try {
    const error = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    for (let i = 0; i < 50; i++) {
      assert.deepEqual(watch.failed(error).retryAfterSeconds, 1);
    }
    assert.ok(watch.down);
    assert.deepEqual(lines.map((l) => l.msg), ["database unavailable"], "one line for 50 failures");
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS * 3));
    assert.ok(probes >= 2, "probed while down");
    up = true;
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS * 2));
    assert.ok(!watch.down, "noticed it back without a request");
    assert.deepEqual(lines.map((l) => l.msg), ["database unavailable", "database available again"]);
    const ended = lines[1] as unknown as { outageMs: number; failures: number };
    assert.ok(ended.outageMs >= PROBE_INTERVAL_MS, String(ended.outageMs));
    assert.equal(ended.failures, 50);
    assert.equal(backs, 1, "loops waiting out a backoff were woken");
  } finally {
    forget();
    watch.stop();
  }
});

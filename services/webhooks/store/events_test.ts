/**
 * The webhooks store against a real database: recording events and fanning them out to
 * deliveries, revoking a credential, claiming due deliveries side by side, and moving a delivery
 * on after each attempt.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, type Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import type { ServiceHarness } from "@printshop/shared/testing";
import type { Config } from "../config.ts";
import {
  asOrganization,
  busEvent,
  findOwned,
  subscribedId,
  webhooksHarness,
} from "../test_fixtures.ts";
import { purgeOldEvents, recordEvents } from "./events.ts";
import {
  type AttemptRecord,
  claimDueDeliveries,
  type ClaimedDelivery,
  claimFailedDelivery,
  recordAttempt,
  recordAttempts,
} from "./deliveries.ts";
import {
  type Owner,
  revokeCredential,
  rotateSecret,
  signingSecrets,
  subscribe,
} from "./subscriptions.ts";
import { createSecretBox } from "../delivery/secret_box.ts";
import { ApiError } from "@printshop/shared/http";
import { ROLES, roleUrl } from "@printshop/shared/db/tenancy";

const SCHEDULE = [200, 200] as const;
/** Long enough that nothing claimed comes due again during a test. */
const LONG_LEASE = 60_000;

const owner = (organizationId: string = crypto.randomUUID()): Owner => ({
  organizationId,
  credentialKind: "tenant_key",
  credentialId: crypto.randomUUID(),
});

/** What `api_key.revoked` says of the key `who` subscribed with. */
const keyOf = (who: Owner): { organizationId: string; apiKeyId: string } => ({
  organizationId: who.organizationId,
  apiKeyId: who.credentialId,
});

/** A subscription without cost fields: these tests are about fan-out and delivery, not costs. */
const subscribed = (h: ServiceHarness<Config>, who: Owner, event?: string): Promise<string> =>
  subscribedId(h, who, { event, includesCosts: false });

interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_failure_reason: string | null;
}

async function deliveries(h: ServiceHarness<Config>): Promise<DeliveryRow[]> {
  return await h.sql<DeliveryRow[]>`
    SELECT id, subscription_id, event_id, status, attempt_count, next_attempt_at,
           last_failure_reason
    FROM deliveries ORDER BY created_at, id`;
}

async function delivery(h: ServiceHarness<Config>, id: string): Promise<DeliveryRow> {
  const [row] = await h.sql<DeliveryRow[]>`
    SELECT id, subscription_id, event_id, status, attempt_count, next_attempt_at,
           last_failure_reason
    FROM deliveries WHERE id = ${id}`;
  assert(row, `delivery ${id} exists`);
  return row;
}

/** (subscription, event) pairs, sorted, to compare fan-out without caring about order. */
const pairs = (rows: readonly DeliveryRow[]): string[] =>
  rows.map((r) => `${r.subscription_id} ${r.event_id}`).sort();

const failure = (trigger: AttemptRecord["trigger"] = "automatic"): AttemptRecord => ({
  startedAt: new Date(),
  durationMs: 12,
  httpStatus: 503,
  succeeded: false,
  failureReason: "HTTP 503 from endpoint",
  trigger,
});

const success = (): AttemptRecord => ({
  startedAt: new Date(),
  durationMs: 7,
  httpStatus: 204,
  succeeded: true,
  failureReason: null,
  trigger: "automatic",
});

/** Claims exactly one delivery, which must be `id`. */
async function claimOne(
  sql: Sql,
  id: string,
  leaseMs = LONG_LEASE,
): Promise<ClaimedDelivery> {
  const claimed = await claimDueDeliveries(sql, 10, leaseMs);
  assertEquals(claimed.map((c) => c.id), [id]);
  return claimed[0]!;
}

/** Makes a retrying delivery due now instead of waiting out its step of the schedule. */
async function makeDue(h: ServiceHarness<Config>, id: string): Promise<void> {
  await h.sql`UPDATE deliveries SET next_attempt_at = now() WHERE id = ${id}`;
}

// ---------------------------------------------------------------------------------------------
// recordEvents

Deno.test("recordEvents() records a batch once: the same batch again records and queues nothing", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const created = await subscribed(h, shop, "quote.created");
  const alsoCreated = await subscribed(h, owner(shop.organizationId), "quote.created");
  const updated = await subscribed(h, shop, "quote.updated");
  const batch = [
    busEvent(shop.organizationId, "quote.created"),
    busEvent(shop.organizationId, "quote.updated"),
    busEvent(shop.organizationId, "quote.created"),
  ];

  assertEquals(await recordEvents(h.deps.sql, batch), { recorded: 3, queued: 5 });
  const expected = [
    `${created} ${batch[0]!.id}`,
    `${alsoCreated} ${batch[0]!.id}`,
    `${updated} ${batch[1]!.id}`,
    `${created} ${batch[2]!.id}`,
    `${alsoCreated} ${batch[2]!.id}`,
  ].sort();
  assertEquals(pairs(await deliveries(h)), expected);

  assertEquals(await recordEvents(h.deps.sql, batch), { recorded: 0, queued: 0 });
  assertEquals(await recordEvents(h.deps.sql, batch.slice(1)), { recorded: 0, queued: 0 });
  assertEquals(pairs(await deliveries(h)), expected);
  const [events] = await h.sql`SELECT count(*)::int AS n FROM events`;
  assertEquals(events?.n, 3);

  // A batch mixing seen and new events records only the new one.
  const fresh = busEvent(shop.organizationId, "quote.updated");
  assertEquals(await recordEvents(h.deps.sql, [batch[0]!, fresh]), { recorded: 1, queued: 1 });
  // A batch repeating one event within itself records it once.
  const twice = busEvent(shop.organizationId, "quote.updated");
  assertEquals(await recordEvents(h.deps.sql, [twice, twice]), { recorded: 1, queued: 1 });
  // An empty batch is a no-op.
  assertEquals(await recordEvents(h.deps.sql, []), { recorded: 0, queued: 0 });
});

Deno.test("recordEvents() fans out only to subscriptions of the same organisation and event type", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const mine = await subscribed(h, shop, "quote.created");
  const colleagues = await subscribed(h, owner(shop.organizationId), "quote.created");
  await subscribed(h, shop, "quote.deleted");
  await subscribed(h, owner(), "quote.created");
  // Same credential id in another organisation: still someone else's subscription.
  await subscribed(h, { ...shop, organizationId: crypto.randomUUID() }, "quote.created");

  const event = busEvent(shop.organizationId, "quote.created");
  assertEquals(await recordEvents(h.deps.sql, [event]), { recorded: 1, queued: 2 });
  assertEquals(
    pairs(await deliveries(h)),
    [`${mine} ${event.id}`, `${colleagues} ${event.id}`].sort(),
  );

  // An event nobody subscribed to is recorded (for the event log) and queues nothing.
  const lonely = busEvent(shop.organizationId, "tax_rate.created");
  assertEquals(await recordEvents(h.deps.sql, [lonely]), { recorded: 1, queued: 0 });
  assertEquals((await deliveries(h)).length, 2);
  for (const row of await deliveries(h)) {
    assertEquals([row.status, row.attempt_count], ["pending", 0]);
  }
});

Deno.test("revokeCredential() fails the key's queued deliveries and recordEvents() skips its subscriptions", async () => {
  await using h = await webhooksHarness();
  const revoked = owner();
  const colleague = owner(revoked.organizationId);
  const doomed = await subscribed(h, revoked);
  const doomedToo = await subscribed(h, revoked, "quote.updated");
  const kept = await subscribed(h, colleague);
  const before = busEvent(revoked.organizationId);
  await recordEvents(h.deps.sql, [before, busEvent(revoked.organizationId, "quote.updated")]);
  // One of the key's deliveries has already been delivered: revoking leaves it alone.
  const [done] = await h.sql<{ id: string }[]>`
    UPDATE deliveries SET status = 'succeeded', next_attempt_at = NULL
    WHERE subscription_id = ${doomedToo} RETURNING id`;

  assertEquals(await revokeCredential(h.deps.sql, keyOf(revoked)), 2);
  assertEquals((await findOwned(h, revoked, doomed))?.active, false);
  assertEquals((await findOwned(h, colleague, kept))?.active, true);
  const rows = await deliveries(h);
  const of = (subscription: string) => rows.filter((r) => r.subscription_id === subscription);
  assertEquals(
    of(doomed).map((r) => [r.status, r.next_attempt_at, r.last_failure_reason]),
    [["failed", null, "credential revoked"]],
  );
  assertEquals((await delivery(h, done!.id)).status, "succeeded");
  assertEquals(of(kept).map((r) => r.status), ["pending"]);

  // Nothing new is queued for the revoked key, and none of its deliveries is handed out.
  const after = busEvent(revoked.organizationId);
  assertEquals(await recordEvents(h.deps.sql, [after]), { recorded: 1, queued: 1 });
  assertEquals(
    pairs((await deliveries(h)).filter((r) => r.event_id === after.id)),
    [`${kept} ${after.id}`],
  );
  const claimed = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  assert(claimed.every((c) => c.subscriptionId === kept), JSON.stringify(claimed));
  assertEquals(claimed.length, 2);

  // Revoking again, or an unknown key, is a no-op; a partner app's credential is not a tenant
  // key, so revoking a key of the same id leaves its subscriptions alone.
  assertEquals(await revokeCredential(h.deps.sql, keyOf(revoked)), 0);
  assertEquals(await revokeCredential(h.deps.sql, keyOf(owner())), 0);
  const partner: Owner = { ...owner(revoked.organizationId), credentialKind: "partner" };
  const partners = await subscribed(h, partner);
  assertEquals(await revokeCredential(h.deps.sql, keyOf(partner)), 0);
  assertEquals((await findOwned(h, partner, partners))?.active, true);
});

Deno.test("subscribe() after revokeCredential() makes the key's subscription inactive", async () => {
  await using h = await webhooksHarness();
  // The gateway still let the key through (its auth cache, or a request already in flight).
  const late = owner();
  assertEquals(await revokeCredential(h.deps.sql, keyOf(late)), 0);
  const subscription = await subscribed(h, late);
  assertEquals((await findOwned(h, late, subscription)).active, false);
  assertEquals(await recordEvents(h.deps.sql, [busEvent(late.organizationId)]), {
    recorded: 1,
    queued: 0,
  });
  // The same key id in another organisation, and a partner app of that id, are not revoked.
  for (
    const other of [
      owner(),
      { ...owner(late.organizationId), credentialKind: "partner" as const },
    ]
  ) {
    const mine = await subscribed(h, { ...other, credentialId: late.credentialId });
    assertEquals(
      (await findOwned(h, { ...other, credentialId: late.credentialId }, mine)).active,
      true,
    );
  }
});

Deno.test("subscribe() racing revokeCredential() never leaves the revoked key an active subscription", async () => {
  await using h = await webhooksHarness();
  const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
  const organizationId = crypto.randomUUID();
  const keys = Array.from({ length: 40 }, () => owner(organizationId));
  for (const key of keys) {
    await Promise.all([
      asOrganization(organizationId, () =>
        subscribe(h.deps.sql, box, key, {
          event: "quote.created",
          url: `http://93.184.216.34/${key.credentialId}`,
          includesCosts: false,
        })),
      revokeCredential(h.deps.sql, keyOf(key)),
    ]);
  }
  const active = await h.sql<{ credential_id: string }[]>`
    SELECT credential_id FROM subscriptions
    WHERE organization_id = ${organizationId} AND credential_revoked_at IS NULL`;
  assertEquals(active.map((r) => r.credential_id), []);
  assertEquals(await recordEvents(h.deps.sql, [busEvent(organizationId)]), {
    recorded: 1,
    queued: 0,
  });
});

// ---------------------------------------------------------------------------------------------
// claimDueDeliveries

Deno.test("claimDueDeliveries() never hands one delivery to two concurrent claimers", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  await subscribed(h, shop);
  await subscribed(h, owner(shop.organizationId));
  const events = Array.from({ length: 40 }, () => busEvent(shop.organizationId));
  assertEquals(await recordEvents(h.deps.sql, events), { recorded: 40, queued: 80 });

  // Two replicas, each with its own pool, each running several claim loops at once.
  // As the service connects: the runtime role.
  const password = decodeURIComponent(new URL(h.databaseUrl).password);
  const appUrl = roleUrl(h.databaseUrl, ROLES.app, password);
  const pools = [0, 1].map(() => connect(appUrl, { schema: "webhooks", max: 4 }));
  try {
    const drain = async (sql: Sql): Promise<string[]> => {
      const mine: string[] = [];
      for (;;) {
        const claimed = await claimDueDeliveries(sql, 3, LONG_LEASE);
        if (claimed.length === 0) return mine;
        mine.push(...claimed.map((c) => c.id));
      }
    };
    const loops = pools.flatMap((pool) => [drain(pool), drain(pool), drain(pool), drain(pool)]);
    const claims = (await Promise.all(loops)).flat();
    // SKIP LOCKED may let a loop stop while rows are locked by another; sweep what is left.
    claims.push(...(await claimDueDeliveries(h.deps.sql, 100, LONG_LEASE)).map((c) => c.id));
    assertEquals(claims.length, 80);
    assertEquals(new Set(claims).size, 80, "a delivery was handed out twice");
    const rows = await deliveries(h);
    assert(rows.every((r) => r.attempt_count === 1), "each was claimed exactly once");
    assertEquals(await claimDueDeliveries(h.deps.sql, 100, LONG_LEASE), []);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
});

Deno.test("claimDueDeliveries() hands a delivery out again once its lease has expired", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const subscriptionId = await subscribed(h, shop);
  const event = busEvent(shop.organizationId);
  await recordEvents(h.deps.sql, [event]);
  const [row] = await deliveries(h);

  const first = await claimOne(h.deps.sql, row!.id, 400);
  assertEquals(
    { attempt: first.attempt, subscriptionId: first.subscriptionId, eventId: first.eventId },
    { attempt: 1, subscriptionId, eventId: event.id },
  );
  assertEquals(first.event.type, "quote.created");
  assertEquals(first.event.data, event.data);
  // Held while the lease lasts...
  assertEquals(await claimDueDeliveries(h.deps.sql, 10, 400), []);
  await sleep(500);
  // ...and taken over after it, as the next attempt.
  const second = await claimOne(h.deps.sql, row!.id, LONG_LEASE);
  assertEquals(second.attempt, 2);
  assertEquals((await delivery(h, row!.id)).status, "pending");
  assertEquals(await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE), []);
});

Deno.test("claimDueDeliveries() is not held up by due deliveries of a revoked subscription", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const revokedSubscription = await subscribed(h, shop);
  const active = await subscribed(h, owner(shop.organizationId), "quote.updated");
  const stuck = busEvent(shop.organizationId, "quote.created");
  await recordEvents(h.deps.sql, [stuck]);
  await revokeCredential(h.deps.sql, keyOf(shop));
  // A delivery of the revoked subscription that is still due: what a recordEvents() whose
  // fan-out read the subscription just before revokeCredential() committed leaves behind (and
  // what the in-flight attempt in the recordAttempt() test below leaves behind).
  await h.sql`
    UPDATE deliveries SET status = 'pending', next_attempt_at = now() - interval '1 minute',
           last_failure_reason = NULL
    WHERE subscription_id = ${revokedSubscription}`;
  const waiting = busEvent(shop.organizationId, "quote.updated");
  await recordEvents(h.deps.sql, [waiting]);
  const [wanted] = await h.sql<{ id: string }[]>`
    SELECT id FROM deliveries WHERE subscription_id = ${active}`;

  // One free slot: it must go to the active subscription's delivery, not be spent on the
  // revoked one (which is locked, not updated, and so comes first again on every claim).
  const claimed = await claimDueDeliveries(h.deps.sql, 1, LONG_LEASE);
  assertEquals(claimed.map((c) => c.id), [wanted!.id]);
});

// ---------------------------------------------------------------------------------------------
// recordAttempt

Deno.test("recordAttempt() moves a delivery through the retry schedule", async (t) => {
  await using h = await webhooksHarness();
  const shop = owner();
  await subscribed(h, shop);
  const newDelivery = async (): Promise<string> => {
    const event = busEvent(shop.organizationId);
    await recordEvents(h.deps.sql, [event]);
    const [row] = await h.sql<{ id: string }[]>`
      SELECT id FROM deliveries WHERE event_id = ${event.id}`;
    return row!.id;
  };

  await t.step("a failed first attempt is retried after the first step", async () => {
    const id = await newDelivery();
    const claim = await claimOne(h.deps.sql, id);
    const before = Date.now();
    await recordAttempt(h.deps.sql, claim, failure(), SCHEDULE);
    const after = Date.now();
    const row = await delivery(h, id);
    assertEquals([row.status, row.attempt_count, row.last_failure_reason], [
      "retrying",
      1,
      "HTTP 503 from endpoint",
    ]);
    const next = row.next_attempt_at!.getTime();
    assert(
      next >= before + 200 - 50 && next <= after + 200 + 50,
      `next attempt ${next - after} ms after recording, expected about 200`,
    );
    // Not due until then; due after it.
    assertEquals(await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE), []);
    await sleep(Math.max(0, next - Date.now()) + 50);
    assertEquals((await claimOne(h.deps.sql, id)).attempt, 2);
  });

  await t.step("a failure after the last step fails the delivery", async () => {
    const id = await newDelivery();
    for (const [attempt, status] of [[1, "retrying"], [2, "retrying"], [3, "failed"]] as const) {
      const claim = await claimOne(h.deps.sql, id);
      assertEquals(claim.attempt, attempt);
      await recordAttempt(h.deps.sql, claim, failure(), SCHEDULE);
      const row = await delivery(h, id);
      assertEquals(row.status, status, `after attempt ${attempt}`);
      if (status === "failed") {
        assertEquals(row.next_attempt_at, null);
      } else {
        await makeDue(h, id);
      }
    }
    assertEquals(await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE), []);
    const attempts = await h.sql`
      SELECT attempt, succeeded, trigger FROM delivery_attempts WHERE delivery_id = ${id}
      ORDER BY attempt`;
    assertEquals(attempts.map((a) => [a.attempt, a.succeeded, a.trigger]), [
      [1, false, "automatic"],
      [2, false, "automatic"],
      [3, false, "automatic"],
    ]);
  });

  await t.step("a success, even after failures, is final", async () => {
    const id = await newDelivery();
    await recordAttempt(h.deps.sql, await claimOne(h.deps.sql, id), failure(), SCHEDULE);
    await makeDue(h, id);
    await recordAttempt(h.deps.sql, await claimOne(h.deps.sql, id), success(), SCHEDULE);
    const row = await delivery(h, id);
    assertEquals([row.status, row.next_attempt_at, row.last_failure_reason], [
      "succeeded",
      null,
      null,
    ]);
    assertEquals(await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE), []);
  });

  await t.step(
    "a stale claimer, whose claim was taken over, does not change the status",
    async () => {
      const id = await newDelivery();
      const stale = await claimOne(h.deps.sql, id, 50);
      await sleep(120);
      const current = await claimOne(h.deps.sql, id);
      assertEquals([stale.attempt, current.attempt], [1, 2]);
      const held = await delivery(h, id);

      // The stale one fails late: its attempt is kept, the delivery stays with the current claim.
      await recordAttempt(h.deps.sql, stale, failure(), SCHEDULE);
      assertEquals(await delivery(h, id), held);
      // ...nor does a stale success end the current claimer's attempt.
      await recordAttempt(h.deps.sql, stale, success(), SCHEDULE);
      assertEquals(await delivery(h, id), held);

      await recordAttempt(h.deps.sql, current, success(), SCHEDULE);
      assertEquals((await delivery(h, id)).status, "succeeded");
      // A stale failure arriving after the success changes nothing either.
      await recordAttempt(h.deps.sql, stale, failure(), SCHEDULE);
      assertEquals((await delivery(h, id)).status, "succeeded");
      const [attempts] = await h.sql`
      SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ${id}`;
      assertEquals(attempts?.n, 4);
    },
  );
});

Deno.test("recordAttempt() leaves a delivery failed when its key was revoked mid-attempt", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  await subscribed(h, shop);
  const event = busEvent(shop.organizationId);
  await recordEvents(h.deps.sql, [event]);
  const [row] = await deliveries(h);
  const inFlight = await claimOne(h.deps.sql, row!.id);
  // The key is revoked while the attempt is on the wire, and the attempt then fails.
  await revokeCredential(h.deps.sql, keyOf(shop));
  await recordAttempt(h.deps.sql, inFlight, failure(), SCHEDULE);

  const after = await delivery(h, row!.id);
  assertEquals([after.status, after.next_attempt_at], ["failed", null]);
  // The attempt itself is history and is kept.
  const [attempts] = await h.sql`
    SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ${row!.id}`;
  assertEquals(attempts?.n, 1);
});

Deno.test("recordAttempts() records several attempts in one statement, each as recordAttempt() would", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  await subscribed(h, shop);
  const batch = [busEvent(shop.organizationId), busEvent(shop.organizationId)];
  const late = busEvent(shop.organizationId);
  await recordEvents(h.deps.sql, [...batch, late]);
  const claims = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  assertEquals(claims.length, 3);
  const of = (event: { id: string }) => claims.find((c) => c.eventId === event.id)!;
  // The third delivery's claim ran out and another worker took it over: the first claim's
  // attempt is stale, and only adds its attempt.
  await makeDue(h, of(late).id);
  const current = await claimOne(h.deps.sql, of(late).id);

  await recordAttempts(h.deps.sql, [
    { delivery: of(batch[0]!), attempt: success() },
    { delivery: of(batch[1]!), attempt: failure() },
    { delivery: of(late), attempt: success() },
  ], SCHEDULE);

  assertEquals((await delivery(h, of(batch[0]!).id)).status, "succeeded");
  const failed = await delivery(h, of(batch[1]!).id);
  assertEquals([failed.status, failed.last_failure_reason], ["retrying", "HTTP 503 from endpoint"]);
  assert(failed.next_attempt_at !== null, "a retry is scheduled");
  const taken = await delivery(h, current.id);
  assertEquals([taken.status, taken.attempt_count], ["pending", 2]);
  const [attempts] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM delivery_attempts`;
  assertEquals(attempts?.n, 3, "every attempt is recorded, the stale one too");
});

Deno.test("claimDueDeliveries() hands out the subscription's valid signing secrets, newest first", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const subscriptionId = await subscribed(h, shop);
  const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
  const rotated = await asOrganization(
    shop.organizationId,
    () => rotateSecret(h.deps.sql, box, shop, subscriptionId),
  );
  await recordEvents(h.deps.sql, [busEvent(shop.organizationId)]);
  const [claim] = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  const opened = await Promise.all(claim!.sealedSecrets.map((sealed) => box.open(sealed)));
  assertEquals(opened.length, 2, "the new secret and the one it replaced, during the overlap");
  assertEquals(opened[0], rotated.secret);
  assertEquals(
    opened,
    await asOrganization(
      shop.organizationId,
      () => signingSecrets(h.deps.sql, box, subscriptionId),
    ),
  );

  // An expired secret no longer signs.
  await h.sql`UPDATE signing_secrets SET expires_at = now() WHERE expires_at IS NOT NULL`;
  await makeDue(h, claim!.id);
  const [again] = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  assertEquals(
    await Promise.all(again!.sealedSecrets.map((sealed) => box.open(sealed))),
    [rotated.secret],
  );
});

Deno.test("purgeOldEvents() removes events past the retention with their deliveries", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  await subscribed(h, shop, "quote.created");
  const [old, recent] = [busEvent(shop.organizationId), busEvent(shop.organizationId)];
  await recordEvents(h.deps.sql, [old!, recent!]);
  await h.sql`UPDATE events SET recorded_at = now() - interval '31 days' WHERE id = ${old!.id}`;
  assertEquals(await purgeOldEvents(h.deps.sql), 1);
  const left = await h.sql<{ id: string }[]>`SELECT id FROM events`;
  assertEquals(left.map((r) => r.id), [recent!.id]);
  assertEquals((await deliveries(h)).length, 1, "the old event's delivery went with it");
});

Deno.test("claimFailedDelivery() waits for a revocation in flight, then refuses the replay", async () => {
  await using h = await webhooksHarness();
  const shop = owner();
  const subscriptionId = await subscribed(h, shop);
  await recordEvents(h.deps.sql, [busEvent(shop.organizationId)]);
  const [row] = await deliveries(h);
  await h.sql`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ${
    row!.id
  }`;
  let state = "pending";
  let replay: Promise<ClaimedDelivery> | undefined;
  // A revocation that has stopped the subscription and not committed yet (revokeCredential's
  // first write), while the integrator asks for the replay.
  await h.sql.begin(async (tx) => {
    await tx`UPDATE subscriptions SET credential_revoked_at = now() WHERE id = ${subscriptionId}`;
    replay = asOrganization(
      shop.organizationId,
      () => claimFailedDelivery(h.deps.sql, subscriptionId, row!.id, LONG_LEASE),
    );
    replay.then(() => state = "claimed", () => state = "refused");
    await sleep(500);
    // Read without waiting for the subscription, the check found it active and claimed.
    assertEquals(state, "pending", "the replay waits for the revocation to settle");
  });
  await assert.rejects(
    replay!,
    (error) =>
      error instanceof ApiError && error.code === "conflict" &&
      error.message.endsWith("the subscribing credential is revoked"),
  );
  assertEquals((await delivery(h, row!.id)).status, "failed");
});

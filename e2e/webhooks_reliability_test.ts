/**
 * Webhook delivery under failure, end to end: real processes, real HTTP receivers on loopback,
 * signatures verified with the `standardwebhooks` package (never with the project's own signing
 * code). Each test boots its own stack. Only generous deadlines for "eventually delivered"; no
 * assertion here is about speed.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  type ReceivedRequest,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  type WebhookReceiver,
} from "@printshop/shared/testing";
import { type Mokapi, startMokapi } from "@printshop/shared/testing/mokapi";
import type { Sql } from "@printshop/shared/db";
import type { WebhookDelivery as Delivery } from "@printshop/shared/contracts/webhooks";
import { data, eventually, type Json, openDb, send, verify } from "./_webhooks.ts";

const QUOTE_TYPES = ["quote.created", "quote.updated"];

/** Subscribes `url` to `event`; returns the subscription id and its signing secret. */
async function subscribe(
  stack: TestStack,
  key: string,
  url: string,
  event: string,
): Promise<{ id: string; secret: string }> {
  const sub = data(await send(stack, key, 201, "POST", "/v1/webhooks", { url, event }));
  assert(typeof sub.secret === "string" && sub.secret.startsWith("whsec_"));
  return { id: sub.id as string, secret: sub.secret };
}

const webhookIdOf = (request: ReceivedRequest): string => request.headers.get("webhook-id") ?? "";

async function history(stack: TestStack, key: string, webhookId: string): Promise<Delivery[]> {
  const page = data(await send(stack, key, 200, "GET", `/v1/webhooks/${webhookId}/deliveries`));
  return page.items as Delivery[];
}

/** The ids of an organisation's events of `types`, straight from the quotes service's outbox. */
async function outboxIds(sql: Sql, organizationId: string, types: string[]): Promise<Set<string>> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM quotes.outbox WHERE organization_id = ${organizationId} AND type = ANY(${types})`;
  return new Set(rows.map((r) => r.id));
}

const missingFrom = (expected: Set<string>, seen: Set<string>): string[] =>
  [...expected].filter((id) => !seen.has(id));

/**
 * Checks what a receiver got against the events that should have reached it: every event at
 * least once, no id that is not one of them, each request signed with its subscription's secret
 * and carrying that event, and a duplicate identical to the first copy (same id, same body).
 * Returns how many requests were duplicates.
 */
function assertDeliveredOnceOrMore(
  received: readonly ReceivedRequest[],
  expected: Set<string>,
  secretOf: (type: string) => string,
): number {
  const bodyById = new Map<string, string>();
  const idByBody = new Map<string, string>();
  for (const request of received) {
    const id = webhookIdOf(request);
    assert(expected.has(id), `the receiver got an unknown webhook-id "${id}"`);
    const type = (JSON.parse(request.body) as Json).type as string;
    const payload = verify(secretOf(type), request);
    assertEquals(payload.type, type);
    const firstBody = bodyById.get(id);
    if (firstBody !== undefined) {
      assertEquals(request.body, firstBody, `a duplicate of ${id} carries the same body`);
    }
    bodyById.set(id, request.body);
    const firstId = idByBody.get(request.body);
    if (firstId !== undefined) {
      assertEquals(id, firstId, "the same event delivered twice keeps its webhook-id");
    }
    idByBody.set(request.body, id);
  }
  assertEquals(missingFrom(expected, new Set(bodyById.keys())), [], "every event arrived");
  assertEquals(bodyById.size, expected.size);
  return received.length - bodyById.size;
}

/** Runs `task(i)` for i in 0..count-1, at most `concurrency` at a time. */
async function pool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

Deno.test("an endpoint that is down or failing gets its deliveries on a retry", async (t) => {
  await using stack: TestStack = await startTestStack({
    // Five attempts in about nine seconds: 1 + 4 retries.
    env: { WEBHOOK_RETRY_SCHEDULE: "1s,1s,2s,5s", WEBHOOK_TIMEOUT_MS: "3000" },
  });
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const shop = await stack.tenant();
  const sub = await subscribe(stack, shop.apiKey, receiver.url, "quote.created");
  let firstDelivery: Delivery | undefined;

  await t.step("a refused connection is retried until the receiver listens again", async () => {
    await receiver.stop();
    const quote = data(
      await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: "Receiver down" }),
    );
    const refused = await eventually(
      "a refused attempt in the delivery history",
      async () => {
        const [delivery] = await history(stack, shop.apiKey, sub.id);
        return delivery && delivery.attempts.length > 0 ? delivery : undefined;
      },
      15_000,
    );
    assertEquals(refused.status, "retrying");
    assertEquals(refused.eventType, "quote.created");
    assertEquals(refused.lastFailureReason, "connection refused");
    assert(refused.nextAttemptAt !== null, "a retry is scheduled");
    const [first] = refused.attempts;
    assertEquals(first!.succeeded, false);
    assertEquals(first!.httpStatus, null);
    assertEquals(first!.failureReason, "connection refused");
    assertEquals(receiver.received.length, 0);

    await receiver.start();
    const [request] = await receiver.waitFor(1, { timeoutMs: 30_000 });
    const payload = verify(sub.secret, request!);
    assertEquals(payload.type, "quote.created");
    assertEquals((payload.data as Json).id, quote.id);
    assertEquals(webhookIdOf(request!), refused.eventId);

    const done = await eventually(
      "the delivery to be recorded as succeeded",
      async () => {
        const delivery = (await history(stack, shop.apiKey, sub.id)).find((d) =>
          d.id === refused.id
        );
        return delivery?.status === "succeeded" ? delivery : undefined;
      },
      15_000,
    );
    assert(done.attempts.length >= 2, `${done.attempts.length} attempts`);
    const last = done.attempts.at(-1)!;
    assertEquals(last.succeeded, true);
    assertEquals(last.httpStatus, 204);
    assertEquals(last.failureReason, null);
    assertEquals(last.trigger, "automatic");
    for (const attempt of done.attempts.slice(0, -1)) {
      assertEquals(attempt.succeeded, false);
      assertEquals(attempt.failureReason, "connection refused");
    }
    assertEquals(done.attempts.map((a) => a.attempt), done.attempts.map((_, i) => i + 1));
    assertEquals(done.lastHttpStatus, 204);
    assertEquals(done.lastFailureReason, null);
    assertEquals(done.nextAttemptAt, null);
    firstDelivery = done;
  });

  let failed: Delivery | undefined;

  await t.step("an endpoint answering 503 is retried until the schedule is used up", async () => {
    receiver.respondWith(503);
    const before = receiver.received.length;
    const quote = data(
      await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: "Receiver 503" }),
    );
    failed = await eventually(
      "the delivery to fail for good",
      async () => {
        const delivery = (await history(stack, shop.apiKey, sub.id)).find((d) =>
          d.id !== firstDelivery!.id
        );
        return delivery?.status === "failed" ? delivery : undefined;
      },
      45_000,
      async () => JSON.stringify(await history(stack, shop.apiKey, sub.id)),
    );
    assertEquals(failed.attempts.length, 5, "the first attempt and one per schedule step");
    for (const attempt of failed.attempts) {
      assertEquals(attempt.succeeded, false);
      assertEquals(attempt.httpStatus, 503);
      assertEquals(attempt.failureReason, "HTTP 503 from endpoint");
      assertEquals(attempt.trigger, "automatic");
    }
    assertEquals(failed.lastHttpStatus, 503);
    assertEquals(failed.lastFailureReason, "HTTP 503 from endpoint");
    assertEquals(failed.nextAttemptAt, null);
    const attempts = receiver.received.slice(before);
    assertEquals(attempts.length, 5);
    for (const request of attempts) {
      assertEquals(webhookIdOf(request), failed.eventId);
      assertEquals((verify(sub.secret, request).data as Json).id, quote.id);
    }
  });

  await t.step("a failed delivery is replayed at once on request", async () => {
    receiver.respondWith(204);
    const before = receiver.received.length;
    const originalId = webhookIdOf(receiver.received[before - 1]!);
    const replayed = data(
      await send(
        stack,
        shop.apiKey,
        200,
        "POST",
        `/v1/webhooks/${sub.id}/deliveries/${failed!.id}/retry`,
      ),
    ) as unknown as Delivery;
    assertEquals(replayed.id, failed!.id);
    assertEquals(replayed.status, "succeeded");
    assertEquals(replayed.attempts.length, 6);
    const last = replayed.attempts.at(-1)!;
    assertEquals(last.trigger, "manual");
    assertEquals(last.succeeded, true);
    assertEquals(last.httpStatus, 204);
    // The replay was sent before the answer came back, not queued for later.
    const replays = receiver.received.slice(before);
    assertEquals(replays.length, 1);
    assertEquals(webhookIdOf(replays[0]!), originalId);
    assertEquals(webhookIdOf(replays[0]!), failed!.eventId);
    assertEquals(verify(sub.secret, replays[0]!).type, "quote.created");
  });

  await t.step("replaying a succeeded delivery is 409; an unknown one is 404", async () => {
    for (const delivery of [failed!, firstDelivery!]) {
      const conflict = await send(
        stack,
        shop.apiKey,
        409,
        "POST",
        `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/retry`,
      );
      assertEquals(conflict.error, "conflict");
    }
    const unknown = await send(
      stack,
      shop.apiKey,
      404,
      "POST",
      `/v1/webhooks/${sub.id}/deliveries/${crypto.randomUUID()}/retry`,
    );
    assertEquals(unknown.error, "not_found");
  });
});

Deno.test("a webhooks service killed mid-stream and restarted loses no event", async () => {
  await using stack: TestStack = await startTestStack({
    // A delivery in flight at the kill is claimed for its timeout + 15 s, then retried.
    env: { WEBHOOK_RETRY_SCHEDULE: "1s,1s,2s,5s,10s", WEBHOOK_TIMEOUT_MS: "2000" },
    processEnv: { gateway: { RATE_LIMIT_PER_MINUTE: "1000000" } },
  });
  await using receiver: WebhookReceiver = await startWebhookReceiver({ delayMs: 50 });
  await using db = openDb(stack);
  const shop = await stack.tenant();
  const secrets: Record<string, string> = {};
  for (const event of QUOTE_TYPES) {
    secrets[event] = (await subscribe(stack, shop.apiKey, receiver.url, event)).secret;
  }

  const CHANGES = 150;
  const KILL_AT = 50;
  const RESTART_AT = 100;
  const quoteIds: string[] = [];
  let receivedBeforeKill = 0;
  for (let i = 0; i < CHANGES; i++) {
    if (i === KILL_AT) {
      // Deliveries run on their own chain; make sure some are under way before the kill.
      await receiver.waitFor(1, { timeoutMs: 30_000 });
      receivedBeforeKill = receiver.received.length;
      await stack.kill("webhooks", "SIGKILL");
    }
    if (i === RESTART_AT) await stack.restart("webhooks");
    if (i % 5 === 0) {
      const quote = data(
        await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: `Q${i}` }),
      );
      quoteIds.push(quote.id as string);
    } else {
      const id = quoteIds[i % quoteIds.length]!;
      await send(stack, shop.apiKey, 200, "PATCH", `/v1/quotes/${id}`, { reference: `R${i}` });
    }
  }
  assert(receivedBeforeKill > 0, "deliveries were under way before the kill");

  const expected = await outboxIds(db.sql, shop.organizationId, QUOTE_TYPES);
  assertEquals(expected.size, CHANGES);
  // Every delivery recorded as succeeded, so no attempt is still in flight when we count.
  await eventually(
    "every event to reach the receiver and every delivery to succeed",
    async () => {
      const seen = new Set(receiver.received.map(webhookIdOf));
      if (missingFrom(expected, seen).length > 0) return undefined;
      const [row] = await db.sql<{ succeeded: number }[]>`
        SELECT count(*)::int AS succeeded FROM webhooks.deliveries
        WHERE event_id = ANY(${[...expected]}) AND status = 'succeeded'`;
      return row!.succeeded === CHANGES ? true : undefined;
    },
    90_000,
    async () => {
      const seen = new Set(receiver.received.map(webhookIdOf));
      const statuses = await db.sql<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM webhooks.deliveries
        WHERE event_id = ANY(${[...expected]}) GROUP BY status`;
      const recorded = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM webhooks.events WHERE id = ANY(${[...expected]})`;
      return `${missingFrom(expected, seen).length} of ${expected.size} never received; ` +
        `${recorded[0]!.n} recorded in webhooks.events; deliveries ${JSON.stringify(statuses)}`;
    },
  );
  const duplicates = assertDeliveredOnceOrMore(receiver.received, expected, (t) => secrets[t]!);
  console.log(`  ${receiver.received.length} requests, ${duplicates} duplicate(s) after the kill`);
});

/**
 * The Kafka transport through a broker outage, against Mokapi. Two limits of Mokapi 0.52 (not of
 * Kafka) shape this test, and the stack's processes cannot be tuned around them: `openEventBus`
 * passes no `consumer` or `producer` options and no environment variable sets them.
 * - It misreads a produce request holding several records when a record other than the last
 *   has a value over about 512 bytes ("invalid json format: invalid character '0' after
 *   top-level value", answered as INVALID_RECORD), whether or not the producer is idempotent;
 *   a quote.created or quote.updated event is about 840 bytes. The relay would offer that batch
 *   for ever. So quotes are created one at a time, each delivered before the next, and the
 *   changes made during the outage are deletions (quote.deleted is about 200 bytes).
 * - It refuses an idempotent producer's second batch of several records to a partition (out of
 *   order sequence number). A failed publish replaces the producer, so the batch that drains
 *   the outbox after the restart is the new producer's first.
 * Mokapi also forgets every message and committed offset when it stops, so the broker is stopped
 * first, the changes are made while it is down, and only they are expected after the restart.
 */
Deno.test("webhooks over Kafka: changes made while the broker is down are delivered", async (t) => {
  await using mokapi: Mokapi = await startMokapi();
  await using stack: TestStack = await startTestStack({
    env: { KAFKA_BROKERS: mokapi.brokers.join(","), WEBHOOK_RETRY_SCHEDULE: "1s,1s,2s,5s" },
  });
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  await using db = openDb(stack);
  const shop = await stack.tenant();
  const TYPES = ["quote.created", "quote.deleted"];
  const secrets: Record<string, string> = {};
  for (const event of TYPES) {
    secrets[event] = (await subscribe(stack, shop.apiKey, receiver.url, event)).secret;
  }
  const quoteIds: string[] = [];
  let before = new Set<string>();

  await t.step("quotes are delivered through Kafka", async () => {
    for (let i = 0; i < 3; i++) {
      const quote = data(
        await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: `Kafka ${i}` }),
      );
      quoteIds.push(quote.id as string);
      // The first delivery waits for the consumer group to form.
      const [request] = (await receiver.waitFor(i + 1, { timeoutMs: 60_000 })).slice(i);
      const payload = verify(secrets["quote.created"]!, request!);
      assertEquals(payload.type, "quote.created");
      assertEquals((payload.data as Json).id, quote.id);
    }
    before = await outboxIds(db.sql, shop.organizationId, TYPES);
    assertEquals(before, new Set(receiver.received.map(webhookIdOf)));
    // The relay marks a batch only after the broker's acknowledgement, which can come after the
    // consumer has already been handed the events.
    await eventually("everything so far to be marked published", async () => {
      const [unpublished] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM quotes.outbox
        WHERE organization_id = ${shop.organizationId} AND published_at IS NULL`;
      return unpublished!.n === 0 ? true : undefined;
    }, 15_000);
  });

  let during = new Set<string>();

  await t.step("with the broker stopped, changes wait in the outbox", async () => {
    await mokapi.stop();
    for (const id of quoteIds) {
      await send(stack, shop.apiKey, 200, "DELETE", `/v1/quotes/${id}`);
    }
    const all = await outboxIds(db.sql, shop.organizationId, TYPES);
    during = new Set([...all].filter((id) => !before.has(id)));
    assertEquals(during.size, quoteIds.length);
    // Once the relay has tried and failed, the rows are still unpublished.
    await eventually(
      "the quotes relay to report that it cannot publish",
      async () => (await stack.logs()).includes("outbox relay cannot publish") ? true : undefined,
      30_000,
    );
    const rows = await db.sql<{ id: string; published_at: Date | null }[]>`
      SELECT id, published_at FROM quotes.outbox WHERE id = ANY(${[...during]})`;
    assertEquals(rows.length, during.size);
    assertEquals(rows.filter((r) => r.published_at !== null), []);
  });

  await t.step("after the broker restarts, every change is delivered", async () => {
    await mokapi.restart();
    await eventually(
      "every change made during the outage to reach the receiver",
      () => {
        const seen = new Set(receiver.received.map(webhookIdOf));
        return missingFrom(during, seen).length === 0 ? true : undefined;
      },
      60_000,
      async () => {
        const seen = new Set(receiver.received.map(webhookIdOf));
        const unpublished = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM quotes.outbox
          WHERE id = ANY(${[...during]}) AND published_at IS NULL`;
        const recorded = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM webhooks.events WHERE id = ANY(${[...during]})`;
        const logs = await Deno.readTextFile(`${stack.logDir}/quotes.log`).catch(() => "");
        const tail = logs.split("\n").filter((l) => /kafka|relay/i.test(l)).slice(-6);
        return `${missingFrom(during, seen).length} of ${during.size} not received; ` +
          `${unpublished[0]!.n} still unpublished in quotes.outbox; ` +
          `${recorded[0]!.n} recorded in webhooks.events; quotes log:\n${tail.join("\n")}`;
      },
    );
    const deleted = receiver.received.filter((r) => during.has(webhookIdOf(r)));
    assertEquals(
      new Set(deleted.map((r) => (verify(secrets["quote.deleted"]!, r).data as Json).id)),
      new Set(quoteIds),
    );
    assertDeliveredOnceOrMore(
      receiver.received,
      new Set([...before, ...during]),
      (type) => secrets[type]!,
    );
  });
});

Deno.test("a burst of 1,000 events reaches each of two subscriptions once per event", async () => {
  await using stack: TestStack = await startTestStack({
    processEnv: { gateway: { RATE_LIMIT_PER_MINUTE: "1000000" } },
  });
  await using first: WebhookReceiver = await startWebhookReceiver();
  await using second: WebhookReceiver = await startWebhookReceiver();
  await using db = openDb(stack);
  const shop = await stack.tenant();
  const subs = [
    await subscribe(stack, shop.apiKey, first.url, "quote.created"),
    await subscribe(stack, shop.apiKey, second.url, "quote.created"),
  ];

  const EVENTS = 1_000;
  await pool(EVENTS, 20, async (i) => {
    await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: `Burst ${i}` });
  });
  const expected = await outboxIds(db.sql, shop.organizationId, ["quote.created"]);
  assertEquals(expected.size, EVENTS);

  const subIds = subs.map((s) => s.id);
  await eventually(
    "both receivers to get every event and every delivery to succeed",
    async () => {
      for (const receiver of [first, second]) {
        const seen = new Set(receiver.received.map(webhookIdOf));
        if (missingFrom(expected, seen).length > 0) return undefined;
      }
      const [row] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM webhooks.deliveries
        WHERE subscription_id = ANY(${subIds}) AND status = 'succeeded'`;
      return row!.n >= 2 * EVENTS ? true : undefined;
    },
    90_000,
    async () => {
      const missing = [first, second].map((r) =>
        missingFrom(expected, new Set(r.received.map(webhookIdOf))).length
      );
      const statuses = await db.sql<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM webhooks.deliveries
        WHERE subscription_id = ANY(${subIds}) GROUP BY status`;
      return `missing per receiver ${JSON.stringify(missing)}; deliveries ${
        JSON.stringify(statuses)
      }`;
    },
  );

  [first, second].forEach((receiver, i) => {
    assertDeliveredOnceOrMore(receiver.received, expected, () => subs[i]!.secret);
  });

  const rows = await db.sql<{ subscription_id: string; event_id: string; status: string }[]>`
    SELECT subscription_id, event_id, status FROM webhooks.deliveries
    WHERE subscription_id = ANY(${subIds})`;
  assertEquals(rows.length, 2 * EVENTS, "one delivery row per subscription and event");
  assertEquals(rows.filter((r) => r.status !== "succeeded"), []);
  for (const sub of subs) {
    const events = rows.filter((r) => r.subscription_id === sub.id).map((r) => r.event_id);
    assertEquals(events.length, EVENTS);
    assertEquals(new Set(events).size, EVENTS, "no event twice for one subscription");
    assertEquals(missingFrom(expected, new Set(events)), [], "every event has a delivery");
  }
});

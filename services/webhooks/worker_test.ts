/**
 * The delivery worker's timing without polls: a due retry is sent when it falls due, a delivery
 * queued earlier is sent when its time comes, and what a lost notification hid is found by the
 * safety poll or when the LISTEN connection is back.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { Stoppable } from "@printshop/shared/service-main";
import { sleep } from "@printshop/shared/net";
import { startWebhookReceiver, type WebhookReceiver } from "@printshop/shared/testing";
import type { ServiceHarness } from "@printshop/shared/testing";
import { dispatchDepsOf } from "./app.ts";
import type { Config } from "./config.ts";
import { recordEvents } from "./store/events.ts";
import type { Owner } from "./store/subscriptions.ts";
import { busEvent, subscribedId, webhooksHarness } from "./test_fixtures.ts";
import { startDeliveryWorker, type WorkerOptions } from "./worker.ts";

/** Polls that would not run within a test: only the worker's own timing can send in time. */
const NO_POLL: WorkerOptions = { pollIntervalMs: 60_000, idlePollMaxMs: 60_000 };

async function setup(options: WorkerOptions, overrides: Partial<Config> = {}) {
  const h = await webhooksHarness(overrides);
  const receiver = await startWebhookReceiver();
  const owner: Owner = {
    organizationId: crypto.randomUUID(),
    credentialKind: "tenant_key",
    credentialId: crypto.randomUUID(),
  };
  const subscriptionId = await subscribedId(h, owner, {
    url: receiver.url,
    includesCosts: false,
  });
  let worker: Stoppable | undefined;
  return {
    h,
    receiver,
    owner,
    subscriptionId,
    async start() {
      worker = await startDeliveryWorker(await dispatchDepsOf(h.deps)(), options);
    },
    async [Symbol.asyncDispose]() {
      await worker?.stop();
      await receiver[Symbol.asyncDispose]();
      await h.close();
    },
  };
}

/** Queues a delivery of a new event due in `dueInMs`, with no notification. */
async function queueSilently(
  h: ServiceHarness<Config>,
  subscriptionId: string,
  organizationId: string,
  dueInMs: number,
): Promise<string> {
  const event = busEvent(organizationId);
  await h.sql`
    INSERT INTO events (id, organization_id, type, aggregate_id, occurred_at, data)
    VALUES (${event.id}, ${organizationId}, ${event.type}, ${event.aggregateId},
            ${event.occurredAt}, ${h.sql.json(event.data as Parameters<typeof h.sql.json>[0])})`;
  await h.sql`
    INSERT INTO deliveries (organization_id, subscription_id, event_id, next_attempt_at)
    VALUES (${organizationId}, ${subscriptionId}, ${event.id},
            now() + make_interval(secs => ${dueInMs / 1000}))`;
  return event.id;
}

const ids = (receiver: WebhookReceiver): string[] =>
  receiver.received.map((r) => r.headers.get("webhook-id") ?? "");

Deno.test("the worker sends a failed attempt's retry when it falls due, without polling", async () => {
  await using env = await setup(NO_POLL, { WEBHOOK_RETRY_SCHEDULE: [500] });
  env.receiver.respondWith(() => env.receiver.received.length === 1 ? 503 : 204);
  await env.start();
  const event = busEvent(env.owner.organizationId);
  await recordEvents(env.h.deps.sql, [event]);
  await env.receiver.waitFor(2, { timeoutMs: 10_000 });
  assertEquals(ids(env.receiver), [event.id, event.id]);
});

Deno.test("the worker sends a delivery queued to fall due later when its time comes, without polling", async () => {
  await using env = await setup(NO_POLL);
  const later = await queueSilently(env.h, env.subscriptionId, env.owner.organizationId, 800);
  await env.start();
  await env.receiver.waitFor(1, { timeoutMs: 10_000 });
  assertEquals(ids(env.receiver), [later]);
});

Deno.test("the worker's safety poll sends a delivery whose notification was lost", async () => {
  await using env = await setup({ pollIntervalMs: 50, idlePollMaxMs: 200 });
  await env.start();
  await sleep(500); // idle long enough for the poll to back off to its cap
  const lost = await queueSilently(env.h, env.subscriptionId, env.owner.organizationId, 0);
  await env.receiver.waitFor(1, { timeoutMs: 10_000 });
  assertEquals(ids(env.receiver), [lost]);
});

Deno.test("the worker claims what was queued while its LISTEN connection was down once it is back", async () => {
  await using env = await setup(NO_POLL);
  await env.start();
  const notified = busEvent(env.owner.organizationId);
  await recordEvents(env.h.deps.sql, [notified]);
  await env.receiver.waitFor(1, { timeoutMs: 10_000 });
  const missed = await queueSilently(env.h, env.subscriptionId, env.owner.organizationId, 0);
  const dropped = await env.h.sql`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'webhooks'
      AND query ILIKE 'listen%'`;
  assertEquals(dropped.length, 1, "one LISTEN connection");
  await env.receiver.waitFor(2, { timeoutMs: 10_000 });
  assertEquals(ids(env.receiver), [notified.id, missed]);
});

Deno.test("the worker sends and records every delivery of a burst larger than its slots", async () => {
  await using env = await setup({ ...NO_POLL, concurrency: 2 });
  await env.start();
  const burst = Array.from({ length: 12 }, () => busEvent(env.owner.organizationId));
  await recordEvents(env.h.deps.sql, burst);
  await env.receiver.waitFor(12, { timeoutMs: 10_000 });
  assertEquals(new Set(ids(env.receiver)), new Set(burst.map((e) => e.id)));
  // Slots are given back before the attempts are recorded; the worker still records them all.
  let settled = { succeeded: 0, attempts: 0 };
  for (let i = 0; i < 100 && settled.succeeded < burst.length; i++) {
    await sleep(100);
    const [row] = await env.h.sql<{ succeeded: number; attempts: number }[]>`
      SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
             (SELECT count(*) FROM delivery_attempts)::int AS attempts
      FROM deliveries`;
    settled = row!;
  }
  assertEquals(settled, { succeeded: 12, attempts: 12 });
});

/**
 * The consumer's handling of a batch, driven through a stand-in bus: integrator-visible events
 * are recorded and fanned out, and the platform's internal events (`partner_grant.updated`)
 * change subscriptions in the order they arrived relative to the rest of the batch.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { BusEvent, EventBus, EventHandler } from "@printshop/shared/events";
import { createLogger } from "@printshop/shared/log";
import { startEventConsumer } from "./consumer.ts";
import { findSubscription, type Owner } from "./store/subscriptions.ts";
import { busEvent, subscribedId, webhooksHarness } from "./test_fixtures.ts";

/** A bus that hands the test the consumer's handler instead of fetching anything. */
function standInBus(): { bus: EventBus; handler: () => EventHandler } {
  let handle: EventHandler | null = null;
  const bus: EventBus = {
    transport: "embedded",
    publish: () => Promise.resolve(),
    subscribe: (options) => {
      handle = options.handle;
      return Promise.resolve({ stop: () => Promise.resolve() });
    },
    close: () => Promise.resolve(),
  };
  return {
    bus,
    handler: () => {
      assert(handle, "the consumer subscribed");
      return handle;
    },
  };
}

let clock = Date.parse("2030-01-01T00:00:00.000Z");
/** Each event here occurs a second after the one before, so their order is plain. */
const tick = (): Date => new Date(clock += 1_000);

const grantEvent = (app: Owner, scopes: string[]): BusEvent =>
  busEvent(app.organizationId, "partner_grant.updated", {
    appId: app.credentialId,
    organizationId: app.organizationId,
    scopes,
  }, tick());

Deno.test("the consumer applies partner_grant.updated between the events before and after it", async () => {
  await using h = await webhooksHarness();
  const { bus, handler } = standInBus();
  await startEventConsumer({ sql: h.sql, bus, logger: createLogger({ level: "error" }) });
  const app: Owner = {
    organizationId: crypto.randomUUID(),
    credentialKind: "partner",
    credentialId: crypto.randomUUID(),
  };
  const id = await subscribedId(h, app, {
    event: "quote.created",
    url: "http://93.184.216.34/hook",
    includesCosts: true,
  });

  // Before the grant narrows, after it, then restored: one batch, in that order.
  const before = busEvent(app.organizationId, "quote.created", { id: crypto.randomUUID() }, tick());
  const narrowed = grantEvent(app, ["webhooks.read", "webhooks.write"]);
  const during = busEvent(app.organizationId, "quote.created", { id: crypto.randomUUID() }, tick());
  await handler()([before, narrowed, during], "printshop.quotes");

  const subscription = await findSubscription(h.sql, app, id);
  assertEquals([subscription?.active, subscription?.includesCosts], [false, false]);
  const rows = await h.sql<{ event_id: string; status: string; last_failure_reason: string }[]>`
    SELECT event_id, status, last_failure_reason FROM deliveries WHERE subscription_id = ${id}`;
  // The event before the change was queued under the old rights, then failed by the change;
  // the one after it was recorded (for the event log) but never queued.
  assertEquals(rows.map((r) => [r.event_id, r.status, r.last_failure_reason]), [
    [before.id, "failed", "scope withdrawn: quotes.read"],
  ]);
  const events = await h.sql<{ id: string }[]>`SELECT id FROM events ORDER BY seq`;
  assertEquals(events.map((e) => e.id), [before.id, during.id], "internal events stay out");

  const restored = grantEvent(app, ["quotes.read", "costs.read", "webhooks.read"]);
  const afterwards = busEvent(
    app.organizationId,
    "quote.created",
    { id: crypto.randomUUID() },
    tick(),
  );
  await handler()([restored, afterwards], "printshop.gateway");
  const resumed = await findSubscription(h.sql, app, id);
  assertEquals([resumed?.active, resumed?.includesCosts], [true, false]);
  const queued = await h.sql<{ status: string }[]>`
    SELECT status FROM deliveries WHERE subscription_id = ${id} AND event_id = ${afterwards.id}`;
  assertEquals(queued.map((r) => r.status), ["pending"]);

  // Offered again (the transport's position was not committed): the older grant changes nothing.
  await handler()([narrowed], "printshop.gateway");
  assertEquals((await findSubscription(h.sql, app, id))?.active, true);
});

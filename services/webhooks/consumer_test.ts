/**
 * The consumer's handling of a batch, driven through a stand-in bus: integrator-visible events
 * are recorded and fanned out, and the platform's internal events (`partner_grant.updated`)
 * change subscriptions in the order they arrived relative to the rest of the batch.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { BusEvent, EventBus, EventHandler } from "@printshop/shared/events";
import { createLogger } from "@printshop/shared/log";
import { startEventConsumer } from "./consumer.ts";
import type { Owner } from "./store/subscriptions.ts";
import { busEvent, findOwned, subscribedId, webhooksHarness } from "./test_fixtures.ts";

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
  // On the service's own pool, as the process runs it: the runtime role.
  await startEventConsumer({ sql: h.deps.sql, bus, logger: createLogger({ level: "error" }) });
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

  const subscription = await findOwned(h, app, id);
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
  const resumed = await findOwned(h, app, id);
  assertEquals([resumed?.active, resumed?.includesCosts], [true, false]);
  const queued = await h.sql<{ status: string }[]>`
    SELECT status FROM deliveries WHERE subscription_id = ${id} AND event_id = ${afterwards.id}`;
  assertEquals(queued.map((r) => r.status), ["pending"]);

  // Offered again (the transport's position was not committed): the older grant changes nothing.
  await handler()([narrowed], "printshop.gateway");
  assertEquals((await findOwned(h, app, id))?.active, true);
});

Deno.test("the consumer records a batch of several organisations and applies api_key.revoked to its own", async () => {
  await using h = await webhooksHarness();
  const { bus, handler } = standInBus();
  await startEventConsumer({ sql: h.deps.sql, bus, logger: createLogger({ level: "error" }) });
  const organizationId = crypto.randomUUID();
  const key: Owner = {
    organizationId,
    credentialKind: "tenant_key",
    credentialId: crypto.randomUUID(),
  };
  // Another shop whose key has the same id: the revocation names its organisation, and only
  // that organisation's key is stopped.
  const other: Owner = { ...key, organizationId: crypto.randomUUID() };
  const mine = await subscribedId(h, key, { includesCosts: false });
  const theirs = await subscribedId(h, other, { includesCosts: false });

  const before = busEvent(organizationId, "quote.created", { id: crypto.randomUUID() }, tick());
  const elsewhere = busEvent(
    other.organizationId,
    "quote.created",
    { id: crypto.randomUUID() },
    tick(),
  );
  const revoked = busEvent(organizationId, "api_key.revoked", {
    id: key.credentialId,
    organizationId,
  }, tick());
  const after = busEvent(organizationId, "quote.created", { id: crypto.randomUUID() }, tick());
  await handler()([before, elsewhere, revoked, after], "printshop.quotes");

  assertEquals((await findOwned(h, key, mine)).active, false);
  assertEquals((await findOwned(h, other, theirs)).active, true);
  const rows = await h.sql<{ subscription_id: string; event_id: string; status: string }[]>`
    SELECT subscription_id, event_id, status FROM deliveries ORDER BY created_at, id`;
  assertEquals(rows.map((r) => [r.subscription_id, r.event_id, r.status]), [
    [mine, before.id, "failed"],
    [theirs, elsewhere.id, "pending"],
  ]);
  // Every organisation's events are in the log, in the batch's order.
  const events = await h.sql<{ id: string; organization_id: string }[]>`
    SELECT id, organization_id FROM events ORDER BY seq`;
  assertEquals(events.map((e) => [e.id, e.organization_id]), [
    [before.id, organizationId],
    [elsewhere.id, other.organizationId],
    [after.id, organizationId],
  ]);
});

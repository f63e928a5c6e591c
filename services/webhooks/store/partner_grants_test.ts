/**
 * A partner app's subscriptions follow the organisation's grant (`applyPartnerGrant`): losing an
 * area's read scope stops them and fails what was queued, regaining it resumes them, losing
 * costs.read leaves cost fields out for good, and an older grant arriving late changes nothing.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { BusEvent } from "@printshop/shared/events";
import type { ServiceHarness } from "@printshop/shared/testing";
import type { Config } from "../config.ts";
import {
  asOrganization,
  busEvent,
  findOwned,
  subscribedId,
  webhooksHarness,
} from "../test_fixtures.ts";
import { recordEvents } from "./events.ts";
import { claimDueDeliveries, claimFailedDelivery } from "./deliveries.ts";
import {
  applyPartnerGrant,
  listSubscriptions,
  type Owner,
  type PartnerGrantUpdate,
  subscribe,
} from "./subscriptions.ts";
import { createSecretBox } from "../delivery/secret_box.ts";
import { ApiError } from "@printshop/shared/http";

const LONG_LEASE = 60_000;
const EVERYTHING = ["quotes.read", "quotes.write", "costs.read", "webhooks.read", "webhooks.write"];
const WITHOUT_COSTS = EVERYTHING.filter((s) => s !== "costs.read");
const WITHOUT_QUOTES = EVERYTHING.filter((s) => s !== "quotes.read");

const partner = (organizationId: string = crypto.randomUUID()): Owner => ({
  organizationId,
  credentialKind: "partner",
  credentialId: crypto.randomUUID(),
});

/** An event carrying a cost field, so a test can see whether a delivery keeps it. */
const costedEvent = (organizationId: string, type?: string): BusEvent =>
  busEvent(organizationId, type, { id: crypto.randomUUID(), buyPrice: "4.00" });

/** Grant updates for one app and organisation, each later than the one before. */
function grants(who: Owner): (scopes: readonly string[]) => PartnerGrantUpdate {
  let at = Date.parse("2030-01-01T00:00:00.000Z");
  return (scopes) => ({
    eventId: crypto.randomUUID(),
    occurredAt: new Date(at += 1_000).toISOString(),
    appId: who.credentialId,
    organizationId: who.organizationId,
    scopes,
  });
}

interface DeliveryRow {
  id: string;
  status: string;
  next_attempt_at: Date | null;
  last_failure_reason: string | null;
}

async function deliveriesOf(
  h: ServiceHarness<Config>,
  subscriptionId: string,
): Promise<DeliveryRow[]> {
  return await h.sql<DeliveryRow[]>`
    SELECT id, status, next_attempt_at, last_failure_reason FROM deliveries
    WHERE subscription_id = ${subscriptionId} ORDER BY created_at, id`;
}

const activeOf = async (h: ServiceHarness<Config>, who: Owner, id: string): Promise<boolean> => {
  const subscription = await findOwned(h, who, id);
  assert(subscription, `subscription ${id} exists`);
  return subscription.active;
};

Deno.test("applyPartnerGrant() without the read scope stops the app's subscriptions there and fails what was queued", async () => {
  await using h = await webhooksHarness();
  const app = partner();
  const grant = grants(app);
  const created = await subscribedId(h, app, { event: "quote.created" });
  const variants = await subscribedId(h, app, { event: "quote_variant.created" });
  // Not this app's, or not in this organisation: untouched.
  const tenantKey: Owner = { ...partner(app.organizationId), credentialKind: "tenant_key" };
  const colleague = await subscribedId(h, tenantKey);
  const sameIdAsTenantKey: Owner = { ...tenantKey, credentialId: app.credentialId };
  const keyWithAppsId = await subscribedId(h, sameIdAsTenantKey);
  const elsewhere: Owner = { ...app, organizationId: crypto.randomUUID() };
  const otherOrganisation = await subscribedId(h, elsewhere);

  await recordEvents(h.deps.sql, [
    costedEvent(app.organizationId),
    costedEvent(app.organizationId, "quote_variant.created"),
    costedEvent(elsewhere.organizationId),
  ]);
  // One was already delivered: history stays as it was.
  await h.sql`
    UPDATE deliveries SET status = 'succeeded', next_attempt_at = NULL
    WHERE subscription_id = ${variants}`;
  // Another is waiting for a retry.
  await h.sql`UPDATE deliveries SET status = 'retrying' WHERE subscription_id = ${created}`;

  assertEquals(await applyPartnerGrant(h.deps.sql, grant(WITHOUT_QUOTES)), {
    applied: true,
    withdrawn: 2,
    resumed: 0,
    costsDropped: 0,
  });
  assertEquals(await activeOf(h, app, created), false);
  assertEquals(await activeOf(h, app, variants), false);
  // The list's `active` filter agrees with the subscriptions' own `active`.
  const activeFilter = (value: boolean) => ({
    filters: JSON.stringify([{ field: "active", op: "eq", value }]),
  });
  const listed = (active: boolean) =>
    asOrganization(
      app.organizationId,
      () => listSubscriptions(h.deps.sql, app, activeFilter(active), 100),
    );
  assertEquals((await listed(true)).totalCount, 0);
  assertEquals((await listed(false)).totalCount, 2);
  for (const [who, id] of [[tenantKey, colleague], [sameIdAsTenantKey, keyWithAppsId]] as const) {
    assertEquals(await activeOf(h, who, id), true);
  }
  assertEquals(await activeOf(h, elsewhere, otherOrganisation), true);

  assertEquals(
    (await deliveriesOf(h, created)).map((
      d,
    ) => [d.status, d.next_attempt_at, d.last_failure_reason]),
    [["failed", null, "scope withdrawn: quotes.read"]],
  );
  assertEquals((await deliveriesOf(h, variants)).map((d) => d.status), ["succeeded"]);

  // Nothing new is queued for the stopped subscriptions; the others still get theirs.
  const after = costedEvent(app.organizationId);
  assertEquals(await recordEvents(h.deps.sql, [after]), { recorded: 1, queued: 2 });
  assertEquals((await deliveriesOf(h, created)).length, 1);
  // A delivery still due for a stopped subscription (what a fan-out racing the withdrawal would
  // leave behind) is never handed out.
  await h.sql`
    UPDATE deliveries SET status = 'pending', next_attempt_at = now() - interval '1 minute'
    WHERE subscription_id = ${created}`;
  const claimed = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  // Two quote.created events for each of the two tenant-key subscriptions, one elsewhere.
  assertEquals(claimed.length, 5);
  assert(
    claimed.every((c) => c.subscriptionId !== created && c.subscriptionId !== variants),
    JSON.stringify(claimed),
  );

  // The same grant again withdraws nothing more.
  assertEquals(await applyPartnerGrant(h.deps.sql, grant(WITHOUT_QUOTES)), {
    applied: true,
    withdrawn: 0,
    resumed: 0,
    costsDropped: 0,
  });
});

Deno.test("applyPartnerGrant() with the read scope back resumes the subscriptions for new events only", async () => {
  await using h = await webhooksHarness();
  const app = partner();
  const grant = grants(app);
  const created = await subscribedId(h, app, { event: "quote.created" });
  await recordEvents(h.deps.sql, [costedEvent(app.organizationId)]);
  await applyPartnerGrant(h.deps.sql, grant(WITHOUT_QUOTES));
  const [failed] = await deliveriesOf(h, created);
  assertEquals(failed?.status, "failed");

  // While withdrawn, a failed delivery cannot be replayed by hand either.
  await assert.rejects(
    asOrganization(
      app.organizationId,
      () => claimFailedDelivery(h.deps.sql, created, failed!.id, LONG_LEASE),
    ),
    (error) =>
      error instanceof ApiError && error.code === "conflict" &&
      error.message.endsWith(
        "the partner app's grant no longer gives the read scope of this event",
      ),
  );

  assertEquals(await applyPartnerGrant(h.deps.sql, grant(EVERYTHING)), {
    applied: true,
    withdrawn: 0,
    resumed: 1,
    costsDropped: 0,
  });
  assertEquals(await activeOf(h, app, created), true);
  const fresh = costedEvent(app.organizationId);
  assertEquals(await recordEvents(h.deps.sql, [fresh]), { recorded: 1, queued: 1 });
  const rows = await deliveriesOf(h, created);
  assertEquals(rows.map((r) => r.status), ["failed", "pending"]);
  const claimed = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  assertEquals(claimed.map((c) => c.eventId), [fresh.id]);
  // The failed one is still failed, and now the integrator may replay it.
  const replay = await asOrganization(
    app.organizationId,
    () => claimFailedDelivery(h.deps.sql, created, failed!.id, LONG_LEASE),
  );
  assertEquals(replay.id, failed!.id);
});

Deno.test("applyPartnerGrant() without costs.read leaves cost fields out from now on, and never turns them back on", async () => {
  await using h = await webhooksHarness();
  const app = partner();
  const grant = grants(app);
  const variants = await subscribedId(h, app, {
    event: "quote_variant.created",
    includesCosts: true,
  });
  const withoutCosts = await subscribedId(h, app, { event: "quote.created", includesCosts: false });
  const tenantKey: Owner = { ...partner(app.organizationId), credentialKind: "tenant_key" };
  const colleague = await subscribedId(h, tenantKey, {
    event: "quote_variant.created",
    includesCosts: true,
  });
  // Queued while the app still held costs.read.
  const queued = costedEvent(app.organizationId, "quote_variant.created");
  await recordEvents(h.deps.sql, [queued]);

  assertEquals(await applyPartnerGrant(h.deps.sql, grant(WITHOUT_COSTS)), {
    applied: true,
    withdrawn: 0,
    resumed: 0,
    costsDropped: 1,
  });
  assertEquals((await findOwned(h, app, variants))?.includesCosts, false);
  assertEquals((await findOwned(h, app, variants))?.active, true);
  assertEquals((await findOwned(h, app, withoutCosts))?.includesCosts, false);
  assertEquals((await findOwned(h, tenantKey, colleague))?.includesCosts, true);

  // The delivery queued before the change goes out without cost fields too.
  const claimed = await claimDueDeliveries(h.deps.sql, 10, LONG_LEASE);
  const costsBySubscription = new Map(claimed.map((c) => [c.subscriptionId, c.includesCosts]));
  assertEquals(costsBySubscription.get(variants), false);
  assertEquals(costsBySubscription.get(colleague), true);

  // Regaining costs.read does not bring cost fields back (re-subscribing does).
  assertEquals(await applyPartnerGrant(h.deps.sql, grant(EVERYTHING)), {
    applied: true,
    withdrawn: 0,
    resumed: 0,
    costsDropped: 0,
  });
  assertEquals((await findOwned(h, app, variants))?.includesCosts, false);
});

Deno.test("a subscription the app makes after a narrower grant was applied starts within it", async () => {
  await using h = await webhooksHarness();
  const app = partner();
  const grant = grants(app);
  // The gateway still let the app through on its wider grant (its auth cache, or a request
  // already in flight).
  await applyPartnerGrant(h.deps.sql, grant(WITHOUT_QUOTES.filter((s) => s !== "costs.read")));
  const stopped = await subscribedId(h, app, { event: "quote.created", includesCosts: true });
  assertEquals(await activeOf(h, app, stopped), false);
  assertEquals((await findOwned(h, app, stopped)).includesCosts, false);
  assertEquals(await recordEvents(h.deps.sql, [costedEvent(app.organizationId)]), {
    recorded: 1,
    queued: 0,
  });

  // The read scope back, costs.read still missing: it resumes, still without cost fields.
  assertEquals((await applyPartnerGrant(h.deps.sql, grant(WITHOUT_COSTS))).resumed, 1);
  assertEquals(await activeOf(h, app, stopped), true);
  const costless = await subscribedId(h, app, { event: "quote_variant.created" });
  assertEquals((await findOwned(h, app, costless)).includesCosts, false);
  assertEquals(await activeOf(h, app, costless), true);

  // With everything granted, a new subscription gets what its credential holds.
  await applyPartnerGrant(h.deps.sql, grant(EVERYTHING));
  const full = await subscribedId(h, app, { event: "quote.updated", includesCosts: true });
  assertEquals((await findOwned(h, app, full)).includesCosts, true);
  // Another organisation's grant says nothing of this one.
  const elsewhere: Owner = { ...app, organizationId: crypto.randomUUID() };
  const there = await subscribedId(h, elsewhere, { includesCosts: true });
  assertEquals((await findOwned(h, elsewhere, there)).includesCosts, true);
});

Deno.test("subscribe() racing a narrowing applyPartnerGrant() never leaves the app an active subscription", async () => {
  await using h = await webhooksHarness();
  const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
  const organizationId = crypto.randomUUID();
  const apps = Array.from({ length: 40 }, () => partner(organizationId));
  for (const app of apps) {
    await Promise.all([
      asOrganization(organizationId, () =>
        subscribe(h.deps.sql, box, app, {
          event: "quote.created",
          url: `http://93.184.216.34/${app.credentialId}`,
          includesCosts: true,
        })),
      applyPartnerGrant(h.deps.sql, grants(app)(WITHOUT_QUOTES.filter((s) => s !== "costs.read"))),
    ]);
  }
  const kept = await h.sql<{ credential_id: string }[]>`
    SELECT credential_id FROM subscriptions
    WHERE organization_id = ${organizationId} AND (scope_withdrawn_at IS NULL OR includes_costs)`;
  assertEquals(kept.map((r) => r.credential_id), []);
});

Deno.test("applyPartnerGrant() ignores an update older than one already applied, and a repeat", async () => {
  await using h = await webhooksHarness();
  const app = partner();
  const grant = grants(app);
  const created = await subscribedId(h, app, { event: "quote.created" });
  const wide = grant(EVERYTHING);
  const narrow = grant(WITHOUT_QUOTES.filter((s) => s !== "costs.read"));

  assertEquals((await applyPartnerGrant(h.deps.sql, narrow)).applied, true);
  assertEquals(await activeOf(h, app, created), false);
  // The older, wider grant arrives late (released from quarantine, say): it must not resume.
  assertEquals(await applyPartnerGrant(h.deps.sql, wide), {
    applied: false,
    withdrawn: 0,
    resumed: 0,
    costsDropped: 0,
  });
  assertEquals(await activeOf(h, app, created), false);
  // The same event delivered again is ignored too.
  assertEquals((await applyPartnerGrant(h.deps.sql, narrow)).applied, false);

  // Two updates in the same millisecond apply in the order of their ids, as the relay sends them.
  const at = "2031-01-01T00:00:00.000Z";
  const first = {
    ...grant(EVERYTHING),
    occurredAt: at,
    eventId: "01900000-0000-7000-8000-000000000001",
  };
  const second = {
    ...grant(WITHOUT_QUOTES),
    occurredAt: at,
    eventId: "01900000-0000-7000-8000-000000000002",
  };
  assertEquals((await applyPartnerGrant(h.deps.sql, first)).applied, true);
  assertEquals(await activeOf(h, app, created), true);
  assertEquals((await applyPartnerGrant(h.deps.sql, second)).applied, true);
  assertEquals(await activeOf(h, app, created), false);
  assertEquals((await applyPartnerGrant(h.deps.sql, first)).applied, false);
  assertEquals(await activeOf(h, app, created), false);

  // Another organisation's grant to the same app keeps its own order.
  const elsewhere: Owner = { ...app, organizationId: crypto.randomUUID() };
  const theirs = await subscribedId(h, elsewhere, { event: "quote.created" });
  const old = { ...grants(elsewhere)(WITHOUT_QUOTES), occurredAt: "2020-01-01T00:00:00.000Z" };
  assertEquals((await applyPartnerGrant(h.deps.sql, old)).applied, true);
  assertEquals(await activeOf(h, elsewhere, theirs), false);
});

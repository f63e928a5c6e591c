/**
 * The webhooks service's lists and its claim keep their indexes under the row-level policies. As
 * the service runs them (the runtime role; a transaction that names the organisation, or the
 * platform's for the claim), over tables where one organisation's rows are a twentieth of the
 * whole, ANALYZEd: no statement reads subscriptions, deliveries or events whole.
 */
import assert from "node:assert/strict";
import type { Fragment, Queryable } from "@printshop/shared/db";
import { listOrderSql, type ListSpec, pageTally, rowConditions } from "@printshop/shared/db/pages";
import { parseFiltersParam } from "@printshop/shared/filters";
import {
  assertNoSeqScan,
  indexesUnder,
  planFor,
  type PlanNode,
  readsOf,
} from "@printshop/shared/testing";
import { webhooksHarness } from "./test_fixtures.ts";
import { ownedBy, type Owner, SUBSCRIPTION_LIST } from "./store/subscriptions.ts";
import { claimStatement, DELIVERY_LIST } from "./store/deliveries.ts";
import { purgeStatement } from "./store/events.ts";

/**
 * The statements offsetPage sends for a list (shared/db/pages.ts): the page, and its tally
 * counted and uncounted, with the list's conditions, order and a page of 50.
 */
function listStatements(
  q: Queryable,
  spec: ListSpec,
  base: Fragment,
  query:
    & { search?: string; filters?: string; sortField?: string; sortDirection?: "asc" | "desc" }
    & Record<string, unknown>,
): Fragment[] {
  const where = rowConditions(q, spec, base, {
    named: query,
    search: query.search,
    filters: parseFiltersParam(query.filters),
  });
  // The page, its count and its uncounted tally (count=false), as offsetPage sends them.
  return [
    q`SELECT ${q.unsafe(spec.select)} FROM ${q.unsafe(spec.from)} WHERE ${where}
      ORDER BY ${listOrderSql(q, spec, query)} LIMIT 50 OFFSET 0`,
    q`SELECT ${pageTally(q, spec.from, where, 50, true)}`,
    q`SELECT ${pageTally(q, spec.from, where, 50, false)}`,
  ];
}

const SHOPS = 20;
const SUBSCRIPTIONS_EACH = 400;
const EVENTS_EACH = 1500;

Deno.test("the webhook lists and the delivery claim use their indexes under the policies", async (t) => {
  await using h = await webhooksHarness();
  const shops = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  const org = shops[0]!;
  const credential = crypto.randomUUID();
  const owner: Owner = {
    organizationId: org,
    credentialKind: "tenant_key",
    credentialId: credential,
  };
  // As the owner would load them (past the policies). Each shop: 400 subscriptions over 20 keys
  // (the first shop's first key is the owner's), 1,500 events, one delivery each to one of the
  // shop's first ten subscriptions, a twentieth of them due.
  await h.sql`
    INSERT INTO subscriptions
      (organization_id, credential_kind, credential_id, event_type, url, includes_costs)
    SELECT s.org, 'tenant_key',
      CASE WHEN s.org = ${org} AND n % 20 = 0 THEN ${credential}::uuid
        ELSE md5(s.org::text || (n % 20))::uuid END,
      (ARRAY['quote.created', 'quote.updated'])[1 + n % 2], 'https://hooks.test/' || n, false
    FROM unnest(${shops}::uuid[]) AS s (org), generate_series(1, ${SUBSCRIPTIONS_EACH}) AS n
    ON CONFLICT DO NOTHING`;
  await h.sql`
    INSERT INTO events (id, organization_id, type, occurred_at, data)
    SELECT gen_random_uuid(), s.org, 'quote.created', now() - n * interval '1 second', '{}'
    FROM unnest(${shops}::uuid[]) AS s (org), generate_series(1, ${EVENTS_EACH}) AS n
    ORDER BY n, s.org`;
  await h.sql`
    WITH firsts AS (
      SELECT organization_id, id, row_number() OVER (PARTITION BY organization_id ORDER BY id) AS k
      FROM subscriptions
    ), numbered AS (
      SELECT organization_id, id,
        row_number() OVER (PARTITION BY organization_id ORDER BY seq) AS n
      FROM events
    )
    INSERT INTO deliveries (organization_id, subscription_id, event_id, status, next_attempt_at)
    SELECT e.organization_id, f.id, e.id,
      CASE WHEN e.n % 20 = 0 THEN 'pending' ELSE 'succeeded' END,
      CASE WHEN e.n % 20 = 0 THEN now() - interval '1 minute' END
    FROM numbered e JOIN firsts f ON f.organization_id = e.organization_id AND f.k = 1 + e.n % 10`;
  for (const table of ["subscriptions", "events", "deliveries"]) {
    await h.sql.unsafe(`ANALYZE ${table}`);
  }
  const [mine] = await h.sql<{ id: string }[]>`
    SELECT d.subscription_id AS id FROM deliveries d WHERE d.organization_id = ${org}
    GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`;

  /** The plan of `statement` as the service would run it for the organisation. */
  const plan = (statement: (q: Queryable) => Fragment, platform = false): Promise<PlanNode> =>
    planFor(h.deps.sql, platform ? { platform: true } : { organizationId: org }, statement);

  const subscriptionQueries: [string, Record<string, unknown>][] = [
    ["the default order", {}],
    ["by event", { event: "quote.created" }],
    ["sorted by url", { sortField: "url", sortDirection: "desc" }],
    [
      "filtered",
      {
        filters: JSON.stringify([
          { field: "url", op: "contains", value: "/1" },
          { field: "active", op: "eq", value: true },
        ]),
      },
    ],
  ];
  for (const [what, query] of subscriptionQueries) {
    await t.step(`GET /v1/webhooks, ${what}`, async () => {
      for (const index of [0, 1, 2]) {
        const root = await plan((q) =>
          listStatements(q, SUBSCRIPTION_LIST, ownedBy(q, owner), query)[index]!
        );
        assertNoSeqScan(root, ["subscriptions"], `subscriptions ${what}`);
      }
    });
  }

  const deliveryQueries: [string, Record<string, unknown>][] = [
    ["the default order", {}],
    ["by status", { filters: JSON.stringify([{ field: "status", op: "eq", value: "pending" }]) }],
    ["sorted by event type", { sortField: "eventType" }],
  ];
  for (const [what, query] of deliveryQueries) {
    await t.step(`GET /v1/webhooks/{id}/deliveries, ${what}`, async () => {
      for (const index of [0, 1, 2]) {
        const root = await plan((q) =>
          listStatements(q, DELIVERY_LIST, q`d.subscription_id = ${mine!.id}`, query)[index]!
        );
        assertNoSeqScan(root, ["deliveries", "events"], `deliveries ${what}`);
        // Counting reads the deliveries alone unless the event type is asked about.
        if (index > 0 && !JSON.stringify(query).includes("eventType")) {
          assert.deepEqual(readsOf(root, "events"), [], `deliveries ${what}: count reads events`);
        }
      }
    });
  }

  await t.step("GET /v1/event-log", async () => {
    const root = await plan((q) =>
      q`SELECT id, type, occurred_at, aggregate_id, data FROM events
        WHERE organization_id = ${org} AND seq > 100 AND type = ANY(${["quote.created"]})
        ORDER BY seq LIMIT 51`
    );
    assertNoSeqScan(root, ["events"], "the event log");
  });

  await t.step("the delivery claim, as the platform", async () => {
    const root = await plan((q) => claimStatement(q, 32, 60_000) as unknown as Fragment, true);
    assertNoSeqScan(root, ["deliveries", "subscriptions", "events"], "the claim");
  });

  await t.step(
    "the retention purge, as the platform, finds old events by when recorded",
    async () => {
      const root = await plan((q) => purgeStatement(q, 30), true);
      assertNoSeqScan(root, ["events"], "the purge");
      assert.deepEqual(
        [...new Set(readsOf(root, "events").flatMap((n) => indexesUnder(n)))],
        ["events_recorded_at"],
        "the purge reads events_recorded_at",
      );
    },
  );
});

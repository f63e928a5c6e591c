/**
 * The quote list's statements keep their indexes under the row-level policies. As the service
 * runs them (the runtime role, in a transaction that names the organisation), over a table where
 * the organisation's quotes are a twentieth of the rows, ANALYZEd: no statement may read the
 * quotes table whole. (A condition the policy must run first, and that is not leakproof, such as
 * ILIKE, can keep PostgreSQL from using an index it would use without the policy.)
 */
import assert from "node:assert/strict";
import { type Fragment, type Queryable, transaction } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { serviceHarness } from "@printshop/shared/testing";
import type { ListQuotesQuery } from "@printshop/shared/contracts/quotes";
import { quotesService } from "./app.ts";
import { QUOTE_LIST } from "./store/quotes.ts";
import { documentPageStatements } from "./store/quote_documents.ts";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

const SHOPS = 20;
const QUOTES_EACH = 1500;

Deno.test("the quote list's statements use their indexes under the policies", async (t) => {
  await using h = await serviceHarness(quotesService);
  const shops = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  const org = shops[0]!;
  const client = crypto.randomUUID();
  // As the owner would load them (past the policies): every shop the same number of quotes.
  await h.sql`
    INSERT INTO quotes (id, organization_id, quote_number, quote_ref, status, reference, notes,
      client_id, sales_rep_email, total_inc_gst, delivery_date, created_at, updated_at)
    SELECT gen_random_uuid(), s.org, n, 'Q-' || lpad(n::text, 5, '0'),
      (ARRAY['draft', 'sent', 'approved', 'declined', 'expired'])[1 + n % 5],
      'Order ' || n, 'Notes ' || n, CASE WHEN n % 10 = 0 THEN ${client}::uuid END,
      'rep' || (n % 7) || '@shop.test', n * 1.5, DATE '2026-01-01' + n % 300,
      now() - n * interval '1 minute', now() - n * interval '1 minute'
    FROM unnest(${shops}::uuid[]) AS s (org), generate_series(1, ${QUOTES_EACH}) AS n`;
  await h.sql`
    INSERT INTO crm_customers (organization_id, id, name, is_archived, occurred_at, event_id)
    VALUES (${org}, ${client}, 'Riverside Tees', false, now(), gen_random_uuid())`;
  await h.sql`ANALYZE quotes`;
  await h.sql`ANALYZE crm_customers`;

  /** The plan of `statement` as the service would run it for the organisation. */
  const plan = (statement: (q: Queryable) => Fragment): Promise<PlanNode> =>
    withOrganization(org, () =>
      transaction(h.deps.sql, async (tx) => {
        const [row] = await tx<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>`
          EXPLAIN (FORMAT JSON) ${statement(tx)}`;
        return row!["QUERY PLAN"][0]!.Plan;
      }));
  const assertIndexed = (root: PlanNode, what: string): void => {
    const nodes = nodesOf(root);
    const scans = nodes.filter((n) => n["Relation Name"] === "quotes");
    assert(scans.length > 0, `${what}: the plan reads quotes`);
    const whole = scans.filter((n) => n["Node Type"] === "Seq Scan");
    assert.deepStrictEqual(whole, [], `${what} reads every quote: ${JSON.stringify(root)}`);
  };

  const lists: [string, ListQuotesQuery][] = [
    ["the default order", {}],
    ["a later page", { offset: 200 }],
    ["status", { status: "sent" }],
    ["a client's quotes", { clientId: client }],
    ["sorted by total", { sortField: "totalIncGst", sortDirection: "desc" }],
    ["sorted by delivery date", { sortField: "deliveryDate" }],
    ["searched by ref", { search: "Q-0012" }],
    ["searched by the client's name", { search: "riverside" }],
    [
      "filtered",
      {
        filters: JSON.stringify([
          { field: "totalIncGst", op: "gte", value: 100 },
          { field: "reference", op: "contains", value: "Order 1" },
        ]),
      },
    ],
  ];
  for (const [what, query] of lists) {
    await t.step(`GET /v1/quotes, ${what}`, async () => {
      for (const costs of [true, false]) {
        const request = { organizationId: org, query, pageSizeMax: 200, costs };
        const stored = await plan((q) => documentPageStatements(q, QUOTE_LIST, request).stored);
        assertIndexed(stored, `${what}, stored documents`);
        const rendered = await plan((q) => documentPageStatements(q, QUOTE_LIST, request).rendered);
        assertIndexed(rendered, `${what}, rendered`);
      }
    });
  }

  await t.step("GET /v1/quotes/{id} and the sales rep facet", async () => {
    const [quote] = await h.sql<{ id: string }[]>`
      SELECT id FROM quotes WHERE organization_id = ${org} LIMIT 1`;
    // storedDocument's statement and salesRepFacet's.
    assertIndexed(
      await plan((q) =>
        q`SELECT document_with_costs AS json FROM quotes
          WHERE id = ${quote!.id} AND organization_id = ${org}`
      ),
      "the quote by id",
    );
    assertIndexed(
      await plan((q) =>
        q`SELECT DISTINCT sales_rep_email AS email FROM quotes
          WHERE organization_id = ${org} AND sales_rep_email IS NOT NULL ORDER BY email`
      ),
      "the sales rep facet",
    );
  });
});

/**
 * The quote list's statements keep their indexes under the row-level policies. As the service
 * runs them (the runtime role, in a transaction that names the organisation), over a table where
 * the organisation's quotes are a twentieth of the rows, ANALYZEd: no statement may read the
 * quotes table whole. (A condition the policy must run first, and that is not leakproof, such as
 * ILIKE, can keep PostgreSQL from using an index it would use without the policy.)
 */
import assert from "node:assert/strict";
import type { Fragment, Queryable } from "@printshop/shared/db";
import {
  assertNoSeqScan,
  planFor,
  type PlanNode,
  readsOf,
  serviceHarness,
} from "@printshop/shared/testing";
import type { ListQuotesQuery } from "@printshop/shared/contracts/quotes";
import { quotesService } from "./app.ts";
import { QUOTE_LIST } from "./store/quotes.ts";
import { documentPageStatements } from "./store/quote_documents.ts";

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
    planFor(h.deps.sql, { organizationId: org }, statement);
  /** The plan reads quotes, and never every quote. */
  const assertIndexed = (root: PlanNode, what: string): void => {
    assert(readsOf(root, "quotes").length > 0, `${what}: the plan reads quotes`);
    assertNoSeqScan(root, ["quotes"], what);
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

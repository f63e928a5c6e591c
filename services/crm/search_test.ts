/**
 * The CRM's search functions (migration 0006): each column a list's `search` promises is searched,
 * only the organisation in force is answered, and in a big shop the trigram index is read.
 */
import { assertSearchFunction, serviceHarness } from "@printshop/shared/testing";
import { crmService } from "./app.ts";

const BIG = 20_000;
const SMALL = 300;
const SHOPS = 30;

Deno.test("search functions: customers, vendors and tasks by every searched column, one shop's", async () => {
  await using h = await serviceHarness(crmService);
  const big = crypto.randomUUID();
  const others = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  const shops = [{ id: big, n: BIG }, ...others.map((id) => ({ id, n: SMALL }))];
  for (const { id, n } of shops) {
    // Every searched column holds a text of its own per row: `<column>-<row>-x`.
    await h.sql`
      INSERT INTO customers (id, organization_id, company_name, email, phone, tax_number, tags)
      SELECT gen_random_uuid(), ${id}, 'company-' || g || '-x', 'email-' || g || '-x@shop.test',
        'phone-' || g || '-x', 'tax-' || g || '-x', ARRAY['tag', 'tag-' || g || '-x']
      FROM generate_series(1, ${n}) g`;
    await h.sql`
      INSERT INTO vendors (id, organization_id, name, kind, account_number, notes)
      SELECT gen_random_uuid(), ${id}, 'vendor-' || g || '-x', 'Other', 'account-' || g || '-x',
        'notes-' || g || '-x'
      FROM generate_series(1, ${n}) g`;
    await h.sql`
      INSERT INTO tasks (id, organization_id, title, description)
      SELECT gen_random_uuid(), ${id}, 'title-' || g || '-x', 'description-' || g || '-x'
      FROM generate_series(1, ${n}) g`;
  }
  await h.sql`ANALYZE customers, vendors, tasks`;
  const orgs = { big, other: others[0]! };
  const schema = crmService.service;
  const row = 123;
  const terms = (...columns: string[]) => columns.map((c) => `${c}-${row}-x`);
  await assertSearchFunction(h, schema, orgs, {
    fn: "customers_matching",
    table: "customers",
    index: "customers_search",
    terms: terms("company", "email", "phone", "tax", "tag"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "vendors_matching",
    table: "vendors",
    index: "vendors_search",
    terms: terms("vendor", "account", "notes"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "tasks_matching",
    table: "tasks",
    index: "tasks_search",
    terms: terms("title", "description"),
  });
});

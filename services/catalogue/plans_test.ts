/**
 * The catalogue's lists keep their indexes under the row-level policies. Each list below is run
 * through its store function exactly as a request runs it (as printshop_app, for one
 * organisation), on a pool that records every statement with its parameters; each SELECT it sent
 * is then EXPLAINed as the app role with the organisation set, both as a custom plan (the values
 * known) and as the generic plan a prepared statement may settle on. Operators that are not
 * leakproof (ILIKE, numeric comparisons) are evaluated only after the policy's condition, so an
 * index can serve a list only through conditions the policy lets through first: here, every
 * index leads with organization_id, and the lists say which organisation they list.
 */
import assert from "node:assert/strict";
import type { Sql } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { importContextKey } from "@printshop/shared/internal-context";
import {
  type ExplainRow,
  indexesUnder,
  outline,
  planIn,
  type PlanNode,
  readsOf,
  recordingPool,
  scopedTransaction,
  type Sent,
  seqScansOf,
  type ServiceHarness,
  serviceHarness,
  TEST_SERVICE_ENV,
} from "@printshop/shared/testing";
import {
  ListCatalogueItemsQuery,
  ListGarmentVariantsQuery,
  ListPrebuiltItemsQuery,
  ListStockAdjustmentsQuery,
} from "@printshop/shared/contracts/catalogue";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";
import { listItems } from "./store/items.ts";
import { listVariants } from "./store/variants.ts";
import { listPrebuiltItems } from "./store/prebuilt_items.ts";
import { listAdjustments } from "./store/stock.ts";

type H = ServiceHarness<Config>;

/** Enough organisations that one organisation's rows are a small part of each table. */
const ORGANIZATIONS = 40;
const ITEMS_PER_ORGANIZATION = 500;
const PAGE_SIZE_MAX = 100;

/** A parameter as PostgreSQL's text input reads it, quoted as a literal. */
function literal(value: unknown): string {
  if (value === null) return "NULL";
  const text = value instanceof Date
    ? value.toISOString()
    : typeof value === "boolean"
    ? (value ? "t" : "f")
    : Array.isArray(value)
    ? `{${value.map((v) => `"${String(v).replaceAll(/["\\]/g, "\\$&")}"`).join(",")}}`
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value);
  return `'${text.replaceAll("'", "''")}'`;
}

/** Seeds every organisation's catalogue, as the superuser (fixtures), and analyses it. */
async function seed(h: H, organizations: string[]): Promise<void> {
  await h.sql`
    INSERT INTO catalogue_items
      (id, organization_id, style_code, name, brand, category, description, created_at,
       updated_at)
    SELECT gen_random_uuid(), o.id, 'S' || i, 'Tee ' || i, 'Brand ' || (i % 7),
      'Category ' || (i % 5), 'A heavy cotton tee, number ' || i,
      now() - i * interval '1 minute', now() - (i % 97) * interval '1 minute'
    FROM unnest(${organizations}::uuid[]) AS o(id),
      generate_series(1, ${ITEMS_PER_ORGANIZATION}) AS i`;
  // The first 40 items of each organisation in 5 colours × 5 sizes: 1,000 variants each.
  await h.sql`
    INSERT INTO garment_variants
      (id, organization_id, garment_catalogue_item_id, style_code, color, size, size_key,
       stock_on_hand, created_at, updated_at)
    SELECT gen_random_uuid(), i.organization_id, i.id, i.style_code, c, s, upper(s),
      (hashtext(i.id::text || c || s) & 15), i.created_at, i.updated_at
    FROM catalogue_items i,
      unnest(ARRAY['Black', 'White', 'Navy', 'Red', 'Grey']) AS c,
      unnest(ARRAY['S', 'M', 'L', 'XL', '2XL']) AS s
    WHERE substr(i.style_code, 2)::int <= 40`;
  await h.sql`
    INSERT INTO prebuilt_items
      (id, organization_id, name, description, garment_catalogue_item_id, status, created_at)
    SELECT gen_random_uuid(), i.organization_id, 'Staff ' || i.name, i.description,
      CASE WHEN substr(i.style_code, 2)::int % 10 = 0 THEN i.id END,
      (ARRAY['draft', 'active', 'archived'])[1 + substr(i.style_code, 2)::int % 3],
      i.created_at
    FROM catalogue_items i`;
  // One opening row per variant.
  await h.sql`
    INSERT INTO stock_adjustments
      (id, organization_id, garment_variant_id, delta, reason, stock_on_hand_after,
       credential_kind, credential_id, created_at)
    SELECT gen_random_uuid(), v.organization_id, v.id, v.stock_on_hand, 'opening',
      v.stock_on_hand, 'tenant_key', 'seed', v.created_at
    FROM garment_variants v`;
  await h.sql`
    INSERT INTO catalogue_settings (organization_id, size_order, size_keys)
    SELECT o.id, ARRAY['S', 'M', 'L'], ARRAY['S', 'M', 'L']
    FROM unnest(${organizations}::uuid[]) AS o(id)`;
  await h.sql`ANALYZE`;
}

/** The SELECTs a store call sent on `table`, each with its parameters. */
async function sentBy(
  recorded: Sent[],
  table: string,
  call: () => Promise<unknown>,
): Promise<Sent[]> {
  const from = recorded.length;
  await call();
  return recorded.slice(from).filter((sent) =>
    /^\s*SELECT\b/i.test(sent.text) && new RegExp(`\\b${table}\\b`).test(sent.text)
  );
}

/** The plan of `sent` as the app role for `organizationId`: custom or generic. */
async function planOf(
  app: Sql,
  organizationId: string,
  sent: Sent,
  mode: "force_custom_plan" | "force_generic_plan",
): Promise<PlanNode> {
  return await scopedTransaction(app, { organizationId }, async (tx) => {
    const types = await tx<{ oid: number; name: string }[]>`
      SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_type
      WHERE oid = ANY(${sent.types.filter((t) => t !== 0)}::oid[])`;
    const typeName = new Map(types.map((t) => [t.oid, t.name]));
    const declared = sent.types.map((t) => typeName.get(t) ?? "unknown");
    await tx.unsafe(`SET LOCAL plan_cache_mode = ${mode}`);
    await tx.unsafe(
      `PREPARE plan_check${declared.length ? `(${declared.join(", ")})` : ""} AS ${sent.text}`,
    );
    try {
      const args = sent.parameters.map(literal).join(", ");
      return planIn(
        await tx.unsafe<ExplainRow[]>(
          `EXPLAIN (FORMAT JSON) EXECUTE plan_check${args ? `(${args})` : ""}`,
        ),
      );
    } finally {
      await tx.unsafe("DEALLOCATE plan_check");
    }
  });
}

interface Shape {
  name: string;
  table: string;
  /** An index the list's page must be read through; else any index, and no Seq Scan. */
  index?: string;
  call: (pool: Sql) => Promise<unknown>;
}

Deno.test("catalogue lists, searches and filters keep their indexes under the policies", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const organizations = Array.from({ length: ORGANIZATIONS }, () => crypto.randomUUID());
  const org = organizations[7]!;
  await seed(h, organizations);
  const [target] = await h.sql<{ item: string; variant: string; garment: string }[]>`
    SELECT v.garment_catalogue_item_id AS item, v.id AS variant,
      (SELECT garment_catalogue_item_id FROM prebuilt_items
       WHERE organization_id = ${org} AND garment_catalogue_item_id IS NOT NULL LIMIT 1)
        AS garment
    FROM garment_variants v WHERE v.organization_id = ${org} LIMIT 1`;
  assert(target);

  // The app role, as the service connects, recording what its stores send.
  const { sql: pool, sent: recorded } = recordingPool(
    h.databaseUrl,
    catalogueService.service,
    { max: 2 },
  );
  const key = await importContextKey(TEST_SERVICE_ENV.INTERNAL_SECRET!);
  const scope = { key, list: "listCatalogueItems", organizationId: org };
  const items = (query: Record<string, unknown>) => (sql: Sql) =>
    listItems(sql, scope, ListCatalogueItemsQuery.parse(query), PAGE_SIZE_MAX);
  /** A second page: the cursor of the first, for the same query. */
  const nextPage = (query: Record<string, unknown>) => async (sql: Sql) => {
    const first = await withOrganization(org, () => items({ ...query, limit: "20" })(pool));
    assert(first.nextCursor);
    return await items({ ...query, limit: "20", cursor: first.nextCursor })(sql);
  };
  const variants = (query: Record<string, unknown>) => (sql: Sql) =>
    listVariants(sql, org, ListGarmentVariantsQuery.parse(query), PAGE_SIZE_MAX);
  const prebuilts = (query: Record<string, unknown>) => (sql: Sql) =>
    listPrebuiltItems(sql, org, ListPrebuiltItemsQuery.parse(query), PAGE_SIZE_MAX);
  const ledger = (query: Record<string, unknown>) => (sql: Sql) =>
    listAdjustments(
      sql,
      org,
      target.variant,
      ListStockAdjustmentsQuery.parse(query),
      PAGE_SIZE_MAX,
    );
  const filter = (field: string, op: string, value: unknown): string =>
    JSON.stringify([{ field, op, value }]);

  const shapes: Shape[] = [
    {
      name: "catalogue",
      table: "catalogue_items",
      index: "catalogue_items_created",
      call: items({}),
    },
    {
      name: "catalogue, next page",
      table: "catalogue_items",
      index: "catalogue_items_created",
      call: nextPage({}),
    },
    {
      name: "catalogue by name, next page",
      table: "catalogue_items",
      index: "catalogue_items_name",
      call: nextPage({ sortField: "name" }),
    },
    {
      name: "catalogue by updatedAt, newest first",
      table: "catalogue_items",
      index: "catalogue_items_updated",
      call: items({ sortField: "updatedAt", sortDirection: "desc" }),
    },
    { name: "catalogue search", table: "catalogue_items", call: items({ search: "tee 12" }) },
    {
      name: "catalogue brand and category",
      table: "catalogue_items",
      call: items({ brand: "Brand 3", category: "Category 1" }),
    },
    {
      name: "catalogue filters",
      table: "catalogue_items",
      call: items({ filters: filter("weightGsm", "gt", 100) }),
    },
    { name: "variants", table: "garment_variants", call: variants({}) },
    {
      name: "variants of an item",
      table: "garment_variants",
      call: variants({ garmentCatalogueItemId: target.item }),
    },
    {
      name: "variants by style code",
      table: "garment_variants",
      index: "garment_variants_org",
      call: variants({ styleCode: "S12" }),
    },
    {
      name: "variants by colour, size, in stock",
      table: "garment_variants",
      call: variants({ color: "Navy", size: "XL", inStock: "true" }),
    },
    { name: "variants search", table: "garment_variants", call: variants({ search: "nav" }) },
    {
      name: "variants changed since",
      table: "garment_variants",
      call: variants({
        filters: filter("updatedAt", "gt", new Date(Date.now() - 600_000).toISOString()),
        sortField: "updatedAt",
      }),
    },
    {
      name: "variants by stock",
      table: "garment_variants",
      call: variants({ filters: filter("stockOnHand", "gte", 10), sortField: "stockOnHand" }),
    },
    {
      name: "pre-built items",
      table: "prebuilt_items",
      index: "prebuilt_items_created",
      call: prebuilts({}),
    },
    {
      name: "pre-built items by status",
      table: "prebuilt_items",
      index: "prebuilt_items_status",
      call: prebuilts({ status: "active" }),
    },
    {
      name: "pre-built items of a garment",
      table: "prebuilt_items",
      index: "prebuilt_items_garment",
      call: prebuilts({ garmentCatalogueItemId: target.garment }),
    },
    { name: "pre-built items search", table: "prebuilt_items", call: prebuilts({ search: "12" }) },
    {
      name: "stock ledger of a variant",
      table: "stock_adjustments",
      index: "stock_adjustments_variant",
      call: ledger({}),
    },
    {
      name: "stock ledger by reason",
      table: "stock_adjustments",
      index: "stock_adjustments_variant",
      call: ledger({ reason: "opening" }),
    },
  ];

  const lost: string[] = [];
  try {
    // The role sees this organisation's rows, and only them: the plans below are of real lists.
    const page = await withOrganization(org, () => items({})(pool));
    assert.equal(page.items.length, PAGE_SIZE_MAX);
    const [own] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM catalogue_items
      WHERE organization_id = ${org} AND id = ANY(${page.items.map((item) => item.id)}::uuid[])`;
    assert.equal(own?.n, PAGE_SIZE_MAX);
    for (const shape of shapes) {
      const sent = await sentBy(
        recorded,
        shape.table,
        () => withOrganization(org, () => shape.call(pool)),
      );
      // A page and its count (offset lists), or a page (cursor lists): never nothing.
      assert(sent.length > 0, `${shape.name}: no statement on ${shape.table} was sent`);
      for (const statement of sent) {
        for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
          const plan = await planOf(pool, org, statement, mode);
          const where = `${shape.name} (${mode}): ${statement.text}\n${outline(plan)}`;
          if (seqScansOf(plan, [shape.table]).length > 0) {
            lost.push(`Seq Scan on ${shape.table}: ${where}`);
          } else if (readsOf(plan, shape.table).length === 0) {
            lost.push(`${shape.table} is not read at all: ${where}`);
          }
          // The page itself (not its tally, `count, more`: pageTally) is read through the index
          // named (a bitmap index scan names no relation: any node may carry it).
          const isPage = !/\bAS more\b/.test(statement.text);
          if (shape.index && isPage && !indexesUnder(plan).includes(shape.index)) {
            lost.push(`not through ${shape.index}: ${where}`);
          }
        }
      }
    }
  } finally {
    await pool.end();
  }
  assert.deepStrictEqual(lost, []);
});

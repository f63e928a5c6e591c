/**
 * The catalogue's search functions (migration 0008): each column a list's `search` promises is
 * searched, only the organisation in force is answered, and in a big shop the trigram index is
 * read.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import assert from "node:assert/strict";
import {
  assertSearchFunction,
  nodesOf,
  scansOf,
  searchPlans,
  serviceHarness,
} from "@printshop/shared/testing";
import { connect, transaction } from "@printshop/shared/db";
import { escapeLike } from "@printshop/shared/filters";
import { ROLES, roleUrl, withOrganization } from "@printshop/shared/db/tenancy";
import { catalogueService } from "./app.ts";
import { listVariants } from "./store/variants.ts";

const BIG = 20_000;
const SMALL = 300;
const SHOPS = 30;

Deno.test("search functions: catalogue items, variants and pre-built items by every searched column, one shop's", async () => {
  await using h = await serviceHarness(catalogueService);
  const big = crypto.randomUUID();
  const others = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  // Every searched text of row g is md5('<column>' || g): as varied as real text, and the same
  // in every shop.
  for (const [id, n] of [[big, BIG], ...others.map((o) => [o, SMALL])] as [string, number][]) {
    await h.sql`
      INSERT INTO catalogue_items (id, organization_id, style_code, name, brand, category,
        description, external_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${id}, md5('style' || g), md5('name' || g), md5('brand' || g),
        'Tees', md5('description' || g), md5('external' || g), now(), now()
      FROM generate_series(1, ${n}::int) g`;
    await h.sql`
      INSERT INTO garment_variants (id, organization_id, garment_catalogue_item_id, style_code,
        color, size, size_key, stock_code, external_id, stock_on_hand, created_at, updated_at)
      SELECT gen_random_uuid(), ${id}, i.id, i.style_code, md5('color' || g), md5('size' || g),
        'M', md5('stock' || g), md5('variant' || g), 0, now(), now()
      FROM generate_series(1, ${n}::int) g
      JOIN catalogue_items i ON i.organization_id = ${id} AND i.style_code = md5('style' || g)`;
    await h.sql`
      INSERT INTO prebuilt_items (id, organization_id, name, description, status, created_at)
      SELECT gen_random_uuid(), ${id}, md5('prebuilt' || g), md5('about' || g), 'active', now()
      FROM generate_series(1, ${n}::int) g`;
  }
  await h.sql`ANALYZE catalogue_items, garment_variants, prebuilt_items`;
  const term = async (text: string) => {
    const [row] = await h.sql<{ term: string }[]>`SELECT left(md5(${text}), 12) AS term`;
    return row!.term;
  };
  const terms = (...texts: string[]) => Promise.all(texts.map(term));
  const orgs = { big, other: others[0]! };
  const schema = catalogueService.service;
  await assertSearchFunction(h, schema, orgs, {
    fn: "catalogue_items_matching",
    table: "catalogue_items",
    index: "catalogue_items_search",
    terms: await terms("style123", "name123", "brand123", "description123", "external123"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "garment_variants_matching",
    table: "garment_variants",
    index: "garment_variants_search",
    terms: await terms("style123", "color123", "size123", "stock123", "variant123"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "prebuilt_items_matching",
    table: "prebuilt_items",
    index: "prebuilt_items_search",
    terms: await terms("prebuilt123", "about123"),
  });
});

Deno.test("the variant list walks for a common term through its join, and answers what its search answers", async () => {
  await using h = await serviceHarness(catalogueService);
  const [shop, other] = [crypto.randomUUID(), crypto.randomUUID()];
  // 3,000 variants in each shop, a third of them "Black": common, and more than a walk for a
  // short page reads.
  for (const id of [shop, other]) {
    await h.sql`
      INSERT INTO catalogue_items (id, organization_id, style_code, name, category, created_at,
        updated_at)
      SELECT gen_random_uuid(), ${id}, 'ST-' || g, 'Tee ' || g, 'Tees', now(), now()
      FROM generate_series(1, 300) g`;
    await h.sql`
      INSERT INTO garment_variants (id, organization_id, garment_catalogue_item_id, style_code,
        color, size, size_key, stock_code, stock_on_hand, created_at, updated_at)
      SELECT gen_random_uuid(), ${id}, i.id, i.style_code,
        (ARRAY['Black', 'Navy', 'White'])[1 + c], s, s, i.style_code || '-' || c || '-' || s,
        (i.n * 7 + c) % 5, now(), now()
      FROM (SELECT it.*, row_number() OVER (ORDER BY it.style_code) AS n FROM catalogue_items it
        WHERE it.organization_id = ${id}) i, generate_series(0, 2) c,
        unnest(ARRAY['S', 'M', 'L']) s`;
  }
  await h.sql`ANALYZE catalogue_items, garment_variants`;
  // One connection as the service connects, so what ran shows in its prepared statements.
  const password = decodeURIComponent(new URL(h.databaseUrl).password);
  const conn = connect(roleUrl(h.databaseUrl, ROLES.app, password), {
    schema: catalogueService.service,
    max: 1,
  });
  try {
    const list = (query: Record<string, unknown>) =>
      withOrganization(shop, () => listVariants(conn, shop, query, 200));
    const ran = async (fn: string) => {
      const [row] = await conn<{ n: number }[]>`
        SELECT coalesce(sum(custom_plans + generic_plans), 0)::int AS n
        FROM pg_prepared_statements WHERE statement LIKE ${`%${fn}(%`}`;
      return row!.n;
    };
    // A first page found by the walk: the search function is not asked.
    const first = await list({ search: "black", limit: 20, count: false });
    assertEquals(first.items.length, 20);
    assertEquals(await ran("garment_variants_matching"), 0, "the page was searched");
    assertEquals((await ran("garment_variants_matching_among")) > 0, true, "no walk was made");
    for (
      const order of [{}, { sortField: "size", sortDirection: "desc" }, {
        sortField: "stockOnHand",
      }]
    ) {
      for (const [limit, offset] of [[1, 0], [20, 0], [20, 40], [200, 0]]) {
        const counted = await list({ ...order, search: "black", limit, offset });
        const walked = await list({ ...order, search: "black", limit, offset, count: false });
        const what = `${JSON.stringify(order)} ${offset}+${limit}`;
        assertEquals(walked.items.map((v) => v.id), counted.items.map((v) => v.id), what);
        assertEquals(walked.hasMore, counted.hasMore, what);
        assertEquals(walked.items.every((v) => v.color === "Black"), true, what);
      }
    }
  } finally {
    await conn.end();
  }
});

Deno.test("a code of short segments is found through the codes index, as its columns hold it", async () => {
  await using h = await serviceHarness(catalogueService);
  const big = crypto.randomUUID();
  const other = crypto.randomUUID();
  // Stock codes as the scale bench makes them: SC-<item>-<1..10>, the same in both shops; item 1's
  // ten are the only codes holding "-1-".
  for (const [organization, items] of [[big, 2_000], [other, 500]] as [string, number][]) {
    await h.sql`
      INSERT INTO catalogue_items (id, organization_id, style_code, name, brand, category,
        created_at, updated_at)
      SELECT gen_random_uuid(), ${organization}, 'ST-' || i, 'Tee ' || i, 'Brand', 'Tees', now(),
        now()
      FROM generate_series(1, ${items}::int) i`;
    await h.sql`
      INSERT INTO garment_variants (id, organization_id, garment_catalogue_item_id, style_code,
        color, size, size_key, stock_code, stock_on_hand, created_at, updated_at)
      SELECT gen_random_uuid(), ${organization}, c.id, c.style_code, 'Black ' || n, 'M', 'M',
        'SC-' || substr(c.style_code, 4) || '-' || n, 0, now(), now()
      FROM catalogue_items c, generate_series(1, 10) n WHERE c.organization_id = ${organization}`;
  }
  await h.sql`ANALYZE garment_variants`;
  const found = async (term: string): Promise<string[]> => {
    const rows = await withOrganization(
      big,
      () =>
        transaction(h.deps.sql, (tx) =>
          tx<{ id: string }[]>`
          SELECT id FROM garment_variants_matching(${`%${escapeLike(term)}%`}) AS m (id)`),
    );
    return rows.map((r) => r.id).sort();
  };
  const expected = async (term: string): Promise<string[]> => {
    const rows = await h.sql<{ id: string }[]>`
      SELECT id FROM garment_variants WHERE organization_id = ${big}
        AND (strpos(lower(style_code), lower(${term})) > 0
          OR strpos(lower(color), lower(${term})) > 0 OR strpos(lower(size), lower(${term})) > 0
          OR strpos(lower(stock_code), lower(${term})) > 0
          OR strpos(lower(coalesce(external_id, '')), lower(${term})) > 0)`;
    return rows.map((r) => r.id).sort();
  };
  // The same answer as every column searched whole: the codes index only chooses where to look.
  for (
    const term of ["SC-1-1", "sc-1-1", "-1-", "1-1", "C-12-", "T-7", "M", "-", "SC-1-1 Black"]
  ) {
    assertEquals(await found(term), await expected(term), `"${term}"`);
  }
  assert.equal((await found("SC-1-1")).length, 2, "SC-1-1 and SC-1-10");
  assertEquals(await found("SC_1"), [], "an underscore is literal");

  // What the search read: the codes index, and hardly a variant it did not find;
  // a term too short for it, or not plain ASCII, is read as before.
  const plans = await searchPlans(
    h.databaseUrl,
    catalogueService.service,
    big,
    "garment_variants_matching",
    "SC-1-1",
    { analyze: true },
  );
  const scans = plans.flatMap(scansOf).filter((scan) => scan.table === "garment_variants");
  assertEquals(
    scans.map((scan) => scan.indexes),
    [["garment_variants_search_codes"]],
    "SC-1-1 is looked up in the codes index",
  );
  const heapRows = plans.flatMap(nodesOf)
    .filter((node) => node["Relation Name"] === "garment_variants")
    .map((node) => (node as { "Actual Rows"?: number })["Actual Rows"] ?? 0);
  assert(heapRows.every((rows) => rows <= 12), `variants read: ${heapRows}`);
  for (const term of ["-", "Σ-1"]) {
    const short = await searchPlans(
      h.databaseUrl,
      catalogueService.service,
      big,
      "garment_variants_matching",
      term,
    );
    assert(
      !short.flatMap(scansOf).some((scan) =>
        scan.indexes.includes("garment_variants_search_codes")
      ),
      `"${term}" has no trigram for the codes index`,
    );
  }
});

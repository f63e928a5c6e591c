/**
 * The catalogue's search functions (migration 0008): each column a list's `search` promises is
 * searched, only the organisation in force is answered, and in a big shop the trigram index is
 * read.
 */
import { assertSearchFunction, serviceHarness } from "@printshop/shared/testing";
import { catalogueService } from "./app.ts";

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

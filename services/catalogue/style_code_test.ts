import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { GarmentCatalogueItem, GarmentVariant } from "@printshop/shared/contracts/catalogue";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";

type H = ServiceHarness<Config>;
type Json = Record<string, unknown>;

async function item(h: H, org: string, styleCode: string): Promise<GarmentCatalogueItem> {
  return await okAs<GarmentCatalogueItem>(h, "POST", "/v1/catalogue", org, {
    styleCode,
    name: `Tee ${styleCode}`,
  });
}

async function variants(h: H, org: string, input: Json[]): Promise<GarmentVariant[]> {
  return await okAs<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input,
  });
}

const get = (h: H, org: string, id: string): Promise<GarmentVariant> =>
  okAs<GarmentVariant>(h, "GET", `/v1/garment-variants/${id}`, org);

/** The `garment_variant.updated` payloads written for a variant, oldest first. */
async function updates(h: H, id: string): Promise<GarmentVariant[]> {
  const rows = await h.sql<{ payload: GarmentVariant }[]>`
    SELECT payload FROM outbox
    WHERE aggregate_id = ${id} AND type = 'garment_variant.updated' ORDER BY id`;
  return rows.map((row) => row.payload);
}

Deno.test("variant style code: one given none follows its item's, one given its own keeps it", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org, "5000");
  const [following, custom, sameAsItem, patched] = await variants(h, org, [
    { garmentCatalogueItemId: tee.id, color: "Black", size: "M" },
    { garmentCatalogueItemId: tee.id, color: "Black", size: "L", styleCode: "5000-TALL" },
    // Given its own code, which happens to be the item's: still its own.
    { garmentCatalogueItemId: tee.id, color: "Black", size: "XL", styleCode: "5000" },
    { garmentCatalogueItemId: tee.id, color: "Black", size: "2XL" },
  ]);
  assertEquals(
    [following, custom, sameAsItem, patched].map((v) => v!.styleCode),
    ["5000", "5000-TALL", "5000", "5000"],
  );
  // A PATCH that gives a variant a style code makes it the variant's own.
  await okAs(h, "PATCH", `/v1/garment-variants/${patched!.id}`, org, { styleCode: "5000" });

  const renamed = await okAs<GarmentCatalogueItem>(h, "PATCH", `/v1/catalogue/${tee.id}`, org, {
    styleCode: "G5000",
  });
  assertEquals(renamed.styleCode, "G5000");
  const after = await get(h, org, following!.id);
  assertEquals(after.styleCode, "G5000", "the variant given no code follows its item");
  assert(after.updatedAt > following!.updatedAt, "and its updatedAt says it changed");
  assertEquals((await get(h, org, custom!.id)).styleCode, "5000-TALL");
  assertEquals((await get(h, org, sameAsItem!.id)).styleCode, "5000");
  assertEquals((await get(h, org, patched!.id)).styleCode, "5000");

  // Filters and sorts see the new code.
  const byCode = await okAs<{ items: GarmentVariant[] }>(
    h,
    "GET",
    "/v1/garment-variants?styleCode=G5000",
    org,
  );
  assertEquals(byCode.items.map((v) => v.id), [following!.id]);

  // The variant that changed says so, with its new code; the others were not touched.
  const announced = await updates(h, following!.id);
  assertEquals(announced.map((v) => [v.styleCode, v.updatedAt]), [["G5000", after.updatedAt]]);
  assertEquals(await updates(h, custom!.id), []);
  assertEquals(await updates(h, sameAsItem!.id), []);
  assertEquals((await updates(h, patched!.id)).length, 1, "its own PATCH only");

  // A change that leaves the code as it was writes nothing for the variants.
  await okAs(h, "PATCH", `/v1/catalogue/${tee.id}`, org, { name: "Heavy tee" });
  await okAs(h, "PATCH", `/v1/catalogue/${tee.id}`, org, { styleCode: "G5000" });
  assertEquals((await updates(h, following!.id)).length, 1);

  // New variants of the item follow it from then on, too.
  const [late] = await variants(h, org, [
    { garmentCatalogueItemId: tee.id, color: "White", size: "M" },
  ]);
  assertEquals(late!.styleCode, "G5000");
  await okAs(h, "PATCH", `/v1/catalogue/${tee.id}`, org, { styleCode: "5000" });
  assertEquals((await get(h, org, late!.id)).styleCode, "5000");
  assertEquals((await get(h, org, following!.id)).styleCode, "5000");
});

Deno.test("variant style code: an item with more variants than one batch changes them all", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org, "5000");
  const SIZES = Array.from({ length: 100 }, (_, i) => `S${i}`);
  const colours = Array.from({ length: 25 }, (_, i) => `C${i}`);
  const rows = colours.flatMap((color) =>
    SIZES.map((size) => ({ garmentCatalogueItemId: tee.id, color, size }))
  );
  for (let i = 0; i < rows.length; i += 1000) await variants(h, org, rows.slice(i, i + 1000));
  const [own] = await variants(h, org, [
    { garmentCatalogueItemId: tee.id, color: "Own", size: "M", styleCode: "OWN" },
  ]);
  await okAs(h, "PATCH", `/v1/catalogue/${tee.id}`, org, { styleCode: "5001" });

  const [counts] = await h.sql<{ following: number; stale: number; own: number }[]>`
    SELECT count(*) FILTER (WHERE style_code = '5001')::int AS following,
           count(*) FILTER (WHERE style_code = '5000')::int AS stale,
           count(*) FILTER (WHERE style_code = 'OWN')::int AS own
    FROM garment_variants WHERE organization_id = ${org}`;
  assertEquals(counts, { following: 2500, stale: 0, own: 1 });
  const events = await h.sql<{ aggregate_id: string; code: string }[]>`
    SELECT aggregate_id, payload->>'styleCode' AS code FROM outbox
    WHERE organization_id = ${org} AND type = 'garment_variant.updated'`;
  assertEquals(events.length, 2500, "one event per variant that changed");
  assertEquals(new Set(events.map((e) => e.aggregate_id)).size, 2500);
  assert(events.every((e) => e.code === "5001"));
  assert(!events.some((e) => e.aggregate_id === own!.id));
});

Deno.test("variant style code: variants created while their item changes end with its code", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org, "V0");
  for (let i = 1; i <= 10; i++) {
    const [patch, created] = await Promise.all([
      callAs(h, "PATCH", `/v1/catalogue/${tee.id}`, org, { styleCode: `V${i}` }),
      callAs<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, {
        input: [{ garmentCatalogueItemId: tee.id, color: `C${i}`, size: "M" }],
      }),
    ]);
    assertEquals([patch.status, created.status], [200, 201]);
  }
  const list = await okAs<{ items: GarmentVariant[] }>(
    h,
    "GET",
    "/v1/garment-variants?limit=100",
    org,
  );
  assertEquals(list.items.length, 10);
  assertEquals(new Set(list.items.map((v) => v.styleCode)), new Set(["V10"]));
});

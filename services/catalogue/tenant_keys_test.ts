import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { BulkResult } from "@printshop/shared/contracts/bulk";
import type {
  GarmentCatalogueItem,
  GarmentVariant,
  PrebuiltItem,
} from "@printshop/shared/contracts/catalogue";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";

type H = ServiceHarness<Config>;

async function garment(h: H, org: string, styleCode = "5000"): Promise<GarmentCatalogueItem> {
  return await okAs<GarmentCatalogueItem>(h, "POST", "/v1/catalogue", org, {
    styleCode,
    name: `Tee ${styleCode}`,
  });
}

Deno.test("PUT pre-built item: an id another organisation uses creates this organisation's item", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const id = crypto.randomUUID();
  const path = `/v1/prebuilt-items/${id}`;
  const teeA = await garment(h, a);
  const teeB = await garment(h, b);
  const theirs = await callAs<PrebuiltItem>(h, "PUT", path, a, {
    name: "A's hoodie",
    garmentCatalogueItemId: teeA.id,
    status: "active",
  });
  assertEquals(theirs.status, 201);

  // The same answer as for an id nobody uses: created, with the caller's fields.
  const mine = await callAs<PrebuiltItem>(h, "PUT", path, b, {
    name: "B's polo",
    garmentCatalogueItemId: teeB.id,
  });
  assertEquals(mine.status, 201, JSON.stringify(mine.body));
  assertEquals(mine.body.message, "Pre-built item created");
  assertEquals(
    [mine.body.data.id, mine.body.data.name, mine.body.data.status],
    [id, "B's polo", "draft"],
  );
  assertEquals(mine.body.data.garmentCatalogueItemId, teeB.id);

  // Two items under one id, each seen, changed and deleted only by its organisation.
  assertEquals((await okAs<PrebuiltItem>(h, "GET", path, a)).name, "A's hoodie");
  assertEquals((await okAs<PrebuiltItem>(h, "GET", path, b)).name, "B's polo");
  const replaced = await callAs<PrebuiltItem>(
    h,
    "PUT",
    `/v1/prebuilt-items/${id.toUpperCase()}`,
    b,
    {
      name: "B v2",
    },
  );
  assertEquals([replaced.status, replaced.body.data.name], [200, "B v2"]);
  const moved = await okAs<BulkResult>(h, "POST", "/v1/prebuilt-items/bulk/status", b, {
    target: { ids: [id] },
    status: "archived",
  });
  assertEquals(moved.affected, 1);
  const a1 = await okAs<PrebuiltItem>(h, "GET", path, a);
  assertEquals([a1.name, a1.status, a1.garmentCatalogueItemId], ["A's hoodie", "active", teeA.id]);
  await okAs(h, "DELETE", path, b);
  assertEquals((await callAs(h, "GET", path, b)).status, 404);
  assertEquals((await okAs<PrebuiltItem>(h, "GET", path, a)).name, "A's hoodie");
  // A's garment is still used by A's item: B's delete of its own id did not reach it.
  assertEquals((await callAs(h, "DELETE", `/v1/catalogue/${teeA.id}`, a)).status, 409);

  const events = await h.sql<{ organization_id: string; type: string }[]>`
    SELECT organization_id, type FROM outbox WHERE aggregate_id = ${id} ORDER BY id`;
  assertEquals(events.filter((e) => e.organization_id === a).map((e) => e.type), [
    "prebuilt_item.created",
  ]);
  assertEquals(events.filter((e) => e.organization_id === b).map((e) => e.type), [
    "prebuilt_item.created",
    "prebuilt_item.updated",
    "prebuilt_item.updated",
    "prebuilt_item.deleted",
  ]);
});

Deno.test("client-chosen keys: style codes and colour-size pairs are per organisation", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const teeA = await garment(h, a, "5000");
  const teeB = await garment(h, b, "5000");
  for (const [org, tee] of [[a, teeA], [b, teeB]] as const) {
    const made = await okAs<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, {
      input: [{ garmentCatalogueItemId: tee.id, color: "Black", size: "M", externalId: "X-1" }],
    });
    assertEquals(made.length, 1);
  }
  // Within one organisation they stay unique.
  const again = await callAs(h, "POST", "/v1/catalogue", a, { styleCode: "5000", name: "Dup" });
  assertEquals(again.status, 409);
  assert(String(again.body.message).includes(teeA.id));
  assert(!String(again.body.message).includes(teeB.id), "names no other organisation's row");
});

Deno.test("the database refuses a row that points at another organisation's row", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const teeA = await garment(h, a);
  const [variant] = await okAs<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", a, {
    input: [{ garmentCatalogueItemId: teeA.id, color: "Black", size: "M" }],
  });
  // The stores check this too; these statements go around them, as a bug in a store would.
  const refused = async (statement: Promise<unknown>): Promise<string> => {
    try {
      await statement;
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    }
    return "written";
  };
  assertEquals(
    await refused(h.sql`
      INSERT INTO garment_variants
        (id, organization_id, garment_catalogue_item_id, style_code, color, size, size_key)
      VALUES (${crypto.randomUUID()}, ${b}, ${teeA.id}, '5000', 'Pink', 'M', 'M')`),
    "23503",
  );
  assertEquals(
    await refused(h.sql`
      INSERT INTO prebuilt_items (id, organization_id, name, garment_catalogue_item_id)
      VALUES (${crypto.randomUUID()}, ${b}, 'Stolen', ${teeA.id})`),
    "23503",
  );
  assertEquals(
    await refused(h.sql`
      INSERT INTO stock_adjustments (id, organization_id, garment_variant_id, delta, reason,
        stock_on_hand_after, credential_kind, credential_id)
      VALUES (${crypto.randomUUID()}, ${b}, ${variant!.id}, 1, 'other', 1, 'api_key', 'x')`),
    "23503",
  );
});

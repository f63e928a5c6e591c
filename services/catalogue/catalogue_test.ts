import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { GarmentCatalogueItem, GarmentVariant } from "@printshop/shared/contracts/catalogue";
import { waitFor } from "@printshop/shared/net";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";

type H = ServiceHarness<Config>;
type Json = Record<string, unknown>;

const call = callAs;
const ok = okAs;

async function item(h: H, org: string, styleCode = "5000"): Promise<GarmentCatalogueItem> {
  return await ok<GarmentCatalogueItem>(h, "POST", "/v1/catalogue", org, {
    styleCode,
    name: `Tee ${styleCode}`,
    brand: "Gildan",
    buyPrice: 3.85,
  });
}

const SIZES = ["XS", "S", "M", "L", "XL", "2XL"];

async function variants(
  h: H,
  org: string,
  itemId: string,
  colors = ["Black", "White"],
): Promise<GarmentVariant[]> {
  const input = colors.flatMap((color) =>
    SIZES.map((size) => ({ garmentCatalogueItemId: itemId, color, size, stockOnHand: 10 }))
  );
  return await ok<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, { input });
}

Deno.test("catalogue items: create, read, change, list, and buyPrice only with costs.read", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const created = await item(h, org);
  assertEquals([created.styleCode, created.buyPrice, created.source], ["5000", 3.85, "manual"]);
  const again = await call(h, "POST", "/v1/catalogue", org, { styleCode: "5000", name: "Dup" });
  assertEquals(again.status, 409, JSON.stringify(again.body));
  assert(String(again.body.message).includes(created.id));
  const other = crypto.randomUUID();
  assertEquals((await call(h, "GET", `/v1/catalogue/${created.id}`, other)).status, 404);
  const patched = await ok<GarmentCatalogueItem>(h, "PATCH", `/v1/catalogue/${created.id}`, org, {
    isDiscontinued: true,
    images: ["https://cdn.example.com/a.jpg"],
  });
  assertEquals([patched.isDiscontinued, patched.images], [true, ["https://cdn.example.com/a.jpg"]]);
  const noCosts = ALL_SCOPES.filter((s) => s !== "costs.read");
  const hidden = await call<GarmentCatalogueItem>(
    h,
    "GET",
    `/v1/catalogue/${created.id}`,
    org,
    undefined,
    noCosts,
  );
  assert(!("buyPrice" in hidden.body.data), "buyPrice is absent without costs.read");
  const refused = await call(h, "POST", "/v1/catalogue", org, {
    styleCode: "X",
    name: "X",
    buyPrice: 1,
  }, noCosts);
  assertEquals(refused.status, 403);
  // Narrowing a filter on the price would give it back as surely as showing it.
  const filters = encodeURIComponent(JSON.stringify([{ field: "buyPrice", op: "gt", value: 3 }]));
  const narrowed = await call(
    h,
    "GET",
    `/v1/catalogue?filters=${filters}`,
    org,
    undefined,
    noCosts,
  );
  assertEquals(narrowed.status, 403, JSON.stringify(narrowed.body));
  const sorted = await call(h, "GET", "/v1/catalogue?sortField=buyPrice", org, undefined, noCosts);
  assertEquals(sorted.status, 400, "buyPrice is not a sort field at all");
});

Deno.test("catalogue cursor: every row once while rows are inserted and deleted meanwhile", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const first: string[] = [];
  for (let i = 0; i < 25; i++) {
    first.push((await item(h, org, `S${String(i).padStart(3, "0")}`)).id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let round = 0;
  const deleted = new Set<string>();
  do {
    const qs: string = `limit=4&sortField=styleCode${cursor ? `&cursor=${cursor}` : ""}`;
    const page: { items: GarmentCatalogueItem[]; nextCursor: string | null } = await ok(
      h,
      "GET",
      `/v1/catalogue?${qs}`,
      org,
    );
    seen.push(...page.items.map((i) => i.id));
    cursor = page.nextCursor;
    // Meanwhile: a row before the cursor, one after it, and one deleted ahead of it.
    await item(h, org, `A${round}`);
    await item(h, org, `Z${round}`);
    const ahead = first.find((id) => !seen.includes(id) && !deleted.has(id));
    if (ahead && round % 2 === 0) {
      await ok(h, "DELETE", `/v1/catalogue/${ahead}`, org);
      deleted.add(ahead);
    }
    round++;
  } while (cursor !== null);
  assertEquals(new Set(seen).size, seen.length, "no row twice");
  for (const id of first) {
    if (!deleted.has(id)) assert(seen.includes(id), `row ${id} that was there throughout was seen`);
  }
  const tampered = await call(h, "GET", `/v1/catalogue?limit=2&cursor=x${"A".repeat(20)}.abc`, org);
  assertEquals(tampered.status, 400);
  const page = await ok<{ nextCursor: string }>(
    h,
    "GET",
    "/v1/catalogue?limit=2&brand=Gildan",
    org,
  );
  const changed = await call(
    h,
    "GET",
    `/v1/catalogue?limit=2&brand=Other&cursor=${page.nextCursor}`,
    org,
  );
  assertEquals(changed.status, 400, JSON.stringify(changed.body));
  assert(String(changed.body.message).includes("cursor"));
  const elsewhere = await call(
    h,
    "GET",
    `/v1/catalogue?limit=2&brand=Gildan&cursor=${page.nextCursor}`,
    crypto.randomUUID(),
  );
  assertEquals(elsewhere.status, 400, "a cursor is good for its organisation only");
});

Deno.test("a single create takes one variant, names each problem by its field, and refuses a taken colour and size with 409", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const one = await ok<GarmentVariant>(h, "POST", "/v1/garment-variants", org, {
    garmentCatalogueItemId: tee.id.toUpperCase(),
    color: "Black",
    size: "M",
    stockByLocation: [{ location: "Main", quantity: 5 }, { location: "Van", quantity: 2 }],
  });
  assertEquals([one.garmentCatalogueItemId, one.styleCode, one.stockOnHand], [tee.id, "5000", 7]);
  const events = await h.sql<{ type: string; aggregate_id: string }[]>`
    SELECT type, aggregate_id FROM outbox WHERE organization_id = ${org} AND type LIKE 'garment_variant.%'`;
  assertEquals(events.map((e) => [e.type, e.aggregate_id]), [["garment_variant.created", one.id]]);
  const ledger = await h.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM stock_adjustments WHERE garment_variant_id = ${one.id}`;
  assert(ledger[0]!.n > 0, "the opening stock is in the ledger");

  const taken = await call(h, "POST", "/v1/garment-variants", org, {
    garmentCatalogueItemId: tee.id,
    color: "Black",
    size: "M",
  });
  assertEquals(taken.status, 409, JSON.stringify(taken.body));
  assert(String(taken.body.message).includes(one.id), "names the variant it would repeat");
  const mismatch = await call(h, "POST", "/v1/garment-variants", org, {
    garmentCatalogueItemId: tee.id,
    color: "Red",
    size: "M",
    stockOnHand: 3,
    stockByLocation: [{ location: "A", quantity: 1 }],
  });
  assertEquals(mismatch.status, 400);
  assertEquals((mismatch.body.details as { path: string }[]).map((d) => d.path), ["stockOnHand"]);
  // Another organisation's item reads as no item at all.
  const theirs = await item(h, crypto.randomUUID(), "THEIRS");
  const foreign = await call(h, "POST", "/v1/garment-variants", org, {
    garmentCatalogueItemId: theirs.id,
    color: "Red",
    size: "M",
  });
  assertEquals(foreign.status, 400);
  assertEquals((foreign.body.details as { path: string }[]).map((d) => d.path), [
    "garmentCatalogueItemId",
  ]);
  const count = await h
    .sql`SELECT count(*)::int AS n FROM garment_variants WHERE organization_id = ${org}`;
  assertEquals(count[0]!.n, 1, "nothing of the refused calls was written");
  // Lost to a create that committed after this one's check: still told which variant it repeats.
  // The rival's row is written, uncommitted, before the request; the request's check cannot see
  // it, its insert waits on the unique index and fails once the rival commits.
  let rivalId = "";
  let lost: Awaited<ReturnType<typeof call>> | undefined;
  await h.sql.begin(async (tx) => {
    await tx`CREATE TEMP TABLE rival ON COMMIT DROP AS
      SELECT * FROM garment_variants WHERE id = ${one.id}`;
    const [row] = await tx<{ id: string }[]>`
      UPDATE rival SET id = gen_random_uuid(), color = 'Race' RETURNING id`;
    rivalId = row!.id;
    await tx`INSERT INTO garment_variants SELECT * FROM rival`;
    const request = call(h, "POST", "/v1/garment-variants", org, {
      garmentCatalogueItemId: tee.id,
      color: "Race",
      size: "M",
    }).then((answer) => lost = answer);
    await new Promise((resolve) => setTimeout(resolve, 300));
    void request;
  });
  await waitFor("the losing create", () => Promise.resolve(lost !== undefined), 5_000);
  assertEquals(lost!.status, 409, JSON.stringify(lost!.body));
  assert(String(lost!.body.message).includes(rivalId), JSON.stringify(lost!.body));
});

Deno.test("bulk create: all rows checked before any is written, each problem by row", async () => {
  await using h: H = await serviceHarness(catalogueService, { config: { BULK_MAX_ROWS: 20 } });
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const created = await variants(h, org, tee.id);
  assertEquals(created.length, 12);
  assertEquals(created[0]!.styleCode, "5000", "the item's style code by default");
  const otherOrg = crypto.randomUUID();
  const theirs = await item(h, otherOrg, "THEIRS");
  const bad = await call(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input: [
      { garmentCatalogueItemId: tee.id, color: "Red", size: "M" },
      { garmentCatalogueItemId: tee.id, color: "Red", size: "M" },
      { garmentCatalogueItemId: tee.id, color: "Black", size: "M" },
      { garmentCatalogueItemId: theirs.id, color: "Red", size: "L" },
      {
        garmentCatalogueItemId: tee.id,
        color: "Red",
        size: "L",
        stockOnHand: 3,
        stockByLocation: [{ location: "A", quantity: 1 }],
      },
    ],
  });
  assertEquals(bad.status, 400, JSON.stringify(bad.body));
  const paths = (bad.body.details as { path: string }[]).map((d) => d.path);
  assertEquals(paths, [
    "input.1",
    "input.2",
    "input.3.garmentCatalogueItemId",
    "input.4.stockOnHand",
  ]);
  const count = await h
    .sql`SELECT count(*)::int AS n FROM garment_variants WHERE organization_id = ${org}`;
  assertEquals(count[0]!.n, 12, "nothing of the refused call was written");
  const both = await call(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input: [{ garmentCatalogueItemId: tee.id, color: "Red", size: "M" }],
    items: [{ garmentCatalogueItemId: tee.id, color: "Red", size: "M" }],
  });
  assertEquals(both.status, 400);
  const tooMany = await call(h, "POST", "/v1/garment-variants/bulk/create", org, {
    items: Array.from({ length: 21 }, (_, i) => ({
      garmentCatalogueItemId: tee.id,
      color: "Blue",
      size: `S${i}`,
    })),
  });
  assertEquals(tooMany.status, 400);
  assert(String(tooMany.body.message).includes("20"), JSON.stringify(tooMany.body));
  const alias = await ok<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, {
    items: [{
      garmentCatalogueItemId: tee.id,
      color: "Navy",
      size: "M",
      stockByLocation: [{ location: "Main", quantity: 5 }, { location: "Van", quantity: 2 }],
    }],
  });
  assertEquals(alias[0]!.stockOnHand, 7);
  const ledger = await ok<{ items: { delta: number; reason: string }[] }>(
    h,
    "GET",
    `/v1/garment-variants/${alias[0]!.id}/stock-adjustments`,
    org,
  );
  assertEquals(ledger.items.map((a) => [a.delta, a.reason]).sort(), [[2, "opening"], [
    5,
    "opening",
  ]]);
  const events = await h.sql`
    SELECT count(*)::int AS n FROM outbox
    WHERE organization_id = ${org} AND type = 'garment_variant.created'`;
  assertEquals(events[0]!.n, 13, "one created event per row");
});

Deno.test("variants: listed in the organisation's size order, with filters", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  await ok(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input: ["2XL", "m", "XS", "YL", "XLT", "Zed", "Alpha"].map((size) => ({
      garmentCatalogueItemId: tee.id,
      color: "Black",
      size,
      stockOnHand: size === "XS" ? 0 : 4,
    })),
  });
  const list = await ok<{ items: GarmentVariant[]; totalCount: number }>(
    h,
    "GET",
    "/v1/garment-variants",
    org,
  );
  assertEquals(list.items.map((v) => v.size), ["YL", "XS", "m", "2XL", "XLT", "Alpha", "Zed"]);
  await ok(h, "PATCH", "/v1/catalogue-settings", org, { sizeOrder: ["Zed", "M"] });
  const reordered = await ok<{ items: GarmentVariant[] }>(h, "GET", "/v1/garment-variants", org);
  assertEquals(reordered.items.map((v) => v.size), ["Zed", "m", "2XL", "Alpha", "XLT", "XS", "YL"]);
  const inStock = await ok<{ items: GarmentVariant[] }>(
    h,
    "GET",
    "/v1/garment-variants?inStock=false",
    org,
  );
  assertEquals(inStock.items.map((v) => v.size), ["XS"]);
  const since = await ok<{ totalCount: number }>(
    h,
    "GET",
    `/v1/garment-variants?filters=${
      encodeURIComponent(
        JSON.stringify([{ field: "updatedAt", op: "gte", value: "2000-01-01T00:00:00.000Z" }]),
      )
    }`,
    org,
  );
  assertEquals(since.totalCount, 7);
});

Deno.test("stock: adjustments by location, refused below zero, PATCH writes a stocktake", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const [plain] = await variants(h, org, tee.id, ["Black"]);
  const path = `/v1/garment-variants/${plain!.id}`;
  const taken = await ok<{ stockOnHandAfter: number }>(
    h,
    "POST",
    `${path}/stock-adjustments`,
    org,
    {
      delta: -4,
      reason: "used_in_production",
      reference: "JOB-1",
    },
  );
  assertEquals(taken.stockOnHandAfter, 6);
  const below = await call(h, "POST", `${path}/stock-adjustments`, org, {
    delta: -7,
    reason: "shipped",
  });
  assertEquals(below.status, 409, JSON.stringify(below.body));
  const reserved = await call(h, "PATCH", path, org, { stockReserved: 7 });
  assertEquals(reserved.status, 400, "reserved cannot exceed on hand");
  await ok(h, "PATCH", path, org, { stockReserved: 5 });
  const underReserve = await call(h, "POST", `${path}/stock-adjustments`, org, {
    delta: -2,
    reason: "damaged",
  });
  assertEquals(underReserve.status, 409, "on hand would drop below reserved");
  const counted = await ok<GarmentVariant>(h, "PATCH", path, org, { stockOnHand: 9 });
  assertEquals(counted.stockOnHand, 9);
  const located = await ok<GarmentVariant>(h, "PATCH", path, org, {
    stockByLocation: [{ location: "Main", quantity: 6 }, { location: "Van", quantity: 3 }],
  });
  assertEquals(located.stockOnHand, 9);
  const needsLocation = await call(h, "POST", `${path}/stock-adjustments`, org, {
    delta: 1,
    reason: "received",
  });
  assertEquals(needsLocation.status, 400);
  await ok(h, "POST", `${path}/stock-adjustments`, org, {
    location: "van",
    delta: 2,
    reason: "received",
  });
  const after = await ok<GarmentVariant>(h, "GET", path, org);
  assertEquals(after.stockByLocation, [{ location: "Main", quantity: 6 }, {
    location: "Van",
    quantity: 5,
  }]);
  assertEquals(after.stockOnHand, 11);
  const ledger = await ok<{ items: { delta: number }[]; totalCount: number }>(
    h,
    "GET",
    `${path}/stock-adjustments?limit=100`,
    org,
  );
  assertEquals(
    ledger.items.reduce((sum, a) => sum + a.delta, 0),
    after.stockOnHand,
    "the ledger explains the figure",
  );
  await ok(h, "PATCH", "/v1/catalogue-settings", org, { allowNegativeStock: true });
  await ok(h, "PATCH", path, org, { stockReserved: 0 });
  const negative = await ok<{ locationQuantityAfter: number }>(
    h,
    "POST",
    `${path}/stock-adjustments`,
    org,
    {
      location: "Main",
      delta: -10,
      reason: "shipped",
    },
  );
  assertEquals(negative.locationQuantityAfter, -4);
  assertEquals((await call(h, "GET", path, crypto.randomUUID())).status, 404);
});

Deno.test("stock: concurrent adjustments on one variant lose none", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const [variant] = await variants(h, org, tee.id, ["Black"]);
  const path = `/v1/garment-variants/${variant!.id}/stock-adjustments`;
  const answers = await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) => call(h, "POST", path, org, { delta: i % 2 === 0 ? 3 : -1, reason: "correction" }),
    ),
  );
  assert(
    answers.every((a) => a.status === 201),
    JSON.stringify(answers.find((a) => a.status !== 201)),
  );
  const after = await ok<GarmentVariant>(h, "GET", `/v1/garment-variants/${variant!.id}`, org);
  assertEquals(after.stockOnHand, 10 + 20 * 3 - 20);
});

Deno.test("deleting an item with variants needs cascade", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const made = await variants(h, org, tee.id, ["Black"]);
  const refused = await call(h, "DELETE", `/v1/catalogue/${tee.id}`, org);
  assertEquals(refused.status, 409);
  await ok(h, "DELETE", `/v1/catalogue/${tee.id}?cascade=true`, org);
  assertEquals((await call(h, "GET", `/v1/garment-variants/${made[0]!.id}`, org)).status, 404);
  const events = await h.sql`
    SELECT count(*)::int AS n FROM outbox
    WHERE organization_id = ${org} AND type = 'garment_variant.deleted'`;
  assertEquals(events[0]!.n, made.length);
});

Deno.test("an item a pre-built item uses is never deleted, cascade or not", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  await variants(h, org, tee.id, ["Black"]);
  const polo = await ok<{ id: string }>(h, "POST", "/v1/prebuilt-items", org, {
    name: "Staff tee",
    garmentCatalogueItemId: tee.id,
  });
  const refused = await call(h, "DELETE", `/v1/catalogue/${tee.id}?cascade=true`, org);
  assertEquals(refused.status, 409, JSON.stringify(refused.body));
  assert(String(refused.body.message).includes("pre-built"), JSON.stringify(refused.body));
  assertEquals((await call(h, "GET", `/v1/catalogue/${tee.id}`, org)).status, 200);
  const kept = await ok<{ totalCount: number }>(h, "GET", "/v1/garment-variants", org);
  assertEquals(kept.totalCount, 6, "the refused cascade deleted no variant");
  await ok(h, "DELETE", `/v1/prebuilt-items/${polo.id}`, org);
  await ok(h, "DELETE", `/v1/catalogue/${tee.id}?cascade=true`, org);
});

Deno.test("found by an outside attack: ids in any case, sizes beyond ASCII, the ledger's order, a named default sort", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await item(h, org);
  const [upper] = await ok<GarmentVariant[]>(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input: [{ garmentCatalogueItemId: tee.id.toUpperCase(), color: "Teal", size: "M" }],
  });
  assertEquals(upper!.garmentCatalogueItemId, tee.id, "an upper-case id names the same item");

  await ok(h, "PATCH", "/v1/catalogue-settings", org, { sizeOrder: ["Ñb", "Éa", "M"] });
  await ok(h, "POST", "/v1/garment-variants/bulk/create", org, {
    input: ["aaa", "ñb", "éa"].map((size) => ({
      garmentCatalogueItemId: tee.id,
      color: "Teal",
      size,
    })),
  });
  const sized = await ok<{ items: GarmentVariant[] }>(h, "GET", "/v1/garment-variants", org);
  assertEquals(sized.items.map((v) => v.size), ["ñb", "éa", "M", "aaa"]);

  const path = `/v1/garment-variants/${upper!.id}/stock-adjustments`;
  await Promise.all(
    Array.from({ length: 20 }, () => ok(h, "POST", path, org, { delta: 1, reason: "received" })),
  );
  const ledger = await ok<{ items: { stockOnHandAfter: number }[] }>(h, "GET", path, org);
  assertEquals(
    ledger.items.map((a) => a.stockOnHandAfter),
    Array.from({ length: 20 }, (_, i) => 20 - i),
    "newest first is the order the changes were made in",
  );

  await item(h, org, "B");
  const page = await ok<{ nextCursor: string }>(h, "GET", "/v1/catalogue?limit=1", org);
  const named = await call(
    h,
    "GET",
    `/v1/catalogue?limit=1&sortField=createdAt&sortDirection=asc&cursor=${page.nextCursor}`,
    org,
  );
  assertEquals(named.status, 200, "the default order, named, is the same order");
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { BulkResult } from "@printshop/shared/contracts/bulk";
import type { GarmentCatalogueItem, PrebuiltItem } from "@printshop/shared/contracts/catalogue";
import type { Config } from "./config.ts";
import { catalogueService } from "./app.ts";

type H = ServiceHarness<Config>;
type Json = Record<string, unknown>;

const NO_COSTS = ALL_SCOPES.filter((s) => s !== "costs.read");

const call = callAs;
const ok = okAs;

async function garment(h: H, org: string, styleCode = "5000"): Promise<GarmentCatalogueItem> {
  return await ok<GarmentCatalogueItem>(h, "POST", "/v1/catalogue", org, {
    styleCode,
    name: `Tee ${styleCode}`,
  });
}

async function create(h: H, org: string, body: Json = {}): Promise<PrebuiltItem> {
  return await ok<PrebuiltItem>(h, "POST", "/v1/prebuilt-items", org, { name: "Polo", ...body });
}

async function bulk(h: H, org: string, what: "delete" | "status", body: Json): Promise<BulkResult> {
  return await ok<BulkResult>(h, "POST", `/v1/prebuilt-items/bulk/${what}`, org, body);
}

async function events(h: H, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${id} ORDER BY id`;
  return rows.map((r) => r.type);
}

const LOGO = {
  method: "Embroidery",
  position: "  Left chest  ",
  widthCm: 0,
  colours: [{ name: "Navy", isBase: true }, { name: "Gold" }],
  unitCost: 3.2,
  setupCost: 45,
};

Deno.test("pre-built items: create, read, list, delete, each with its event", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await garment(h, org);
  const created = await create(h, org, {
    garmentCatalogueItemId: tee.id,
    defaultColors: ["White", "Navy"],
    defaultSizes: ["S", "M"],
    decorations: [LOGO, { position: "Back" }],
  });
  assertEquals(created.status, "draft");
  assertEquals(created.garmentCatalogueItemId, tee.id);
  assertEquals(created.decorations[0], {
    method: "Embroidery",
    position: "Left chest",
    description: null,
    widthCm: 0,
    lengthCm: null,
    necklineDropCm: null,
    screenCount: null,
    screenMeshGrade: null,
    colourCount: null,
    colours: [{ name: "Navy", isBase: true }, { name: "Gold", isBase: false }],
    specialInstructions: null,
    artworkFileUrl: null,
    separationFileUrl: null,
    unitCost: 3.2,
    setupCost: 45,
  }, "position trimmed, 0 cm kept, colours in order, nulls for the rest");
  assertEquals(created.decorations[1]?.position, "Back", "decorations keep their order");
  assertEquals(await ok(h, "GET", `/v1/prebuilt-items/${created.id}`, org), created);
  const other = crypto.randomUUID();
  assertEquals((await call(h, "GET", `/v1/prebuilt-items/${created.id}`, other)).status, 404);
  assertEquals((await call(h, "DELETE", `/v1/prebuilt-items/${created.id}`, other)).status, 404);

  const page = await ok<{ items: PrebuiltItem[]; totalCount: number }>(
    h,
    "GET",
    "/v1/prebuilt-items",
    org,
  );
  assertEquals([page.totalCount, page.items[0]?.id], [1, created.id]);
  assertEquals(
    await ok(h, "DELETE", `/v1/prebuilt-items/${created.id}`, org),
    { id: created.id },
  );
  assertEquals((await call(h, "GET", `/v1/prebuilt-items/${created.id}`, org)).status, 404);
  assertEquals(await events(h, created.id), ["prebuilt_item.created", "prebuilt_item.deleted"]);
});

Deno.test("pre-built items: decorations follow the quote decoration's rules", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const refused = async (decoration: Json, path: string): Promise<void> => {
    const answer = await call(h, "POST", "/v1/prebuilt-items", org, {
      name: "X",
      decorations: [decoration],
    });
    assertEquals(answer.status, 400, JSON.stringify(answer.body));
    const details = answer.body.details as { path: string }[];
    assert(details.some((d) => d.path.startsWith(path)), JSON.stringify(details));
  };
  await refused({ position: "" }, "decorations.0.position");
  await refused({ position: "x".repeat(101) }, "decorations.0.position");
  await refused({ widthCm: -1 }, "decorations.0.widthCm");
  await refused({
    colours: [{ name: "A", isBase: true }, { name: "B", isBase: true }],
  }, "decorations.0.colours");
});

Deno.test("pre-built items: the garment must be the organisation's catalogue item", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [org, other] = [crypto.randomUUID(), crypto.randomUUID()];
  const theirs = await garment(h, other);
  for (const id of [theirs.id, crypto.randomUUID()]) {
    const answer = await call(h, "POST", "/v1/prebuilt-items", org, {
      name: "X",
      garmentCatalogueItemId: id,
    });
    assertEquals(answer.status, 400, JSON.stringify(answer.body));
    assertEquals((answer.body.details as { path: string }[])[0]?.path, "garmentCatalogueItemId");
  }
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM prebuilt_items`;
  assertEquals(count!.n, 0);
});

Deno.test("PUT pre-built item: creates with the client's id, replaces, ids are per organisation", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [org, other] = [crypto.randomUUID(), crypto.randomUUID()];
  const id = crypto.randomUUID();
  const path = `/v1/prebuilt-items/${id}`;
  const first = await call<PrebuiltItem>(h, "PUT", path, org, { name: "Hoodie", status: "active" });
  assertEquals([first.status, first.body.data.id, first.body.data.status], [201, id, "active"]);
  const second = await call<PrebuiltItem>(h, "PUT", path, org, { name: "Hoodie v2" });
  assertEquals(second.status, 200);
  assertEquals(second.body.data.name, "Hoodie v2");
  assertEquals(second.body.data.status, "active", "a status not given stays");
  assertEquals(second.body.data.createdAt, first.body.data.createdAt);
  assertEquals(await events(h, id), ["prebuilt_item.created", "prebuilt_item.updated"]);

  const upper = await call(h, "PUT", `/v1/prebuilt-items/${id.toUpperCase()}`, org, {
    name: "Hoodie v3",
  });
  assertEquals(upper.status, 200, "the id is compared lower-cased");
  const notUuid = await call(h, "PUT", "/v1/prebuilt-items/hoodie-1", org, { name: "X" });
  assertEquals(notUuid.status, 400);

  // Another organisation's PUT of the same id makes its own item; this one's is untouched.
  const theirs = await call<PrebuiltItem>(h, "PUT", path, other, { name: "Mine now" });
  assertEquals(theirs.status, 201, JSON.stringify(theirs.body));
  assertEquals([theirs.body.data.name, theirs.body.data.status], ["Mine now", "draft"]);
  assertEquals((await ok<PrebuiltItem>(h, "GET", path, org)).name, "Hoodie v3");

  await ok(h, "PUT", path, org, { name: "Hoodie", status: "archived" });
  const back = await call(h, "PUT", path, org, { name: "Hoodie", status: "draft" });
  assertEquals(back.status, 409, "archived cannot go back to draft");
});

Deno.test("PUT pre-built item: a caller without costs.read cannot erase costs", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const item = await create(h, org, { decorations: [LOGO] });
  const hidden = await call<PrebuiltItem>(
    h,
    "GET",
    `/v1/prebuilt-items/${item.id}`,
    org,
    undefined,
    NO_COSTS,
  );
  assert(!("unitCost" in hidden.body.data.decorations[0]!), "costs hidden without costs.read");
  assert(!("setupCost" in hidden.body.data.decorations[0]!));
  const list = await call<{ items: PrebuiltItem[] }>(
    h,
    "GET",
    "/v1/prebuilt-items",
    org,
    undefined,
    NO_COSTS,
  );
  assert(!("unitCost" in list.body.data.items[0]!.decorations[0]!), "in lists too");
  const write = await call(h, "POST", "/v1/prebuilt-items", org, {
    name: "X",
    decorations: [{ unitCost: 1 }],
  }, NO_COSTS);
  assertEquals(write.status, 403);
  const replace = await call(h, "PUT", `/v1/prebuilt-items/${item.id}`, org, {
    name: "Renamed",
  }, NO_COSTS);
  assertEquals(replace.status, 403, JSON.stringify(replace.body));
  const plain = await create(h, org, { decorations: [{ position: "Back" }] });
  const renamed = await call(h, "PUT", `/v1/prebuilt-items/${plain.id}`, org, {
    name: "Renamed",
  }, NO_COSTS);
  assertEquals(renamed.status, 200, "an item without costs can be replaced");
});

Deno.test("pre-built item list: named filters, filters, search and sort", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const tee = await garment(h, org);
  const a = await create(h, org, { name: "Alpha polo", garmentCatalogueItemId: tee.id });
  const b = await create(h, org, { name: "Beta hoodie", status: "active" });
  await create(h, crypto.randomUUID(), { name: "Alpha elsewhere" });
  const ids = async (query: string): Promise<string[]> =>
    (await ok<{ items: PrebuiltItem[] }>(h, "GET", `/v1/prebuilt-items?${query}`, org)).items
      .map((item) => item.id);
  assertEquals(await ids("status=active"), [b.id]);
  assertEquals(await ids(`garmentCatalogueItemId=${tee.id}`), [a.id]);
  assertEquals(await ids("search=ALPHA"), [a.id]);
  assertEquals(await ids("sortField=name&sortDirection=desc"), [b.id, a.id]);
  const filters = encodeURIComponent(
    JSON.stringify([{ field: "status", op: "eq", value: "draft" }]),
  );
  assertEquals(await ids(`filters=${filters}`), [a.id]);
  const bad = await call(h, "GET", "/v1/prebuilt-items?status=gone", org);
  assertEquals(bad.status, 400);
});

Deno.test("bulk status: by ids, unchanged, refused, not found, one event per row", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const [org, other] = [crypto.randomUUID(), crypto.randomUUID()];
  const draft = await create(h, org);
  const active = await create(h, org, { status: "active" });
  const archived = await create(h, org, { status: "archived" });
  const theirs = await create(h, other);
  const unknown = crypto.randomUUID();
  const result = await bulk(h, org, "status", {
    target: { ids: [draft.id, active.id, archived.id, theirs.id, unknown, draft.id] },
    status: "draft",
  });
  assertEquals(result, {
    requested: 5,
    affected: 1,
    refused: 1,
    failed: 2,
    outcomes: [
      { id: draft.id, status: "unchanged" },
      { id: active.id, status: "ok" },
      {
        id: archived.id,
        status: "refused",
        reason: "An archived pre-built item cannot move to draft; it can move to active",
      },
      { id: theirs.id, status: "failed", reason: "not_found" },
      { id: unknown, status: "failed", reason: "not_found" },
    ],
  });
  assertEquals(
    (await ok<PrebuiltItem>(h, "GET", `/v1/prebuilt-items/${active.id}`, org)).status,
    "draft",
  );
  assertEquals(
    (await ok<PrebuiltItem>(h, "GET", `/v1/prebuilt-items/${theirs.id}`, other)).status,
    "draft",
  );
  assertEquals(await events(h, active.id), ["prebuilt_item.created", "prebuilt_item.updated"]);
  assertEquals(await events(h, draft.id), ["prebuilt_item.created"], "unchanged: no event");
  assertEquals(await events(h, archived.id), ["prebuilt_item.created"], "refused: no event");
});

Deno.test("bulk delete: a filter target is evaluated when it runs, minus excludeIds", async () => {
  await using h: H = await serviceHarness(catalogueService);
  const org = crypto.randomUUID();
  const keep = await create(h, org, { name: "Keep", status: "active" });
  const a = await create(h, org, { name: "Old one", status: "archived" });
  const excluded = await create(h, org, { name: "Old but kept", status: "archived" });
  // Chosen by the user before this one existed: the filter still takes it.
  const target = {
    filters: [{ field: "status", op: "eq", value: "archived" }],
    excludeIds: [excluded.id],
  };
  const late = await create(h, org, { name: "Old late", status: "archived" });
  const theirs = await create(h, crypto.randomUUID(), { name: "Other", status: "archived" });
  const result = await bulk(h, org, "delete", { target });
  assertEquals(result.requested, 2);
  assertEquals(result.affected, 2);
  assertEquals(
    result.outcomes.map((o) => o.id).sort(),
    [a.id, late.id].sort(),
  );
  const left = await ok<{ items: PrebuiltItem[] }>(h, "GET", "/v1/prebuilt-items", org);
  assertEquals(left.items.map((i) => i.id), [keep.id, excluded.id]);
  assertEquals(await events(h, late.id), ["prebuilt_item.created", "prebuilt_item.deleted"]);
  assertEquals(await events(h, a.id), ["prebuilt_item.created", "prebuilt_item.deleted"]);
  assertEquals(await events(h, theirs.id), ["prebuilt_item.created"], "other org untouched");

  const searched = await bulk(h, org, "status", { target: { search: "keep" }, status: "archived" });
  assertEquals(searched.outcomes, [{ id: keep.id, status: "ok" }], "search as the list's");
});

Deno.test("bulk target: both branches, neither, bad filters and over BULK_MAX_ROWS are 400s", async () => {
  await using h: H = await serviceHarness(catalogueService, { config: { BULK_MAX_ROWS: 3 } });
  const org = crypto.randomUUID();
  const items = [];
  for (let i = 0; i < 4; i++) items.push(await create(h, org, { name: `Item ${i}` }));
  const refused = async (body: Json, path: string): Promise<string> => {
    const answer = await call(h, "POST", "/v1/prebuilt-items/bulk/delete", org, body);
    assertEquals(answer.status, 400, JSON.stringify(answer.body));
    assertEquals(answer.body.error, "validation_error");
    const details = answer.body.details as { path: string }[];
    assertEquals(details[0]?.path, path, JSON.stringify(details));
    return String(answer.body.message);
  };
  await refused({ target: { ids: [items[0]!.id], filters: [] } }, "target.filters");
  await refused({ target: {} }, "target");
  await refused(
    { target: { filters: [{ field: "secret", op: "eq", value: 1 }] } },
    "target.filters.0.field",
  );
  const ids = await refused({ target: { ids: items.map((i) => i.id) } }, "target.ids");
  assert(ids.includes("3"), ids);
  const all = await refused({ target: { filters: [] } }, "target");
  assert(all.includes("3") && all.includes("BULK_MAX_ROWS"), all);
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM prebuilt_items`;
  assertEquals(count!.n, 4, "nothing was deleted");
  const fits = await bulk(h, org, "delete", {
    target: { filters: [], excludeIds: [items[0]!.id] },
  });
  assertEquals(fits.affected, 3, "three rows are within the limit");
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Envelope, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";
import { quotesService } from "./app.ts";

interface Band {
  from: number;
  markupType: "percentage" | "fixed";
  markupValue: number;
}

interface Group {
  id: string;
  name: string;
  lane: "garment" | "decoration" | "setup";
  decorationMethod: string | null;
  isDefault: boolean;
  appliesToSetupCost: boolean;
  bands: Band[];
  createdAt: string;
  updatedAt: string;
}

async function harness(): Promise<ServiceHarness<Config>> {
  return await serviceHarness(quotesService);
}

async function json<T = unknown>(res: Response): Promise<Envelope<T>> {
  return await res.json() as Envelope<T>;
}

const GARMENT_BANDS: Band[] = [
  { from: 1, markupType: "percentage", markupValue: 50 },
  { from: 50, markupType: "percentage", markupValue: 40 },
];

async function create(
  h: ServiceHarness<Config>,
  org: string,
  body: Record<string, unknown>,
): Promise<Group> {
  const res = await h.request("POST", "/v1/markup-groups", {
    body: { name: "Group", lane: "garment", bands: GARMENT_BANDS, ...body },
    organizationId: org,
  });
  assertEquals(res.status, 201, JSON.stringify(await res.clone().json()));
  return (await json<Group>(res)).data;
}

async function list(h: ServiceHarness<Config>, org: string): Promise<Group[]> {
  const res = await h.request("GET", "/v1/markup-groups", { organizationId: org });
  assertEquals(res.status, 200);
  return (await json<{ items: Group[] }>(res)).data.items;
}

async function eventTypes(h: ServiceHarness<Config>, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${id} ORDER BY id`;
  return rows.map((r) => r.type);
}

Deno.test("markup groups: create, list, get, patch and delete, each with its event", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const garment = await create(h, org, {
    name: "Garments",
    bands: [
      { from: 100, markupType: "fixed", markupValue: 2.5 },
      { from: 1, markupType: "percentage", markupValue: 50 },
      { from: 12, markupType: "percentage", markupValue: 45.125 },
    ],
  });
  assertEquals(garment.name, "Garments");
  assertEquals(garment.lane, "garment");
  assertEquals(garment.decorationMethod, null);
  assertEquals(garment.isDefault, false);
  assertEquals(garment.appliesToSetupCost, false);
  assertEquals(garment.bands, [
    { from: 1, markupType: "percentage", markupValue: 50 },
    { from: 12, markupType: "percentage", markupValue: 45.125 },
    { from: 100, markupType: "fixed", markupValue: 2.5 },
  ], "bands come back as numbers, in ascending from order");
  assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(garment.createdAt));

  const embroidery = await create(h, org, {
    name: "Embroidery",
    lane: "decoration",
    decorationMethod: "Embroidery",
    isDefault: true,
    bands: [{ from: 0, markupType: "fixed", markupValue: 1.75 }],
  });
  assertEquals([embroidery.decorationMethod, embroidery.isDefault], ["Embroidery", true]);
  const setup = await create(h, org, {
    name: "Setup",
    lane: "setup",
    bands: [
      { from: 0, markupType: "percentage", markupValue: 20 },
      { from: 99.99, markupType: "percentage", markupValue: 10 },
    ],
  });
  assertEquals(setup.appliesToSetupCost, true, "derived from the setup lane when not sent");

  assertEquals((await list(h, org)).map((g) => g.id), [garment.id, embroidery.id, setup.id]);

  const got = await h.request("GET", `/v1/markup-groups/${setup.id}`, { organizationId: org });
  assertEquals(got.status, 200);
  assertEquals((await json<Group>(got)).data, setup);

  const patched = await h.request("PATCH", `/v1/markup-groups/${garment.id}`, {
    body: { name: "Tees", bands: [{ from: 0, markupType: "fixed", markupValue: 3 }] },
    organizationId: org,
  });
  assertEquals(patched.status, 200);
  const tees = (await json<Group>(patched)).data;
  assertEquals(tees.name, "Tees");
  assertEquals(tees.bands, [{ from: 0, markupType: "fixed", markupValue: 3 }], "replaced whole");
  assertEquals([tees.lane, tees.isDefault, tees.createdAt], ["garment", false, garment.createdAt]);
  assert(tees.updatedAt >= garment.updatedAt);

  const nameOnly = await h.request("PATCH", `/v1/markup-groups/${setup.id}`, {
    body: { name: "Setup fees" },
    organizationId: org,
  });
  assertEquals((await json<Group>(nameOnly)).data.bands, setup.bands, "bands kept when not sent");

  const deleted = await h.request("DELETE", `/v1/markup-groups/${garment.id}`, {
    organizationId: org,
  });
  assertEquals(deleted.status, 200);
  assertEquals((await json(deleted)).data, { id: garment.id });
  const gone = await h.request("GET", `/v1/markup-groups/${garment.id}`, { organizationId: org });
  assertEquals(gone.status, 404);
  assertEquals((await list(h, org)).map((g) => g.id), [embroidery.id, setup.id]);

  assertEquals(await eventTypes(h, garment.id), [
    "markup_group.created",
    "markup_group.updated",
    "markup_group.deleted",
  ]);
  assertEquals(await eventTypes(h, setup.id), ["markup_group.created", "markup_group.updated"]);
  const [payload] = await h.sql<{ payload: Group }[]>`
    SELECT payload FROM outbox WHERE aggregate_id = ${embroidery.id}`;
  assertEquals(payload?.payload, embroidery);
});

Deno.test("markup groups: another organisation sees none of them", async () => {
  await using h = await harness();
  const owner = crypto.randomUUID();
  const other = crypto.randomUUID();
  const group = await create(h, owner, {});
  assertEquals(await list(h, other), []);
  for (
    const [method, body] of [["GET", undefined], ["PATCH", { name: "Mine now" }], [
      "DELETE",
      undefined,
    ]] as const
  ) {
    const res = await h.request(method, `/v1/markup-groups/${group.id}`, {
      organizationId: other,
      ...(body ? { body } : {}),
    });
    assertEquals(res.status, 404, method);
    assertEquals((await json(res)).error, "not_found");
  }
  const missing = await h.request("GET", `/v1/markup-groups/${crypto.randomUUID()}`, {
    organizationId: owner,
  });
  assertEquals(missing.status, 404);
  for (const method of ["GET", "PATCH", "DELETE"]) {
    const malformed = await h.request(method, "/v1/markup-groups/not-a-uuid", {
      organizationId: owner,
      ...(method === "PATCH" ? { body: { name: "x" } } : {}),
    });
    assertEquals(malformed.status, 400, method);
    const envelope = await json(malformed);
    assertEquals(envelope.error, "validation_error");
    assertEquals(envelope.details?.[0]?.path, "markupGroupId");
  }
  assertEquals((await list(h, owner)).map((g) => [g.id, g.name]), [[group.id, "Group"]]);
});

Deno.test("markup groups: POST refuses invalid groups with 400 details and writes nothing", async (t) => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const valid = { name: "G", lane: "garment", bands: GARMENT_BANDS };
  const cases: [string, unknown, string, string[]][] = [
    ["malformed JSON", "{nope", "invalid_json", []],
    ["an unknown field", { ...valid, colour: "red" }, "validation_error", ["colour"]],
    [
      "an unknown band field",
      {
        ...valid,
        bands: [{ from: 1, markupType: "fixed", markupValue: 1, to: 9 }],
      },
      "validation_error",
      ["bands.0.to"],
    ],
    ["a wrong type", { ...valid, name: 42 }, "validation_error", ["name"]],
    [
      "a string from",
      {
        ...valid,
        bands: [{ from: "1", markupType: "fixed", markupValue: 1 }],
      },
      "validation_error",
      ["bands.0.from"],
    ],
    ["an unknown lane", { ...valid, lane: "shipping" }, "validation_error", ["lane"]],
    ["a missing name", { lane: "garment", bands: GARMENT_BANDS }, "validation_error", ["name"]],
    ["no bands", { ...valid, bands: [] }, "validation_error", ["bands"]],
    [
      "a bad markup type",
      {
        ...valid,
        bands: [{ from: 1, markupType: "margin", markupValue: 1 }],
      },
      "validation_error",
      ["bands.0.markupType"],
    ],
    [
      "an unknown decoration method",
      {
        ...valid,
        lane: "decoration",
        decorationMethod: "Crayon",
      },
      "validation_error",
      ["decorationMethod"],
    ],
    [
      "a fractional quantity from",
      {
        ...valid,
        bands: [
          { from: 1, markupType: "fixed", markupValue: 1 },
          { from: 2.5, markupType: "fixed", markupValue: 1 },
        ],
      },
      "validation_error",
      ["bands.1.from"],
    ],
    [
      "duplicate froms",
      {
        ...valid,
        bands: [
          { from: 1, markupType: "fixed", markupValue: 1 },
          { from: 10, markupType: "fixed", markupValue: 1 },
          { from: 10, markupType: "percentage", markupValue: 5 },
        ],
      },
      "validation_error",
      ["bands.2.from"],
    ],
    [
      "a first band above 1",
      {
        ...valid,
        bands: [
          { from: 10, markupType: "fixed", markupValue: 1 },
          { from: 5, markupType: "fixed", markupValue: 1 },
        ],
      },
      "validation_error",
      ["bands.1.from"],
    ],
    [
      "a setup lane starting at 1",
      {
        ...valid,
        lane: "setup",
        bands: [{ from: 1, markupType: "fixed", markupValue: 1 }],
      },
      "validation_error",
      ["bands.0.from"],
    ],
    [
      "a negative from",
      {
        ...valid,
        bands: [{ from: -1, markupType: "fixed", markupValue: 1 }],
      },
      "validation_error",
      ["bands.0.from"],
    ],
    [
      "a decoration method on the garment lane",
      {
        ...valid,
        decorationMethod: "Embroidery",
      },
      "validation_error",
      ["decorationMethod"],
    ],
    [
      "a decoration method on the setup lane",
      {
        ...valid,
        lane: "setup",
        decorationMethod: "ScreenPrinting",
        bands: [{ from: 0, markupType: "fixed", markupValue: 1 }],
      },
      "validation_error",
      ["decorationMethod"],
    ],
    [
      "appliesToSetupCost on the garment lane",
      {
        ...valid,
        appliesToSetupCost: true,
      },
      "validation_error",
      ["appliesToSetupCost"],
    ],
    [
      "a setup group not applying to setup cost",
      {
        ...valid,
        lane: "setup",
        appliesToSetupCost: false,
        bands: [{ from: 0, markupType: "fixed", markupValue: 1 }],
      },
      "validation_error",
      ["appliesToSetupCost"],
    ],
    [
      "several problems at once",
      {
        ...valid,
        decorationMethod: "Embroidery",
        bands: [
          { from: 3, markupType: "fixed", markupValue: 1 },
          { from: 3.5, markupType: "fixed", markupValue: 1 },
        ],
      },
      "validation_error",
      ["decorationMethod", "bands.1.from", "bands.0.from"],
    ],
    ["an array body", [], "validation_error", []],
  ];
  for (const [name, body, code, paths] of cases) {
    await t.step(name, async () => {
      const res = await h.request("POST", "/v1/markup-groups", { body, organizationId: org });
      assertEquals(res.status, 400);
      const envelope = await json(res);
      assertEquals([envelope.error, envelope.status], [code, false]);
      const got = envelope.details?.map((d) => d.path) ?? [];
      for (const path of paths) {
        assert(got.includes(path), `${path} in ${JSON.stringify(envelope)}`);
      }
    });
  }
  assertEquals((await h.sql`SELECT id FROM markup_groups`).length, 0);
  assertEquals((await h.sql`SELECT id FROM outbox`).length, 0);
});

Deno.test("markup groups: PATCH checks the merged group and refuses bad bodies", async (t) => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const garment = await create(h, org, {
    bands: [
      { from: 0, markupType: "fixed", markupValue: 1 },
      { from: 10, markupType: "fixed", markupValue: 1 },
    ],
  });
  const decoration = await create(h, org, {
    lane: "decoration",
    decorationMethod: "Embroidery",
    bands: [{ from: 1, markupType: "fixed", markupValue: 1 }],
  });
  const cases: [string, string, unknown, string, string[]][] = [
    ["malformed JSON", garment.id, "{", "invalid_json", []],
    ["an unknown field", garment.id, { colour: "red" }, "validation_error", ["colour"]],
    ["a wrong type", garment.id, { isDefault: "yes" }, "validation_error", ["isDefault"]],
    ["a null name", garment.id, { name: null }, "validation_error", ["name"]],
    [
      "bad new bands",
      garment.id,
      {
        bands: [
          { from: 1, markupType: "fixed", markupValue: 1 },
          { from: 1, markupType: "fixed", markupValue: 2 },
        ],
      },
      "validation_error",
      ["bands.1.from"],
    ],
    [
      "moving to the setup lane with bands that start at 1",
      decoration.id,
      {
        lane: "setup",
        decorationMethod: null,
      },
      "validation_error",
      ["bands.0.from"],
    ],
    [
      "moving off the decoration lane keeping the method",
      decoration.id,
      {
        lane: "garment",
      },
      "validation_error",
      ["decorationMethod"],
    ],
    [
      "a method on the garment lane",
      garment.id,
      {
        decorationMethod: "ScreenPrinting",
      },
      "validation_error",
      ["decorationMethod"],
    ],
    [
      "appliesToSetupCost off the setup lane",
      garment.id,
      {
        appliesToSetupCost: true,
      },
      "validation_error",
      ["appliesToSetupCost"],
    ],
    [
      "moving to setup while refusing setup cost",
      garment.id,
      {
        lane: "setup",
        appliesToSetupCost: false,
      },
      "validation_error",
      ["appliesToSetupCost"],
    ],
  ];
  for (const [name, id, body, code, paths] of cases) {
    await t.step(name, async () => {
      const res = await h.request("PATCH", `/v1/markup-groups/${id}`, {
        body,
        organizationId: org,
      });
      assertEquals(res.status, 400);
      const envelope = await json(res);
      assertEquals(envelope.error, code);
      const got = envelope.details?.map((d) => d.path) ?? [];
      for (const path of paths) {
        assert(got.includes(path), `${path} in ${JSON.stringify(envelope)}`);
      }
    });
  }
  assertEquals(await list(h, org), [garment, decoration], "nothing changed");
  assertEquals((await h.sql`SELECT id FROM outbox WHERE type = 'markup_group.updated'`).length, 0);

  await t.step("moving to the setup lane derives appliesToSetupCost", async () => {
    const res = await h.request("PATCH", `/v1/markup-groups/${garment.id}`, {
      body: { lane: "setup" },
      organizationId: org,
    });
    assertEquals(res.status, 200);
    const moved = (await json<Group>(res)).data;
    assertEquals([moved.lane, moved.appliesToSetupCost], ["setup", true]);
    const back = await h.request("PATCH", `/v1/markup-groups/${garment.id}`, {
      body: { lane: "decoration", decorationMethod: "DirectToFilm" },
      organizationId: org,
    });
    assertEquals(back.status, 200);
    const data = (await json<Group>(back)).data;
    assertEquals([data.lane, data.decorationMethod, data.appliesToSetupCost], [
      "decoration",
      "DirectToFilm",
      false,
    ]);
  });

  await t.step("an empty PATCH changes nothing", async () => {
    const res = await h.request("PATCH", `/v1/markup-groups/${decoration.id}`, {
      body: {},
      organizationId: org,
    });
    assertEquals(res.status, 200);
    assertEquals((await json<Group>(res)).data, decoration);
  });
});

Deno.test("markup groups: isDefault moves the default of a (lane, method) in one transaction", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const a = await create(h, org, { name: "A", isDefault: true });
  await create(h, other, { name: "Theirs", isDefault: true });
  const anyMethod = await create(h, org, {
    name: "Any decoration",
    lane: "decoration",
    isDefault: true,
  });
  await create(h, org, {
    name: "Screen",
    lane: "decoration",
    decorationMethod: "ScreenPrinting",
    isDefault: true,
  });
  await create(h, org, { name: "B", isDefault: true });
  const defaults = async (o: string): Promise<string[]> =>
    (await list(h, o)).filter((g) => g.isDefault).map((g) => g.name);
  assertEquals(await defaults(org), ["Any decoration", "Screen", "B"]);
  assertEquals(await defaults(other), ["Theirs"], "another organisation's default is left alone");
  assertEquals(await eventTypes(h, a.id), ["markup_group.created", "markup_group.updated"]);

  const res = await h.request("PATCH", `/v1/markup-groups/${a.id}`, {
    body: { isDefault: true },
    organizationId: org,
  });
  assertEquals(res.status, 200);
  assertEquals(await defaults(org), ["A", "Any decoration", "Screen"]);

  // Moving a default group to another (lane, method) takes that default over too.
  const moved = await h.request("PATCH", `/v1/markup-groups/${a.id}`, {
    body: { lane: "decoration", decorationMethod: "ScreenPrinting" },
    organizationId: org,
  });
  assertEquals(moved.status, 200);
  assertEquals(await defaults(org), ["A", "Any decoration"]);
  assertEquals((await json<Group>(moved)).data.isDefault, true);

  const unset = await h.request("PATCH", `/v1/markup-groups/${anyMethod.id}`, {
    body: { isDefault: false },
    organizationId: org,
  });
  assertEquals((await json<Group>(unset)).data.isDefault, false);
  assertEquals(await defaults(org), ["A"]);
});

Deno.test("markup groups: concurrent default creates leave exactly one default", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const groups = await Promise.all(
    Array.from({ length: 8 }, (_, i) => create(h, org, { name: `G${i}`, isDefault: true })),
  );
  assertEquals(groups.length, 8);
  const defaults = (await list(h, org)).filter((g) => g.isDefault);
  assertEquals(defaults.length, 1);
});

Deno.test("markup groups: DELETE of a group quote rows use is a 409 that counts them", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const garment = await create(h, org, {});
  const setup = await create(h, org, {
    lane: "setup",
    bands: [{ from: 0, markupType: "percentage", markupValue: 10 }],
  });
  const quoteId = crypto.randomUUID();
  const groupId = crypto.randomUUID();
  const lineId = crypto.randomUUID();
  await h.sql`
    INSERT INTO quotes (id, organization_id, quote_number, quote_ref)
    VALUES (${quoteId}, ${org}, 1, 'Q-00001')`;
  await h.sql`
    INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
    VALUES (${groupId}, ${org}, ${quoteId}, 'Staff', 1)`;
  await h.sql`
    INSERT INTO quote_lines (
      id, organization_id, quote_id, quote_group_id, line_type, product_name, sort_order
    ) VALUES (${lineId}, ${org}, ${quoteId}, ${groupId}, 'Garment', 'Tee', 1)`;
  for (const sort of [1, 2]) {
    await h.sql`
      INSERT INTO quote_variants (
        id, organization_id, quote_id, quote_line_id, quantity, unit_price_ex_gst, sort_order,
        markup_source, markup_group_id
      ) VALUES (
        ${crypto.randomUUID()}, ${org}, ${quoteId}, ${lineId}, 5, 10, ${sort}, 'group',
        ${garment.id}
      )`;
  }
  await h.sql`
    INSERT INTO quote_decorations (
      id, organization_id, quote_id, quote_group_id, quantity, sort_order,
      setup_markup_source, setup_markup_group_id
    ) VALUES (${crypto.randomUUID()}, ${org}, ${quoteId}, ${groupId}, 5, 1, 'group', ${setup.id})`;

  const refused = await h.request("DELETE", `/v1/markup-groups/${garment.id}`, {
    organizationId: org,
  });
  assertEquals(refused.status, 409);
  const envelope = await json(refused);
  assertEquals(envelope.error, "conflict");
  assert(envelope.message.includes("2 quote rows"), envelope.message);
  const refusedSetup = await h.request("DELETE", `/v1/markup-groups/${setup.id}`, {
    organizationId: org,
  });
  assertEquals(refusedSetup.status, 409);
  assert((await json(refusedSetup)).message.includes("1 quote row "));
  assertEquals((await list(h, org)).length, 2, "both groups are still there");
  assertEquals(await eventTypes(h, garment.id), ["markup_group.created"]);

  await h.sql`DELETE FROM quotes WHERE id = ${quoteId}`;
  const res = await h.request("DELETE", `/v1/markup-groups/${garment.id}`, {
    organizationId: org,
  });
  assertEquals(res.status, 200);
  assertEquals(await eventTypes(h, garment.id), ["markup_group.created", "markup_group.deleted"]);
});

Deno.test("markup groups: a quotes.read caller can read but not write", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const group = await create(h, org, {});
  const scopes = ["quotes.read"];
  const writes: [string, string, unknown][] = [
    ["POST", "/v1/markup-groups", { name: "G", lane: "garment", bands: GARMENT_BANDS }],
    ["PATCH", `/v1/markup-groups/${group.id}`, { name: "X" }],
    ["DELETE", `/v1/markup-groups/${group.id}`, undefined],
  ];
  for (const [method, path, body] of writes) {
    const res = await h.request(method, path, {
      organizationId: org,
      scopes,
      ...(body ? { body } : {}),
    });
    assertEquals(res.status, 403, method);
    const envelope = await json(res);
    assertEquals(envelope.error, "insufficient_scope");
    assert(envelope.message.includes("quotes.write"));
  }
  const read = await h.request("GET", "/v1/markup-groups", { organizationId: org, scopes });
  assertEquals(read.status, 200);
  const none = await h.request("GET", `/v1/markup-groups/${group.id}`, {
    organizationId: org,
    scopes: ["garments.read"],
  });
  assertEquals(none.status, 403);
  assertEquals(await list(h, org), [group]);
});

Deno.test("markup groups: without costs.read a group shows no bands and bands cannot be written", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const group = await create(h, org, {});
  const scopes = ["quotes.read", "quotes.write"];
  const as = { organizationId: org, scopes };
  const listed = await json<{ items: Group[] }>(await h.request("GET", "/v1/markup-groups", as));
  const { bands: _bands, ...withoutBands } = group;
  assertEquals(listed.data.items, [withoutBands]);
  const one = await json<Group>(await h.request("GET", `/v1/markup-groups/${group.id}`, as));
  assertEquals(one.data, withoutBands);
  const refused = await h.request("POST", "/v1/markup-groups", {
    ...as,
    body: { name: "G", lane: "garment", bands: GARMENT_BANDS },
  });
  assertEquals(refused.status, 403);
  assert((await json(refused)).message.includes("costs.read"));
  const patchBands = await h.request("PATCH", `/v1/markup-groups/${group.id}`, {
    ...as,
    body: { bands: GARMENT_BANDS.slice(0, 1) },
  });
  assertEquals(patchBands.status, 403);
  const renamed = await h.request("PATCH", `/v1/markup-groups/${group.id}`, {
    ...as,
    body: { name: "Renamed" },
  });
  assertEquals(renamed.status, 200);
  const data = (await json<Group>(renamed)).data;
  assertEquals([data.name, "bands" in data], ["Renamed", false]);
  assertEquals((await list(h, org))[0]!.bands, GARMENT_BANDS, "the bands were not touched");
});

/** A draft quote with one group and one garment line, for rows that band through groups. */
async function lineAndGroup(
  h: ServiceHarness<Config>,
  org: string,
): Promise<{ lineId: string; groupId: string }> {
  const as = { organizationId: org };
  const quote = await json<{ id: string }>(
    await h.request("POST", "/v1/quotes", { ...as, body: {} }),
  );
  const group = await json<{ id: string }>(
    await h.request("POST", `/v1/quotes/${quote.data.id}/groups`, { ...as, body: { name: "G" } }),
  );
  const line = await json<{ id: string }>(
    await h.request("POST", `/v1/quote-groups/${group.data.id}/lines`, {
      ...as,
      body: { lineType: "Garment", productName: "Tee" },
    }),
  );
  return { lineId: line.data.id, groupId: group.data.id };
}

Deno.test("markup groups: a group-priced row needs a group to band through, never a silent 0", async (t) => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const { lineId, groupId } = await lineAndGroup(h, org);
  const as = { organizationId: org };
  const variantBody = { size: "M", quantity: 15, buyPrice: 5.5, markupSource: "group" };

  await t.step("a variant, with no default garment group: 400 naming markupSource", async () => {
    const res = await h.request("POST", `/v1/quote-lines/${lineId}/variants`, {
      ...as,
      body: variantBody,
    });
    assertEquals(res.status, 400);
    const body = await json(res);
    assertEquals(body.details?.[0]?.path, "markupSource");
    assertEquals(body.message.includes("markupGroupId"), true, body.message);
  });

  await t.step("a decoration's unit or setup lane, likewise", async () => {
    for (
      const [source, field] of [["markupSource", "markupSource"], [
        "setupMarkupSource",
        "setupMarkupSource",
      ]]
    ) {
      const res = await h.request("POST", `/v1/quote-groups/${groupId}/decorations`, {
        ...as,
        body: { quantity: 10, unitCost: 2, setupCost: 30, [source!]: "group" },
      });
      assertEquals(res.status, 400, source);
      assertEquals((await json(res)).details?.[0]?.path, field);
    }
  });

  await t.step("with a default garment group the same variant bands through it", async () => {
    await create(h, org, { isDefault: true });
    const res = await h.request("POST", `/v1/quote-lines/${lineId}/variants`, {
      ...as,
      body: variantBody,
    });
    assertEquals(res.status, 201);
    // 15 on the line: the 1+ band, 50 %, on a cost of 5.50.
    assertEquals((await json<{ unitPriceExGst: number }>(res)).data.unitPriceExGst, 8.25);
  });

  await t.step("another organisation's group is refused as if it did not exist", async () => {
    const theirs = await create(h, crypto.randomUUID(), {});
    for (
      const body of [{ ...variantBody, markupGroupId: theirs.id }, {
        size: "L",
        quantity: 1,
        markupGroupId: theirs.id,
      }]
    ) {
      const res = await h.request("POST", `/v1/quote-lines/${lineId}/variants`, { ...as, body });
      assertEquals(res.status, 400);
      assertEquals((await json(res)).details?.[0]?.path, "markupGroupId");
    }
    const [used] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM quote_variants WHERE markup_group_id = ${theirs.id}`;
    assertEquals(used?.n, 0, "nothing of ours points at their group");
  });
});

Deno.test("markup groups: DELETE racing a row pointed at the group is a 409 or a 400, never a 500", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const as = { organizationId: org };
  // Two quotes, so the variant and the decoration do not queue on one quote's lock.
  const { lineId } = await lineAndGroup(h, org);
  const { groupId } = await lineAndGroup(h, org);
  const setupBands = [{ from: 0, markupType: "percentage", markupValue: 10 }];
  for (let i = 0; i < 40; i++) {
    const garment = await create(h, org, { name: `G${i}` });
    const setup = await create(h, org, { name: `S${i}`, lane: "setup", bands: setupBands });
    const [variant, garmentDelete, decoration, setupDelete] = await Promise.all([
      h.request("POST", `/v1/quote-lines/${lineId}/variants`, {
        ...as,
        body: {
          size: "M",
          quantity: 5,
          buyPrice: 4,
          markupSource: "group",
          markupGroupId: garment.id,
        },
      }),
      h.request("DELETE", `/v1/markup-groups/${garment.id}`, as),
      h.request("POST", `/v1/quote-groups/${groupId}/decorations`, {
        ...as,
        body: {
          quantity: 5,
          setupCost: 30,
          setupMarkupSource: "group",
          setupMarkupGroupId: setup.id,
        },
      }),
      h.request("DELETE", `/v1/markup-groups/${setup.id}`, as),
    ]);
    for (
      const [row, removal, what] of [
        [variant, garmentDelete, "variant"],
        [decoration, setupDelete, "decoration"],
      ] as const
    ) {
      const [rowText, removalText] = [await row.text(), await removal.text()];
      const answers = `${what} ${row.status} ${rowText}, delete ${removal.status} ${removalText}`;
      // Either the row came first (the delete counts it: 409) or the delete did (the group is
      // gone: the row's body names a group that does not exist, 400).
      assert(
        (row.status === 201 && removal.status === 409) ||
          (row.status === 400 && removal.status === 200),
        answers,
      );
    }
  }
});

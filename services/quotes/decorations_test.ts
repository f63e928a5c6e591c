import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Envelope, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { COSTS_READ_FIELDS } from "@printshop/shared/costs";
import {
  CreateQuoteDecorationBody,
  type QuoteGroupDecoration,
} from "@printshop/shared/contracts/quotes";
import type { Config } from "./config.ts";
import { quotesService } from "./app.ts";

const config = { PAGE_SIZE_MAX: 50 };

const WITHOUT_COSTS = ALL_SCOPES.filter((s) => s !== "costs.read");

interface Totals {
  subtotalExGst: number;
  gstAmount: number;
  totalIncGst: number;
}

type Decoration = QuoteGroupDecoration;

async function harness(): Promise<ServiceHarness<Config>> {
  return await serviceHarness(quotesService, { config });
}

/** One organisation's view of the harness: every call is made as `org`. */
interface Session {
  h: ServiceHarness<Config>;
  org: string;
  call<T = unknown>(
    method: string,
    path: string,
    options?: { body?: unknown; scopes?: readonly string[]; org?: string },
  ): Promise<{ status: number; body: Envelope<T> }>;
  /** A draft quote with one empty group. */
  newGroup(): Promise<{ quoteId: string; groupId: string }>;
  /** A decoration as GET /v1/quotes/{id} shows it to a caller with these scopes. */
  decorationIn(
    quoteId: string,
    decorationId: string,
    scopes?: readonly string[],
  ): Promise<Decoration>;
  createDecoration(
    groupId: string,
    body: Record<string, unknown>,
    scopes?: readonly string[],
  ): Promise<Decoration>;
  totals(quoteId: string): Promise<Totals>;
  /** The group's rows in their shared order, as `kind:id@sortOrder`. */
  order(groupId: string): Promise<{ kind: string; id: string; sortOrder: number }[]>;
  insertLine(
    quoteId: string,
    groupId: string,
    sortOrder: number,
    quantity?: number,
    unitPrice?: string,
  ): Promise<string>;
}

function session(h: ServiceHarness<Config>, org = crypto.randomUUID()): Session {
  const s: Session = {
    h,
    org,
    async call<T = unknown>(
      method: string,
      path: string,
      options: { body?: unknown; scopes?: readonly string[]; org?: string } = {},
    ): Promise<{ status: number; body: Envelope<T> }> {
      const res = await h.request(method, path, {
        organizationId: options.org ?? org,
        ...(options.body !== undefined ? { body: options.body } : {}),
        ...(options.scopes ? { scopes: options.scopes } : {}),
      });
      return { status: res.status, body: await res.json() as Envelope<T> };
    },
    async newGroup(): Promise<{ quoteId: string; groupId: string }> {
      const quote = await s.call<{ id: string }>("POST", "/v1/quotes", { body: {} });
      assertEquals(quote.status, 201, JSON.stringify(quote.body));
      const group = await s.call<{ id: string }>(
        "POST",
        `/v1/quotes/${quote.body.data.id}/groups`,
        {
          body: { name: "Tees" },
        },
      );
      assertEquals(group.status, 201, JSON.stringify(group.body));
      return { quoteId: quote.body.data.id, groupId: group.body.data.id };
    },
    async createDecoration(groupId, body, scopes): Promise<Decoration> {
      const res = await s.call<Decoration>("POST", `/v1/quote-groups/${groupId}/decorations`, {
        body,
        ...(scopes ? { scopes } : {}),
      });
      assertEquals(res.status, 201, JSON.stringify(res.body));
      return res.body.data;
    },
    async decorationIn(quoteId, decorationId, scopes): Promise<Decoration> {
      const res = await s.call<{ groups: { decorations: Decoration[] }[] }>(
        "GET",
        `/v1/quotes/${quoteId}`,
        scopes ? { scopes } : {},
      );
      assertEquals(res.status, 200, JSON.stringify(res.body));
      const found = res.body.data.groups.flatMap((g) => g.decorations).find((d) =>
        d.id === decorationId
      );
      assert(found, `decoration ${decorationId} in quote ${quoteId}`);
      return found;
    },
    async totals(quoteId: string): Promise<Totals> {
      const res = await s.call<Totals>("GET", `/v1/quotes/${quoteId}`);
      assertEquals(res.status, 200, JSON.stringify(res.body));
      const { subtotalExGst, gstAmount, totalIncGst } = res.body.data;
      return { subtotalExGst, gstAmount, totalIncGst };
    },
    async order(groupId: string): Promise<{ kind: string; id: string; sortOrder: number }[]> {
      const rows = await h.sql<{ kind: string; id: string; sort_order: number }[]>`
        SELECT 'line' AS kind, id, sort_order FROM quote_lines WHERE quote_group_id = ${groupId}
        UNION ALL
        SELECT 'decoration', id, sort_order FROM quote_decorations
          WHERE quote_group_id = ${groupId}
        ORDER BY sort_order, kind, id`;
      return rows.map((r) => ({ kind: r.kind, id: r.id, sortOrder: r.sort_order }));
    },
    async insertLine(quoteId, groupId, sortOrder, quantity = 0, unitPrice = "0"): Promise<string> {
      const id = crypto.randomUUID();
      await h.sql`
        INSERT INTO quote_lines (id, organization_id, quote_id, quote_group_id, line_type,
          product_name, quantity, unit_price_ex_gst, sort_order)
        VALUES (${id}, ${org}, ${quoteId}, ${groupId}, 'Service', 'Artwork', ${quantity},
          ${unitPrice}, ${sortOrder})`;
      return id;
    },
  };
  return s;
}

async function insertMarkupGroup(
  h: ServiceHarness<Config>,
  org: string,
  lane: "garment" | "decoration" | "setup",
  bands: { from: number; markupType: "percentage" | "fixed"; markupValue: number }[],
  options: { isDefault?: boolean; appliesToSetupCost?: boolean } = {},
): Promise<string> {
  const id = crypto.randomUUID();
  await h.sql`
    INSERT INTO markup_groups (id, organization_id, name, lane, is_default, applies_to_setup_cost,
      bands)
    VALUES (${id}, ${org}, ${`${lane} bands`}, ${lane}, ${options.isDefault ?? false},
      ${options.appliesToSetupCost ?? false}, ${h.sql.json(bands)})`;
  return id;
}

async function eventsOf(
  h: ServiceHarness<Config>,
  aggregateId: string,
): Promise<{ type: string; payload: Record<string, unknown> }[]> {
  return await h.sql<{ type: string; payload: Record<string, unknown> }[]>`
    SELECT type, payload FROM outbox WHERE aggregate_id = ${aggregateId} ORDER BY id`;
}

const WORKED_EXAMPLE = {
  quantity: 15,
  unitCost: 1.2,
  markupType: "percentage",
  markupValue: 50,
  setupCost: 30,
  setupMarkupType: "fixed",
  setupMarkupValue: 15,
  includeSetupCost: true,
} as const;

Deno.test("POST decorations stores every field and recomputes the quote's totals", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const decorationItemId = crypto.randomUUID();
  const decoration = await s.createDecoration(groupId, {
    ...WORKED_EXAMPLE,
    decorationItemId,
    method: "ScreenPrinting",
    position: "  Left Chest  ",
    description: "Club crest",
    widthCm: 0,
    lengthCm: 12.5,
    necklineDropCm: null,
    screenCount: 3,
    screenMeshGrade: "160",
    colourCount: 2,
    colours: [{ name: "Red" }, { name: "White", isBase: true }, { name: "Navy", isBase: false }],
    specialInstructions: "Check the crest proof with Sam before burning screens",
    artworkFileUrl: "https://files.example.com/crest.ai",
    separationFileUrl: "https://files.example.com/crest-seps.pdf",
    rollUp: true,
    rollUpSetup: true,
    showOnDocuments: false,
  });
  const { id, createdAt, updatedAt, ...fields } = decoration;
  assert(typeof id === "string" && typeof createdAt === "string" && typeof updatedAt === "string");
  assertEquals(fields, {
    quoteGroupId: groupId,
    decorationItemId,
    method: "ScreenPrinting",
    position: "Left Chest",
    quantity: 15,
    setupCost: 30,
    unitCost: 1.2,
    baseUnitCost: 1.8,
    baseSetupCost: 45,
    includeSetupCost: true,
    markupType: "percentage",
    markupValue: 50,
    markupSource: "manual",
    markupGroupId: null,
    setupMarkupType: "fixed",
    setupMarkupValue: 15,
    setupMarkupSource: "manual",
    setupMarkupGroupId: null,
    rollUp: true,
    rollUpSetup: true,
    showOnDocuments: false,
    description: "Club crest",
    widthCm: 0,
    lengthCm: 12.5,
    necklineDropCm: null,
    screenCount: 3,
    screenMeshGrade: "160",
    colourCount: 2,
    colours: [
      { name: "White", isBase: true },
      { name: "Red", isBase: false },
      { name: "Navy", isBase: false },
    ],
    specialInstructions: "Check the crest proof with Sam before burning screens",
    artworkFileUrl: "https://files.example.com/crest.ai",
    separationFileUrl: "https://files.example.com/crest-seps.pdf",
    sortOrder: 1,
  });
  assertEquals(await s.totals(quoteId), { subtotalExGst: 72, gstAmount: 7.2, totalIncGst: 79.2 });

  const [stored] = await h.sql<{ colours: unknown }[]>`
    SELECT colours FROM quote_decorations WHERE id = ${id}`;
  assertEquals(stored?.colours, [
    { name: "Red", isBase: false },
    { name: "White", isBase: true },
    { name: "Navy", isBase: false },
  ], "stored in the operator's order");

  const events = await eventsOf(h, id);
  assertEquals(events.map((e) => e.type), ["quote_decoration.created"]);
  assertEquals(events[0]!.payload, decoration, "the payload is the decoration after recompute");
});

Deno.test("POST decorations applies the defaults", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, { quantity: 4 });
  assertEquals(
    {
      decorationItemId: decoration.decorationItemId,
      method: decoration.method,
      position: decoration.position,
      unitCost: decoration.unitCost,
      setupCost: decoration.setupCost,
      baseUnitCost: decoration.baseUnitCost,
      baseSetupCost: decoration.baseSetupCost,
      includeSetupCost: decoration.includeSetupCost,
      rollUp: decoration.rollUp,
      rollUpSetup: decoration.rollUpSetup,
      showOnDocuments: decoration.showOnDocuments,
      markupSource: decoration.markupSource,
      setupMarkupSource: decoration.setupMarkupSource,
      markupType: decoration.markupType,
      colours: decoration.colours,
      widthCm: decoration.widthCm,
      specialInstructions: decoration.specialInstructions,
    },
    {
      decorationItemId: null,
      method: null,
      position: null,
      unitCost: 0,
      setupCost: 0,
      baseUnitCost: 0,
      baseSetupCost: 0,
      includeSetupCost: false,
      rollUp: false,
      rollUpSetup: false,
      showOnDocuments: true,
      markupSource: "manual",
      setupMarkupSource: "manual",
      markupType: null,
      colours: [],
      widthCm: null,
      specialInstructions: null,
    },
  );
  assertEquals(await s.totals(quoteId), { subtotalExGst: 0, gstAmount: 0, totalIncGst: 0 });
});

Deno.test("base costs given directly price a lane without a markup", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, {
    quantity: 4,
    baseUnitCost: 2.5,
    baseSetupCost: 20,
    includeSetupCost: true,
  });
  assertEquals([decoration.baseUnitCost, decoration.baseSetupCost], [2.5, 20]);
  assertEquals(await s.totals(quoteId), { subtotalExGst: 30, gstAmount: 3, totalIncGst: 33 });
  // A markup takes over: the base cost is derived from cost ⊕ markup.
  const res = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${decoration.id}`, {
    body: { unitCost: 2, markupType: "fixed", markupValue: 1 },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  assertEquals(res.body.data.baseUnitCost, 3);
  assertEquals(await s.totals(quoteId), { subtotalExGst: 32, gstAmount: 3.2, totalIncGst: 35.2 });
});

Deno.test("includeSetupCost false leaves the setup lane inert; display toggles never change totals", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, {
    ...WORKED_EXAMPLE,
    includeSetupCost: false,
  });
  assertEquals(decoration.baseSetupCost, 45, "the setup lane is still priced, just not charged");
  const inert = { subtotalExGst: 27, gstAmount: 2.7, totalIncGst: 29.7 };
  assertEquals(await s.totals(quoteId), inert);

  const patch = async (body: Record<string, unknown>): Promise<Decoration> => {
    const res = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${decoration.id}`, {
      body,
    });
    assertEquals(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  };
  for (
    const body of [
      { rollUp: true },
      { rollUpSetup: true },
      { showOnDocuments: false },
      { rollUp: false, rollUpSetup: false, showOnDocuments: true },
    ]
  ) {
    await patch(body);
    assertEquals(await s.totals(quoteId), inert, JSON.stringify(body));
  }

  const included = await patch({ includeSetupCost: true });
  assertEquals(included.includeSetupCost, true);
  const charged = { subtotalExGst: 72, gstAmount: 7.2, totalIncGst: 79.2 };
  assertEquals(await s.totals(quoteId), charged);
  for (const body of [{ rollUp: true }, { rollUpSetup: true }, { showOnDocuments: false }]) {
    await patch(body);
    assertEquals(await s.totals(quoteId), charged, JSON.stringify(body));
  }

  const events = await eventsOf(h, decoration.id);
  assertEquals(events.filter((e) => e.type === "quote_decoration.updated").length, 8);
  assertEquals(events.at(-1)!.payload.showOnDocuments, false);
});

Deno.test("decorations and lines share one sortOrder sequence", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const lineA = await s.insertLine(quoteId, groupId, 1, 2, "10.00");
  const lineB = await s.insertLine(quoteId, groupId, 2);

  const appended = await s.createDecoration(groupId, { quantity: 1, baseUnitCost: 5 });
  assertEquals(appended.sortOrder, 3, "appended after both lines");
  assertEquals(await s.totals(quoteId), { subtotalExGst: 25, gstAmount: 2.5, totalIncGst: 27.5 });

  const first = await s.createDecoration(groupId, { quantity: 1, sortOrder: 1 });
  assertEquals(first.sortOrder, 1);
  assertEquals((await s.order(groupId)).map((r) => [r.id, r.sortOrder]), [
    [first.id, 1],
    [lineA, 2],
    [lineB, 3],
    [appended.id, 4],
  ]);

  const middle = await s.createDecoration(groupId, { quantity: 1, sortOrder: 3 });
  const clamped = await s.createDecoration(groupId, { quantity: 1, sortOrder: 99 });
  assertEquals([middle.sortOrder, clamped.sortOrder], [3, 6]);
  assertEquals((await s.order(groupId)).map((r) => r.id), [
    first.id,
    lineA,
    middle.id,
    lineB,
    appended.id,
    clamped.id,
  ]);

  // Move a decoration down, then to the top: the sequence stays 1..n.
  const moved = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${first.id}`, {
    body: { sortOrder: 4 },
  });
  assertEquals(moved.status, 200, JSON.stringify(moved.body));
  assertEquals(moved.body.data.sortOrder, 4);
  assertEquals((await s.order(groupId)).map((r) => [r.id, r.sortOrder]), [
    [lineA, 1],
    [middle.id, 2],
    [lineB, 3],
    [first.id, 4],
    [appended.id, 5],
    [clamped.id, 6],
  ]);
  const top = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${clamped.id}`, {
    body: { sortOrder: 1 },
  });
  assertEquals(top.body.data.sortOrder, 1);
  const beyond = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${middle.id}`, {
    body: { sortOrder: 500 },
  });
  assertEquals(beyond.body.data.sortOrder, 6, "clamped to the end");
  assertEquals((await s.order(groupId)).map((r) => [r.id, r.sortOrder]), [
    [clamped.id, 1],
    [lineA, 2],
    [lineB, 3],
    [first.id, 4],
    [appended.id, 5],
    [middle.id, 6],
  ]);

  // Delete closes the gap across both collections and recomputes the totals.
  const deleted = await s.call<{ id: string }>("DELETE", `/v1/quote-decorations/${first.id}`);
  assertEquals(deleted.status, 200, JSON.stringify(deleted.body));
  assertEquals(deleted.body.data, { id: first.id });
  const gone = await s.call("DELETE", `/v1/quote-decorations/${appended.id}`);
  assertEquals(gone.status, 200);
  assertEquals((await s.order(groupId)).map((r) => [r.id, r.sortOrder]), [
    [clamped.id, 1],
    [lineA, 2],
    [lineB, 3],
    [middle.id, 4],
  ]);
  assertEquals(await s.totals(quoteId), { subtotalExGst: 20, gstAmount: 2, totalIncGst: 22 });
  const [event] = (await eventsOf(h, first.id)).filter((e) =>
    e.type === "quote_decoration.deleted"
  );
  assertEquals(event?.payload, { id: first.id, quoteGroupId: groupId });
  const again = await s.call("DELETE", `/v1/quote-decorations/${first.id}`);
  assertEquals([again.status, again.body.error], [404, "not_found"]);
});

Deno.test("position, colours and centimetres are validated", async (t) => {
  await using h = await harness();
  const s = session(h);
  const { groupId } = await s.newGroup();
  const path = `/v1/quote-groups/${groupId}/decorations`;

  const refused: [string, Record<string, unknown>, string][] = [
    ["an empty position", { position: "" }, "position"],
    ["a blank position", { position: "   " }, "position"],
    ["a position over 100 characters", { position: "x".repeat(101) }, "position"],
    [
      "two base colours",
      { colours: [{ name: "White", isBase: true }, { name: "Black", isBase: true }] },
      "colours",
    ],
    ["a colour without a name", { colours: [{ name: " " }] }, "colours.0.name"],
    ["a negative width", { widthCm: -1 }, "widthCm"],
    ["a negative length", { lengthCm: -0.5 }, "lengthCm"],
    ["a negative neckline drop", { necklineDropCm: -2 }, "necklineDropCm"],
  ];
  for (const [name, fields, field] of refused) {
    await t.step(name, async () => {
      const res = await s.call("POST", path, {
        body: { quantity: 1, ...fields },
      });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals(res.body.error, "validation_error");
      assert(res.body.details?.some((d) => d.path === field), JSON.stringify(res.body));
    });
  }
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quote_decorations`;
  assertEquals(count?.n, 0);

  await t.step("accepted values", async () => {
    const exactly100 = await s.createDecoration(groupId, {
      quantity: 1,
      position: ` ${"p".repeat(100)} `,
    });
    assertEquals(exactly100.position, "p".repeat(100));
    const measured = await s.createDecoration(groupId, {
      quantity: 1,
      position: null,
      widthCm: 0,
      lengthCm: 0,
      necklineDropCm: 7.25,
      colours: [{ name: "Black" }, { name: "Gold" }],
    });
    assertEquals(
      [measured.position, measured.widthCm, measured.lengthCm, measured.necklineDropCm],
      [null, 0, 0, 7.25],
    );
    assertEquals(measured.colours, [
      { name: "Black", isBase: false },
      { name: "Gold", isBase: false },
    ]);

    // PATCH: the same rules; null clears, 0 is kept.
    const patch = async (body: Record<string, unknown>): Promise<{
      status: number;
      body: Envelope<Decoration>;
    }> => await s.call<Decoration>("PATCH", `/v1/quote-decorations/${measured.id}`, { body });
    assertEquals((await patch({ position: "  " })).status, 400);
    assertEquals((await patch({ widthCm: -3 })).status, 400);
    assertEquals(
      (await patch({ colours: [{ name: "A", isBase: true }, { name: "B", isBase: true }] }))
        .status,
      400,
    );
    const changed = await patch({
      position: " Back ",
      necklineDropCm: null,
      widthCm: 30,
      colours: [{ name: "Black" }, { name: "Gold", isBase: true }],
    });
    assertEquals(changed.status, 200, JSON.stringify(changed.body));
    assertEquals(
      [changed.body.data.position, changed.body.data.necklineDropCm, changed.body.data.widthCm],
      ["Back", null, 30],
    );
    assertEquals(changed.body.data.lengthCm, 0, "untouched fields keep their value");
    assertEquals(changed.body.data.colours, [
      { name: "Gold", isBase: true },
      { name: "Black", isBase: false },
    ]);
    const cleared = await patch({ position: null });
    assertEquals(cleared.body.data.position, null);
  });
});

Deno.test("cost and margin fields need costs.read to be set and are absent without it", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();

  for (const field of COSTS_READ_FIELDS.filter((f) => f in CreateQuoteDecorationBody.shape)) {
    const value = field.endsWith("Type") ? "fixed" : 1;
    const res = await s.call("POST", `/v1/quote-groups/${groupId}/decorations`, {
      body: { quantity: 1, [field]: value },
      scopes: WITHOUT_COSTS,
    });
    assertEquals(res.status, 403, `${field}: ${JSON.stringify(res.body)}`);
    assertEquals(res.body.error, "insufficient_scope");
    assert(res.body.message.includes("costs.read") && res.body.message.includes(field));
  }
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quote_decorations`;
  assertEquals(count?.n, 0);

  // Priced by the shop (costs.read): a fixed markup of 2 on a cost of 0.
  const priced = await s.createDecoration(groupId, {
    quantity: 10,
    markupType: "fixed",
    markupValue: 2,
  });
  const hidden = await s.decorationIn(quoteId, priced.id, WITHOUT_COSTS);
  for (const field of COSTS_READ_FIELDS) {
    assert(!(field in hidden), `${field} is hidden: ${JSON.stringify(hidden)}`);
  }
  assertEquals(hidden.baseUnitCost, 2, "the customer charge is visible");

  // Without costs.read the charge itself is written: the lane becomes manual, and the markup
  // (seen only with costs.read) is the one that gives the charge back.
  const charged = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${priced.id}`, {
    body: { baseUnitCost: 4.5, baseSetupCost: 12 },
    scopes: WITHOUT_COSTS,
  });
  assertEquals(charged.status, 200, JSON.stringify(charged.body));
  assertEquals([charged.body.data.baseUnitCost, charged.body.data.baseSetupCost], [4.5, 12]);
  assert(!("markupValue" in charged.body.data));
  const seen = await s.decorationIn(quoteId, priced.id);
  assertEquals(
    [seen.markupSource, seen.markupType, seen.markupValue],
    ["manual", "fixed", 4.5],
  );

  const withCosts = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${priced.id}`, {
    body: { unitCost: 3 },
  });
  assertEquals(withCosts.status, 200);
  assertEquals([withCosts.body.data.unitCost, withCosts.body.data.baseUnitCost], [3, 7.5]);

  const refused = await s.call("PATCH", `/v1/quote-decorations/${priced.id}`, {
    body: { setupCost: 4, position: "Back" },
    scopes: WITHOUT_COSTS,
  });
  assertEquals([refused.status, refused.body.error], [403, "insufficient_scope"]);
  assert(refused.body.message.includes("costs.read"));

  const patched = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${priced.id}`, {
    body: { position: "Back" },
    scopes: WITHOUT_COSTS,
  });
  assertEquals(patched.status, 200);
  assert(!("unitCost" in patched.body.data) && !("markupType" in patched.body.data));
  assertEquals(patched.body.data.position, "Back");
  assertEquals(await s.totals(quoteId), { subtotalExGst: 75, gstAmount: 7.5, totalIncGst: 82.5 });

  // Events carry the full (costs.read) view whoever made the change.
  const events = await eventsOf(h, priced.id);
  assertEquals(events.at(-1)!.payload.unitCost, 3);
  assertEquals(events.at(-1)!.payload.markupValue, 4.5);
  assertEquals(events[0]!.payload.unitCost, 0);
});

Deno.test("a group-source unit lane re-bands when the quantity changes", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const bands = [
    { from: 1, markupType: "percentage" as const, markupValue: 60 },
    { from: 12, markupType: "percentage" as const, markupValue: 50 },
  ];
  await insertMarkupGroup(h, s.org, "decoration", bands, { isDefault: true });

  const decoration = await s.createDecoration(groupId, {
    quantity: 10,
    unitCost: 1,
    markupSource: "group",
  });
  assertEquals(
    [decoration.markupType, decoration.markupValue, decoration.baseUnitCost],
    ["percentage", 60, 1.6],
    "the organisation's default decoration group bands on quantity 10",
  );
  assertEquals(await s.totals(quoteId), { subtotalExGst: 16, gstAmount: 1.6, totalIncGst: 17.6 });

  const patch = async (body: Record<string, unknown>): Promise<Decoration> => {
    const res = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${decoration.id}`, {
      body,
    });
    assertEquals(res.status, 200, JSON.stringify(res.body));
    return res.body.data;
  };
  const more = await patch({ quantity: 15 });
  assertEquals([more.markupValue, more.baseUnitCost], [50, 1.5]);
  assertEquals(await s.totals(quoteId), {
    subtotalExGst: 22.5,
    gstAmount: 2.25,
    totalIncGst: 24.75,
  });

  const fewer = await patch({ quantity: 11 });
  assertEquals([fewer.markupValue, fewer.baseUnitCost], [60, 1.6]);

  // A named group of the right lane is used instead of the default.
  const flat = await insertMarkupGroup(h, s.org, "decoration", [
    { from: 1, markupType: "fixed", markupValue: 0.25 },
  ]);
  const named = await patch({ markupGroupId: flat });
  assertEquals(
    [named.markupGroupId, named.markupType, named.markupValue, named.baseUnitCost],
    [flat, "fixed", 0.25, 1.25],
  );

  // A manual lane keeps its markup whatever the quantity.
  const manual = await patch({ markupSource: "manual", markupType: "percentage", markupValue: 60 });
  const stays = await patch({ quantity: 40 });
  assertEquals([manual.baseUnitCost, stays.markupValue, stays.baseUnitCost], [1.6, 60, 1.6]);
});

Deno.test("a group-source setup lane bands on the setup cost", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const setup = await insertMarkupGroup(h, s.org, "setup", [
    { from: 0, markupType: "fixed", markupValue: 10 },
    { from: 50, markupType: "percentage", markupValue: 20 },
  ], { isDefault: true, appliesToSetupCost: true });
  const decoration = await s.createDecoration(groupId, {
    quantity: 1,
    setupCost: 30,
    setupMarkupSource: "group",
    setupMarkupGroupId: setup,
    includeSetupCost: true,
  });
  assertEquals([decoration.setupMarkupType, decoration.baseSetupCost], ["fixed", 40]);
  const res = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${decoration.id}`, {
    body: { setupCost: 60 },
  });
  assertEquals([res.body.data.setupMarkupType, res.body.data.baseSetupCost], ["percentage", 72]);
  assertEquals(await s.totals(quoteId), { subtotalExGst: 72, gstAmount: 7.2, totalIncGst: 79.2 });
});

Deno.test("a named markup group must be this organisation's group of the lane", async (t) => {
  await using h = await harness();
  const s = session(h);
  const { groupId } = await s.newGroup();
  const band = [{ from: 1, markupType: "percentage" as const, markupValue: 10 }];
  const garment = await insertMarkupGroup(h, s.org, "garment", band);
  const decorationLane = await insertMarkupGroup(h, s.org, "decoration", band);
  const setupLane = await insertMarkupGroup(h, s.org, "setup", [
    { from: 0, markupType: "fixed", markupValue: 5 },
  ]);
  const theirs = await insertMarkupGroup(h, crypto.randomUUID(), "decoration", band);
  const cases: [string, Record<string, unknown>, string][] = [
    ["an unknown group", { markupGroupId: crypto.randomUUID() }, "markupGroupId"],
    ["a garment-lane group", { markupGroupId: garment }, "markupGroupId"],
    ["a setup-lane group for the unit lane", { markupGroupId: setupLane }, "markupGroupId"],
    ["another organisation's group", { markupGroupId: theirs }, "markupGroupId"],
    [
      "a decoration-lane group for the setup lane",
      { setupMarkupGroupId: decorationLane },
      "setupMarkupGroupId",
    ],
  ];
  for (const [name, fields, field] of cases) {
    await t.step(name, async () => {
      const res = await s.call("POST", `/v1/quote-groups/${groupId}/decorations`, {
        body: { quantity: 5, markupSource: "group", setupMarkupSource: "group", ...fields },
      });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals(res.body.error, "validation_error");
      assert(res.body.details?.some((d) => d.path === field), JSON.stringify(res.body));
      assert(res.body.message.includes(field));
    });
  }
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quote_decorations`;
  assertEquals(count?.n, 0);

  await t.step("PATCH checks the same", async () => {
    const ok = await s.createDecoration(groupId, {
      quantity: 5,
      markupSource: "group",
      markupGroupId: decorationLane,
      setupMarkupSource: "group",
      setupMarkupGroupId: setupLane,
    });
    assertEquals([ok.markupGroupId, ok.setupMarkupGroupId], [decorationLane, setupLane]);
    const res = await s.call("PATCH", `/v1/quote-decorations/${ok.id}`, {
      body: { markupGroupId: garment },
    });
    assertEquals(res.status, 400);
    assert(res.body.details?.some((d) => d.path === "markupGroupId"));
  });
});

Deno.test("a quote that is not a draft refuses decoration changes with 409", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, { quantity: 2, baseUnitCost: 3 });
  await h.sql`UPDATE quotes SET status = 'sent' WHERE id = ${quoteId}`;
  const before = [...await h.sql`SELECT * FROM quote_decorations ORDER BY id`];

  const create = await s.call("POST", `/v1/quote-groups/${groupId}/decorations`, {
    body: { quantity: 1 },
  });
  const update = await s.call("PATCH", `/v1/quote-decorations/${decoration.id}`, {
    body: { quantity: 5 },
  });
  const remove = await s.call("DELETE", `/v1/quote-decorations/${decoration.id}`);
  for (const res of [create, update, remove]) {
    assertEquals([res.status, res.body.error], [409, "conflict"], JSON.stringify(res.body));
  }
  assertEquals([...await h.sql`SELECT * FROM quote_decorations ORDER BY id`], before);
  assertEquals((await eventsOf(h, decoration.id)).length, 1);
});

Deno.test("another organisation's group or decoration is not found; bad ids are 400", async () => {
  await using h = await harness();
  const s = session(h);
  const { groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, { quantity: 2 });
  const other = crypto.randomUUID();

  const create = await s.call("POST", `/v1/quote-groups/${groupId}/decorations`, {
    body: { quantity: 1 },
    org: other,
  });
  const update = await s.call("PATCH", `/v1/quote-decorations/${decoration.id}`, {
    body: { quantity: 5 },
    org: other,
  });
  const remove = await s.call("DELETE", `/v1/quote-decorations/${decoration.id}`, { org: other });
  const unknownGroup = await s.call(
    "POST",
    `/v1/quote-groups/${crypto.randomUUID()}/decorations`,
    { body: { quantity: 1 } },
  );
  const unknownDecoration = await s.call(
    "PATCH",
    `/v1/quote-decorations/${crypto.randomUUID()}`,
    { body: { quantity: 1 } },
  );
  for (const res of [create, update, remove, unknownGroup, unknownDecoration]) {
    assertEquals([res.status, res.body.error], [404, "not_found"], JSON.stringify(res.body));
  }
  for (
    const [method, path] of [
      ["POST", "/v1/quote-groups/not-a-uuid/decorations"],
      ["PATCH", "/v1/quote-decorations/not-a-uuid"],
      ["DELETE", "/v1/quote-decorations/42"],
    ]
  ) {
    const res = await s.call(method!, path!, { body: { quantity: 1 } });
    assertEquals([res.status, res.body.error], [400, "validation_error"], path);
  }
  const rows = await h.sql<{ quantity: number }[]>`SELECT quantity FROM quote_decorations`;
  assertEquals(rows.map((r) => r.quantity), [2]);
});

Deno.test("bad decoration bodies are refused with 400 and nothing is written", async (t) => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  const existing = await s.createDecoration(groupId, { quantity: 3, baseUnitCost: 1 });
  const totalsBefore = await s.totals(quoteId);
  const rowsBefore = [...await h.sql`SELECT * FROM quote_decorations ORDER BY id`];
  const eventsBefore = [...await h.sql`SELECT id FROM outbox`];

  const createCases: [string, unknown, string, string?][] = [
    ["malformed JSON", "{nope", "invalid_json"],
    ["no quantity", {}, "validation_error", "quantity"],
    ["an unknown field", { quantity: 1, colour: "red" }, "validation_error", "colour"],
    ["a string quantity", { quantity: "5" }, "validation_error", "quantity"],
    ["a fractional quantity", { quantity: 1.5 }, "validation_error", "quantity"],
    ["a negative quantity", { quantity: -1 }, "validation_error", "quantity"],
    ["a bad method", { quantity: 1, method: "Stamping" }, "validation_error", "method"],
    ["a bad markup type", { quantity: 1, markupType: "half" }, "validation_error", "markupType"],
    ["a string cost", { quantity: 1, unitCost: "1.20" }, "validation_error", "unitCost"],
    ["a negative cost", { quantity: 1, setupCost: -5 }, "validation_error", "setupCost"],
    ["5 decimals", { quantity: 1, unitCost: 1.23456 }, "validation_error", "unitCost"],
    ["a non-boolean flag", { quantity: 1, rollUp: "yes" }, "validation_error", "rollUp"],
    ["a bad url", { quantity: 1, artworkFileUrl: "ftp://x" }, "validation_error", "artworkFileUrl"],
    ["sortOrder 0", { quantity: 1, sortOrder: 0 }, "validation_error", "sortOrder"],
    ["an array body", [], "validation_error"],
  ];
  for (const [name, body, code, path] of createCases) {
    await t.step(`POST: ${name}`, async () => {
      const res = await s.call("POST", `/v1/quote-groups/${groupId}/decorations`, { body });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals([res.body.error, res.body.status], [code, false]);
      if (path) assert(res.body.details?.some((d) => d.path === path), JSON.stringify(res.body));
    });
  }
  const patchCases: [string, unknown, string, string?][] = [
    ["malformed JSON", "[1,", "invalid_json"],
    ["an unknown field", { quoteGroupId: crypto.randomUUID() }, "validation_error", "quoteGroupId"],
    ["a null quantity", { quantity: null }, "validation_error", "quantity"],
    ["a null flag", { includeSetupCost: null }, "validation_error", "includeSetupCost"],
    ["a bad source", { markupSource: "auto" }, "validation_error", "markupSource"],
  ];
  for (const [name, body, code, path] of patchCases) {
    await t.step(`PATCH: ${name}`, async () => {
      const res = await s.call("PATCH", `/v1/quote-decorations/${existing.id}`, { body });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals(res.body.error, code);
      if (path) assert(res.body.details?.some((d) => d.path === path), JSON.stringify(res.body));
    });
  }
  assertEquals([...await h.sql`SELECT * FROM quote_decorations ORDER BY id`], rowsBefore);
  assertEquals([...await h.sql`SELECT id FROM outbox`], eventsBefore);
  assertEquals(await s.totals(quoteId), totalsBefore);
});

Deno.test("an empty PATCH changes nothing and records no event", async () => {
  await using h = await harness();
  const s = session(h);
  const { groupId } = await s.newGroup();
  const decoration = await s.createDecoration(groupId, { quantity: 3 });
  const res = await s.call<Decoration>("PATCH", `/v1/quote-decorations/${decoration.id}`, {
    body: {},
  });
  assertEquals(res.status, 200);
  assertEquals(res.body.data, decoration);
  assertEquals((await eventsOf(h, decoration.id)).length, 1);
});

Deno.test("concurrent creates in one group get distinct places in the sequence", async () => {
  await using h = await harness();
  const s = session(h);
  const { quoteId, groupId } = await s.newGroup();
  await s.insertLine(quoteId, groupId, 1);
  const created = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) =>
        s.createDecoration(groupId, {
          quantity: 1,
          baseUnitCost: 1,
          ...(i % 2 ? { sortOrder: 1 } : {}),
        }),
    ),
  );
  assertEquals(created.length, 8);
  assertEquals((await s.order(groupId)).map((r) => r.sortOrder), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assertEquals(await s.totals(quoteId), { subtotalExGst: 8, gstAmount: 0.8, totalIncGst: 8.8 });
});

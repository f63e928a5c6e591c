/**
 * The shared row order of a group (pricing.md, Row order) through the API: lines and decorations
 * hold ONE sortOrder sequence 1..n. `POST /v1/quote-groups/{groupId}/reorder` renumbers it from a
 * list naming every row exactly once and refuses anything else with details; creates with a
 * sortOrder insert and shift, deletes close gaps, PATCH sortOrder moves; none of it changes a
 * price or a total, and only a draft's order may change.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

type Json = Record<string, unknown>;
type Kind = "line" | "decoration";

interface Row {
  id: string;
  kind: Kind;
}

interface Detail {
  path: string;
  message: string;
}

interface Api {
  h: ServiceHarness<Config>;
  org: string;
  send(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }>;
  call(method: string, path: string, body?: unknown): Promise<Json>;
}

async function api(): Promise<Api> {
  const h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await h.request(method, path, {
      organizationId: org,
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, json: await res.json() as Json };
  };
  return {
    h,
    org,
    send,
    call: async (method, path, body) => {
      const { status, json } = await send(method, path, body);
      assert(
        status === 200 || status === 201,
        `${method} ${path}: ${status} ${JSON.stringify(json)}`,
      );
      return json.data as Json;
    },
  };
}

interface Fixture {
  quoteId: string;
  groupId: string;
  /** Garment line with three variants (the pricing.md worked example). */
  garment: Row;
  /** The worked example's decoration. */
  print: Row;
  /** Discount line, 10 % of the group's goods. */
  discount: Row;
  /** A second decoration that costs nothing, so the worked example's totals still hold. */
  label: Row;
  /** Rows of a second group of the same quote. */
  otherLine: Row;
  otherDecoration: Row;
}

/** pricing.md's worked example totals: subtotal 188.10, GST 18.81, total 206.91. */
const WORKED_TOTALS = [188.1, 18.81, 206.91];

/**
 * The pricing.md worked example in one group, built as garment line, decoration, discount line,
 * decoration (sortOrder 1..4), and a second group with a line and a decoration of its own.
 */
async function buildFixture(a: Api): Promise<Fixture> {
  const quote = await a.call("POST", "/v1/quotes", { reference: "Reorder" });
  const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Staff tees" });
  const garment = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Classic tee",
  });
  for (
    const variant of [
      {
        size: "M",
        colour: "Black",
        quantity: 10,
        buyPrice: 5,
        extraCost: 0.5,
        markupType: "percentage",
        markupValue: 40,
      },
      { size: "L", colour: "Black", quantity: 5, buyPrice: 5, markupType: "fixed", markupValue: 3 },
      { isCustomLine: true, quantity: 1, buyPrice: 20, markupType: "percentage", markupValue: 0 },
    ]
  ) {
    await a.call("POST", `/v1/quote-lines/${garment.id}/variants`, variant);
  }
  const print = await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, {
    quantity: 15,
    unitCost: 1.2,
    markupType: "percentage",
    markupValue: 50,
    setupCost: 30,
    setupMarkupType: "fixed",
    setupMarkupValue: 15,
    includeSetupCost: true,
    position: "Front",
  });
  const discount = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Discount",
    productName: "Loyalty discount",
    valueType: "Percentage",
    percentage: 10,
  });
  const label = await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, {
    quantity: 15,
    position: "Neck label",
  });
  const other = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Caps" });
  const otherLine = await a.call("POST", `/v1/quote-groups/${other.id}/lines`, {
    lineType: "Service",
    productName: "Folding",
    quantity: 1,
    unitPriceExGst: 0,
  });
  const otherDecoration = await a.call("POST", `/v1/quote-groups/${other.id}/decorations`, {
    quantity: 1,
  });
  const fixture: Fixture = {
    quoteId: quote.id as string,
    groupId: group.id as string,
    garment: { id: garment.id as string, kind: "line" },
    print: { id: print.id as string, kind: "decoration" },
    discount: { id: discount.id as string, kind: "line" },
    label: { id: label.id as string, kind: "decoration" },
    otherLine: { id: otherLine.id as string, kind: "line" },
    otherDecoration: { id: otherDecoration.id as string, kind: "decoration" },
  };
  assertEquals(await order(a, fixture), [
    fixture.garment,
    fixture.print,
    fixture.discount,
    fixture.label,
  ]);
  assertEquals(await totals(a, fixture.quoteId), WORKED_TOTALS);
  return fixture;
}

function rowsOf(group: Json): { id: string; kind: Kind; sortOrder: number }[] {
  return [
    ...(group.lines as Json[]).map((l) => ({
      id: l.id as string,
      kind: "line" as const,
      sortOrder: l.sortOrder as number,
    })),
    ...(group.decorations as Json[]).map((d) => ({
      id: d.id as string,
      kind: "decoration" as const,
      sortOrder: d.sortOrder as number,
    })),
  ];
}

/**
 * The group's rows in their shared order, checking what every response must hold: lines and
 * decorations each sorted by sortOrder, and the two together numbered exactly 1..n.
 */
function orderOfGroup(group: Json): Row[] {
  for (const collection of ["lines", "decorations"] as const) {
    const orders = (group[collection] as Json[]).map((r) => r.sortOrder as number);
    assertEquals(orders, [...orders].sort((x, y) => x - y), `${collection} sorted by sortOrder`);
  }
  const rows = rowsOf(group).sort((x, y) => x.sortOrder - y.sortOrder);
  assertEquals(rows.map((r) => r.sortOrder), rows.map((_, i) => i + 1), "one sequence 1..n");
  return rows.map((r) => ({ id: r.id, kind: r.kind }));
}

async function groupOf(a: Api, quoteId: string, groupId: string): Promise<Json> {
  const quote = await a.call("GET", `/v1/quotes/${quoteId}`);
  const group = (quote.groups as Json[]).find((g) => g.id === groupId);
  assert(group, `group ${groupId} is in quote ${quoteId}`);
  return group;
}

async function order(a: Api, f: { quoteId: string; groupId: string }): Promise<Row[]> {
  return orderOfGroup(await groupOf(a, f.quoteId, f.groupId));
}

async function totals(a: Api, quoteId: string): Promise<number[]> {
  const quote = await a.call("GET", `/v1/quotes/${quoteId}`);
  return [quote.subtotalExGst, quote.gstAmount, quote.totalIncGst] as number[];
}

/**
 * The quote with everything a reorder may touch left out (sortOrder, updatedAt) and rows in id
 * order: what must be identical before and after a change of order.
 */
async function orderFree(a: Api, quoteId: string): Promise<unknown> {
  const quote = await a.call("GET", `/v1/quotes/${quoteId}`);
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      return value.map(strip).sort((x, y) =>
        String((x as Json).id ?? "").localeCompare(String((y as Json).id ?? ""))
      );
    }
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).filter(([k]) => k !== "sortOrder" && k !== "updatedAt")
          .map(([k, v]) => [k, strip(v)]),
      );
    }
    return value;
  };
  return strip(quote);
}

async function reorderedEvents(a: Api, groupId: string): Promise<number> {
  const [row] = await a.h.sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM outbox
    WHERE type = 'quote_group.reordered' AND aggregate_id = ${groupId}`;
  return row!.count;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest])
  );
}

Deno.test("POST reorder renumbers lines and decorations 1..n in the order given, for every permutation", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const unchanged = await orderFree(a, f.quoteId);
    const quote = await a.call("GET", `/v1/quotes/${f.quoteId}`);
    const otherGroup = (quote.groups as Json[]).find((g) => g.id !== f.groupId)!;
    const rows = [f.garment, f.print, f.discount, f.label];
    const all = permutations(rows);
    assertEquals(all.length, 24);
    for (const [n, permutation] of all.entries()) {
      const { status, json } = await a.send("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
        items: permutation,
      });
      assertEquals(status, 200, JSON.stringify(json));
      const group = json.data as Json;
      assertEquals(group.id, f.groupId);
      assertEquals(orderOfGroup(group), permutation, "the response is in the new order");
      assertEquals(await order(a, f), permutation, "GET shows the new order");
      assertEquals(await totals(a, f.quoteId), WORKED_TOTALS);
      assertEquals(await orderFree(a, f.quoteId), unchanged, "only the order changed");
      assertEquals(await reorderedEvents(a, f.groupId), n + 1, "one event per reorder");
    }
    // Reordering one group leaves the other group's rows where they were.
    assertEquals(
      rowsOf(await groupOf(a, f.quoteId, otherGroup.id as string)),
      rowsOf(otherGroup),
    );
  } finally {
    await a.h.close();
  }
});

Deno.test("POST reorder returns the group as GET shows it, with the variants of a line in their order", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const items = [f.label, f.discount, f.print, f.garment];
    const reordered = await a.call("POST", `/v1/quote-groups/${f.groupId}/reorder`, { items });
    const read = await groupOf(a, f.quoteId, f.groupId);
    assertEquals(reordered, read);
    const garment = (read.lines as Json[]).find((l) => l.id === f.garment.id)!;
    assertEquals((garment.variants as Json[]).map((v) => [v.size, v.sortOrder]), [
      ["M", 1],
      ["L", 2],
      [null, 3],
    ]);
    assertEquals(garment.sortOrder, 4);
  } finally {
    await a.h.close();
  }
});

interface Problem {
  /** Text the detail's message must contain: the offending row, as "<kind> <id>". */
  names: Row;
  /** Words of the message that say what is wrong. */
  says: string;
  /** Detail paths that may carry it. */
  paths: string[];
}

Deno.test("POST reorder refuses a list that is not every row exactly once, naming each problem", async (t) => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const stranger: Row = { id: crypto.randomUUID(), kind: "line" };
    const asDecoration: Row = { id: f.discount.id, kind: "decoration" };
    const cases: [string, Row[], Problem[]][] = [
      ["a duplicate", [f.garment, f.print, f.garment, f.discount, f.label], [
        { names: f.garment, says: "listed twice", paths: ["items.0", "items.2"] },
      ]],
      ["an unknown id", [f.garment, f.print, f.discount, f.label, stranger], [
        { names: stranger, says: "not in this group", paths: ["items.4"] },
      ]],
      ["a missing row", [f.garment, f.discount, f.label], [
        { names: f.print, says: "not listed", paths: ["items"] },
      ]],
      ["an empty list", [], [
        { names: f.garment, says: "not listed", paths: ["items"] },
        { names: f.print, says: "not listed", paths: ["items"] },
        { names: f.discount, says: "not listed", paths: ["items"] },
        { names: f.label, says: "not listed", paths: ["items"] },
      ]],
      ["a line of another group", [f.garment, f.print, f.discount, f.label, f.otherLine], [
        { names: f.otherLine, says: "not in this group", paths: ["items.4"] },
      ]],
      ["a decoration of another group in place of one of ours", [
        f.garment,
        f.print,
        f.discount,
        f.otherDecoration,
      ], [
        { names: f.otherDecoration, says: "not in this group", paths: ["items.3"] },
        { names: f.label, says: "not listed", paths: ["items"] },
      ]],
      ["a line id sent as kind decoration", [f.garment, f.print, asDecoration, f.label], [
        { names: asDecoration, says: "not in this group", paths: ["items.2"] },
        { names: f.discount, says: "not listed", paths: ["items", "items.2"] },
      ]],
      ["a duplicate, an unknown id and a missing row at once", [
        f.label,
        stranger,
        f.garment,
        f.label,
        f.discount,
      ], [
        { names: f.label, says: "listed twice", paths: ["items.0", "items.3"] },
        { names: stranger, says: "not in this group", paths: ["items.1"] },
        { names: f.print, says: "not listed", paths: ["items"] },
      ]],
    ];
    const before = await order(a, f);
    const unchanged = await orderFree(a, f.quoteId);
    for (const [name, items, problems] of cases) {
      await t.step(name, async () => {
        const { status, json } = await a.send("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
          items,
        });
        const shown = JSON.stringify(json);
        assertEquals(status, 400, shown);
        assertEquals([json.error, json.status], ["validation_error", false], shown);
        assert(String(json.message).includes(f.groupId), `the message names the group: ${shown}`);
        const details = json.details as Detail[];
        assertEquals(details.length, problems.length, `one detail per problem: ${shown}`);
        for (const problem of problems) {
          const named = `${problem.names.kind} ${problem.names.id}`;
          const found = details.find((d) =>
            d.message.includes(named) && d.message.includes(problem.says)
          );
          assert(found, `a detail says "${named}" is ${problem.says}: ${shown}`);
          assert(problem.paths.includes(found.path), `path of "${named}": ${shown}`);
        }
      });
    }
    assertEquals(await order(a, f), before, "a refused reorder changes nothing");
    assertEquals(await orderFree(a, f.quoteId), unchanged);
    assertEquals(await reorderedEvents(a, f.groupId), 0, "and records no event");
  } finally {
    await a.h.close();
  }
});

Deno.test("POST reorder of an empty group takes an empty list and refuses any row", async () => {
  const a = await api();
  try {
    const quote = await a.call("POST", "/v1/quotes", {});
    const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Empty" });
    const done = await a.call("POST", `/v1/quote-groups/${group.id}/reorder`, { items: [] });
    assertEquals([done.lines, done.decorations], [[], []]);
    const stranger = crypto.randomUUID();
    const refused = await a.send("POST", `/v1/quote-groups/${group.id}/reorder`, {
      items: [{ id: stranger, kind: "line" }],
    });
    assertEquals(refused.status, 400);
    assert(JSON.stringify(refused.json.details).includes(stranger));
  } finally {
    await a.h.close();
  }
});

Deno.test("creating with sortOrder inserts there and shifts the rows of both collections", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const add = async (
      what: "lines" | "decorations",
      body: Json,
    ): Promise<Row & { sortOrder: number }> => {
      const row = await a.call("POST", `/v1/quote-groups/${f.groupId}/${what}`, body);
      return {
        id: row.id as string,
        kind: what === "lines" ? "line" : "decoration",
        sortOrder: row.sortOrder as number,
      };
    };
    const service = { lineType: "Service", productName: "Bagging", quantity: 0 };

    const second = await add("lines", { ...service, sortOrder: 2 });
    assertEquals(second.sortOrder, 2);
    const row = ({ id, kind }: Row): Row => ({ id, kind });
    assertEquals(await order(a, f), [f.garment, row(second), f.print, f.discount, f.label]);

    const first = await add("decorations", { quantity: 0, sortOrder: 1 });
    assertEquals(first.sortOrder, 1);
    assertEquals(await order(a, f), [
      row(first),
      f.garment,
      row(second),
      f.print,
      f.discount,
      f.label,
    ]);

    const beyond = await add("lines", { ...service, sortOrder: 99 });
    assertEquals(beyond.sortOrder, 7, "a position past the end is clamped to the end");
    const appended = await add("decorations", { quantity: 0 });
    assertEquals(appended.sortOrder, 8, "no sortOrder appends after both collections");
    const last = await add("lines", { ...service, sortOrder: 9 });
    assertEquals(last.sortOrder, 9, "max + 1 appends");
    const middle = await add("decorations", { quantity: 0, sortOrder: 5 });
    assertEquals(middle.sortOrder, 5);
    assertEquals(
      await order(a, f),
      [
        first,
        f.garment,
        second,
        f.print,
        middle,
        f.discount,
        f.label,
        beyond,
        appended,
        last,
      ].map(({ id, kind }) => ({ id, kind })),
    );

    const zero = await a.send("POST", `/v1/quote-groups/${f.groupId}/lines`, {
      ...service,
      sortOrder: 0,
    });
    assertEquals([zero.status, zero.json.error], [400, "validation_error"]);
    assertEquals(await totals(a, f.quoteId), WORKED_TOTALS, "free rows change no total");
  } finally {
    await a.h.close();
  }
});

Deno.test("deleting a line or a decoration closes the gap in the shared sequence", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const extra = await a.call("POST", `/v1/quote-groups/${f.groupId}/lines`, {
      lineType: "Service",
      productName: "Bagging",
    });
    const bagging: Row = { id: extra.id as string, kind: "line" };
    await a.call("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
      items: [f.label, f.garment, bagging, f.print, f.discount],
    });
    await a.call("DELETE", `/v1/quote-lines/${bagging.id}`);
    assertEquals(await order(a, f), [f.label, f.garment, f.print, f.discount]);
    await a.call("DELETE", `/v1/quote-decorations/${f.label.id}`);
    assertEquals(await order(a, f), [f.garment, f.print, f.discount]);
    await a.call("DELETE", `/v1/quote-decorations/${f.print.id}`);
    assertEquals(await order(a, f), [f.garment, f.discount]);
    // The reorder list now names the two rows that are left.
    const { status } = await a.send("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
      items: [f.discount, f.garment, f.print],
    });
    assertEquals(status, 400, "a deleted row is no longer in the group");
    await a.call("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
      items: [f.discount, f.garment],
    });
    assertEquals(await order(a, f), [f.discount, f.garment]);
  } finally {
    await a.h.close();
  }
});

Deno.test("PATCH sortOrder moves a line or a decoration within the shared sequence", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const unchanged = await orderFree(a, f.quoteId);
    const moveLine = await a.call("PATCH", `/v1/quote-lines/${f.discount.id}`, { sortOrder: 1 });
    assertEquals(moveLine.sortOrder, 1);
    assertEquals(await order(a, f), [f.discount, f.garment, f.print, f.label]);

    const moveDecoration = await a.call("PATCH", `/v1/quote-decorations/${f.label.id}`, {
      sortOrder: 2,
    });
    assertEquals(moveDecoration.sortOrder, 2);
    assertEquals(await order(a, f), [f.discount, f.label, f.garment, f.print]);

    const down = await a.call("PATCH", `/v1/quote-lines/${f.discount.id}`, { sortOrder: 3 });
    assertEquals(down.sortOrder, 3);
    assertEquals(await order(a, f), [f.label, f.garment, f.discount, f.print]);

    const beyond = await a.call("PATCH", `/v1/quote-lines/${f.garment.id}`, { sortOrder: 500 });
    assertEquals(beyond.sortOrder, 4, "clamped to the end");
    assertEquals(await order(a, f), [f.label, f.discount, f.print, f.garment]);

    const same = await a.call("PATCH", `/v1/quote-decorations/${f.print.id}`, { sortOrder: 3 });
    assertEquals(same.sortOrder, 3, "moving to where it is changes nothing");
    assertEquals(await order(a, f), [f.label, f.discount, f.print, f.garment]);

    assertEquals(await totals(a, f.quoteId), WORKED_TOTALS);
    assertEquals(await orderFree(a, f.quoteId), unchanged, "only the order changed");
  } finally {
    await a.h.close();
  }
});

Deno.test("a quote that is not a draft refuses reorder and every change of order with 409", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const status = async (to: string): Promise<void> => {
      await a.call("POST", `/v1/quotes/${f.quoteId}/status`, { status: to });
    };
    await status("sent");
    const before = await order(a, f);
    const snapshot = await a.call("GET", `/v1/quotes/${f.quoteId}`);
    const attempts: [string, string, unknown][] = [
      ["POST", `/v1/quote-groups/${f.groupId}/reorder`, {
        items: [f.label, f.discount, f.print, f.garment],
      }],
      ["POST", `/v1/quote-groups/${f.groupId}/lines`, {
        lineType: "Service",
        productName: "Late",
        sortOrder: 1,
      }],
      ["POST", `/v1/quote-groups/${f.groupId}/decorations`, { quantity: 1, sortOrder: 1 }],
      ["PATCH", `/v1/quote-lines/${f.discount.id}`, { sortOrder: 1 }],
      ["PATCH", `/v1/quote-decorations/${f.label.id}`, { sortOrder: 1 }],
      ["DELETE", `/v1/quote-lines/${f.discount.id}`, undefined],
      ["DELETE", `/v1/quote-decorations/${f.print.id}`, undefined],
    ];
    for (const quoteStatus of ["sent", "approved"]) {
      if (quoteStatus === "approved") await status("approved");
      for (const [method, path, body] of attempts) {
        const res = await a.send(method, path, body);
        assertEquals(
          res.status,
          409,
          `${quoteStatus}: ${method} ${path}: ${JSON.stringify(res.json)}`,
        );
        assertEquals([res.json.error, res.json.status], ["conflict", false]);
      }
    }
    assertEquals(await order(a, f), before);
    const after = await a.call("GET", `/v1/quotes/${f.quoteId}`);
    assertEquals({ ...after, status: snapshot.status, updatedAt: snapshot.updatedAt }, snapshot);
    assertEquals(await reorderedEvents(a, f.groupId), 0);

    await status("draft");
    const reopened = await a.call("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
      items: [f.label, f.discount, f.print, f.garment],
    });
    assertEquals(orderOfGroup(reopened), [f.label, f.discount, f.print, f.garment]);
    assertEquals(await totals(a, f.quoteId), WORKED_TOTALS);
  } finally {
    await a.h.close();
  }
});

Deno.test("concurrent creates and moves of lines and decorations keep one gapless sequence", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const results = await Promise.all([
      ...[1, 2, 1, 3].map((sortOrder, i) =>
        a.send("POST", `/v1/quote-groups/${f.groupId}/lines`, {
          lineType: "Service",
          productName: `Extra ${i}`,
          sortOrder,
        })
      ),
      ...[1, 4, 2].map((sortOrder) =>
        a.send("POST", `/v1/quote-groups/${f.groupId}/decorations`, { quantity: 0, sortOrder })
      ),
      a.send("POST", `/v1/quote-groups/${f.groupId}/lines`, {
        lineType: "Service",
        productName: "Appended",
      }),
      a.send("POST", `/v1/quote-groups/${f.groupId}/decorations`, { quantity: 0 }),
      a.send("PATCH", `/v1/quote-lines/${f.discount.id}`, { sortOrder: 1 }),
      a.send("PATCH", `/v1/quote-decorations/${f.label.id}`, { sortOrder: 2 }),
    ]);
    for (const r of results) assert(r.status === 200 || r.status === 201, JSON.stringify(r.json));
    const created = results.slice(0, 9).map((r) => (r.json.data as Json).id as string);
    const rows = await order(a, f); // checks 1..n and each collection sorted
    assertEquals(rows.length, 13);
    assertEquals(
      rows.map((r) => r.id).sort(),
      [...created, f.garment.id, f.print.id, f.discount.id, f.label.id].sort(),
      "every row once",
    );
    assertEquals(await totals(a, f.quoteId), WORKED_TOTALS);
  } finally {
    await a.h.close();
  }
});

Deno.test("a change of order moves the updatedAt of what it changes: the row moved and its quote", async () => {
  const a = await api();
  try {
    const f = await buildFixture(a);
    const quoteAt = async (): Promise<string> =>
      String((await a.call("GET", `/v1/quotes/${f.quoteId}`)).updatedAt);
    const lineAt = async (id: string): Promise<string> => {
      const quote = await a.call("GET", `/v1/quotes/${f.quoteId}`);
      const lines = (quote.groups as Json[]).flatMap((g) => g.lines as Json[]);
      return String(lines.find((l) => l.id === id)!.updatedAt);
    };
    let before = await quoteAt();
    // A line moved, and nothing else about it changed.
    const lineBefore = await lineAt(f.discount.id);
    const moved = await a.call("PATCH", `/v1/quote-lines/${f.discount.id}`, { sortOrder: 1 });
    assertEquals(moved.sortOrder, 1);
    assert(String(moved.updatedAt) > lineBefore, "the line's updatedAt after its move");
    assertEquals(await lineAt(f.discount.id), moved.updatedAt);
    let after = await quoteAt();
    assert(after > before, "the quote's updatedAt after a line move");
    // The group's rows reordered.
    before = after;
    await a.call("POST", `/v1/quote-groups/${f.groupId}/reorder`, {
      items: [f.garment, f.print, f.discount, f.label],
    });
    after = await quoteAt();
    assert(after > before, "the quote's updatedAt after a reorder");
    // A group renamed.
    before = after;
    await a.call("PATCH", `/v1/quote-groups/${f.groupId}`, { name: "Staff tees (2)" });
    after = await quoteAt();
    assert(after > before, "the quote's updatedAt after a group rename");
  } finally {
    await a.h.close();
  }
});

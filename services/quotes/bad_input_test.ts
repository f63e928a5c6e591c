/**
 * A table-driven sweep of bad input over every quotes-service operation in the route table:
 * malformed JSON, unknown fields, wrong types, oversized strings, negative quantities, malformed,
 * unknown and other organisations' path ids, unknown query parameters. Each refusal must be the
 * error envelope (never a 500), and after the sweep the organisations' data must be exactly what
 * it was before: no refused request may write anything.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { z } from "zod";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { type RouteDef, routesOf } from "@printshop/shared/routes";
import { ErrorEnvelope } from "@printshop/shared/contracts";
import { ERROR_CODES } from "@printshop/shared/http";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

type Json = Record<string, unknown>;

/** The ids a path template may name, by parameter name. */
interface FixtureIds {
  quoteId: string;
  groupId: string;
  lineId: string;
  variantId: string;
  decorationId: string;
  markupGroupId: string;
  taxRateId: string;
}

/** One bad body and the detail path the 400 must name. */
interface BodyProbe {
  body: Json;
  path: string;
}

/** What the sweep sends to one operation. Reads have no body probes. */
interface OperationCase {
  /** Passes the body schema, so that only the path id can be what is refused. */
  valid?: Json;
  /** One field of the wrong JSON type. */
  wrongType?: BodyProbe;
  /** A string field over its limit (10,001 characters). */
  oversized?: BodyProbe;
  /** A negative quantity where the body has one, else another field that must be ≥ 0. */
  negative?: BodyProbe;
}

const LONG = "x".repeat(10_001);

const garmentBands = [
  { from: 1, markupType: "percentage", markupValue: 60 },
  { from: 12, markupType: "percentage", markupValue: 50 },
];

/** Every quotes operation; the first test proves no operation of the route table is missing. */
const CASES: Record<string, (ids: FixtureIds) => OperationCase> = {
  createQuote: () => ({
    valid: { reference: "PO-1" },
    wrongType: { body: { reference: 42 }, path: "reference" },
    oversized: { body: { notes: LONG }, path: "notes" },
  }),
  listQuotes: () => ({}),
  getQuoteFacets: () => ({}),
  getQuote: () => ({}),
  updateQuote: () => ({
    valid: { reference: "PO-2" },
    wrongType: { body: { deliveryDate: 20261121 }, path: "deliveryDate" },
    oversized: { body: { notes: LONG }, path: "notes" },
  }),
  deleteQuote: () => ({}),
  setQuoteStatus: () => ({
    valid: { status: "sent" },
    wrongType: { body: { status: true }, path: "status" },
    oversized: {
      body: { status: "sent", sentToEmail: `${LONG}@shop.test` },
      path: "sentToEmail",
    },
  }),
  createQuoteGroup: () => ({
    valid: { name: "Kitchen" },
    wrongType: { body: { name: 7 }, path: "name" },
    oversized: { body: { name: LONG }, path: "name" },
    negative: { body: { name: "Kitchen", sortOrder: -1 }, path: "sortOrder" },
  }),
  updateQuoteGroup: () => ({
    valid: { name: "Bar" },
    wrongType: { body: { rollUpSetup: "yes" }, path: "rollUpSetup" },
    oversized: { body: { name: LONG }, path: "name" },
    negative: { body: { sortOrder: -1 }, path: "sortOrder" },
  }),
  deleteQuoteGroup: () => ({}),
  reorderQuoteGroup: (ids) => ({
    valid: {
      items: [{ id: ids.decorationId, kind: "decoration" }, { id: ids.lineId, kind: "line" }],
    },
    wrongType: { body: { items: "line" }, path: "items" },
    oversized: { body: { items: [{ id: LONG, kind: "line" }] }, path: "items.0.id" },
  }),
  createQuoteLine: () => ({
    valid: { lineType: "Service", productName: "Folding", quantity: 1, unitPriceExGst: 2 },
    wrongType: { body: { lineType: "Garment", productName: 42 }, path: "productName" },
    oversized: {
      body: { lineType: "Garment", productName: "Tee", description: LONG },
      path: "description",
    },
    negative: {
      body: { lineType: "Service", productName: "Folding", quantity: -1 },
      path: "quantity",
    },
  }),
  updateQuoteLine: () => ({
    valid: { title: "Renamed" },
    wrongType: { body: { title: ["Tee"] }, path: "title" },
    oversized: { body: { description: LONG }, path: "description" },
    negative: { body: { quantity: -1 }, path: "quantity" },
  }),
  deleteQuoteLine: () => ({}),
  createQuoteVariant: () => ({
    valid: { size: "S", quantity: 1 },
    wrongType: { body: { size: "S", quantity: "1" }, path: "quantity" },
    oversized: { body: { size: LONG, quantity: 1 }, path: "size" },
    negative: { body: { size: "S", quantity: -1 }, path: "quantity" },
  }),
  updateQuoteVariant: () => ({
    valid: { quantity: 2 },
    wrongType: { body: { showOnDocuments: "no" }, path: "showOnDocuments" },
    oversized: { body: { colour: LONG }, path: "colour" },
    negative: { body: { quantity: -5 }, path: "quantity" },
  }),
  deleteQuoteVariant: () => ({}),
  createQuoteDecoration: () => ({
    valid: { quantity: 1, position: "Back" },
    wrongType: { body: { quantity: 1, colours: "red" }, path: "colours" },
    oversized: { body: { quantity: 1, specialInstructions: LONG }, path: "specialInstructions" },
    negative: { body: { quantity: -1 }, path: "quantity" },
  }),
  updateQuoteDecoration: () => ({
    valid: { position: "Sleeve" },
    wrongType: { body: { rollUp: 1 }, path: "rollUp" },
    oversized: { body: { position: LONG }, path: "position" },
    negative: { body: { quantity: -1 }, path: "quantity" },
  }),
  deleteQuoteDecoration: () => ({}),
  createMarkupGroup: () => ({
    valid: { name: "Hoodies", lane: "garment", bands: garmentBands },
    wrongType: { body: { name: "Hoodies", lane: "garment", bands: {} }, path: "bands" },
    oversized: { body: { name: LONG, lane: "garment", bands: garmentBands }, path: "name" },
    negative: {
      body: {
        name: "Hoodies",
        lane: "garment",
        bands: [{ from: -1, markupType: "percentage", markupValue: 10 }],
      },
      path: "bands.0.from",
    },
  }),
  listMarkupGroups: () => ({}),
  getMarkupGroup: () => ({}),
  updateMarkupGroup: () => ({
    valid: { name: "Renamed" },
    wrongType: { body: { isDefault: "true" }, path: "isDefault" },
    oversized: { body: { name: LONG }, path: "name" },
    negative: {
      body: { bands: [{ from: -1, markupType: "percentage", markupValue: 10 }] },
      path: "bands.0.from",
    },
  }),
  deleteMarkupGroup: () => ({}),
  listTaxRates: () => ({}),
  createTaxRate: () => ({
    valid: { name: "VAT", ratePct: 20 },
    wrongType: { body: { name: "VAT", ratePct: "20" }, path: "ratePct" },
    oversized: { body: { name: LONG, ratePct: 20 }, path: "name" },
    negative: { body: { name: "VAT", ratePct: -1 }, path: "ratePct" },
  }),
};

const QUOTE_ROUTES = routesOf("quotes");

/** Path parameter names of a template: `/v1/quote-lines/{lineId}` → `["lineId"]`. */
function paramsOf(route: RouteDef): (keyof FixtureIds)[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as keyof FixtureIds);
}

/** The template with each parameter replaced by `id(name)`. */
function fill(route: RouteDef, id: (name: keyof FixtureIds) => string): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => id(name as keyof FixtureIds));
}

/** The operation's case; an operation without one fails here, by name. */
function caseOf(route: RouteDef, ids: FixtureIds): OperationCase {
  const build = CASES[route.operationId];
  assert(build, `no bad-input case for operation "${route.operationId}"`);
  return build(ids);
}

function hasQuantity(schema: z.ZodType | undefined): boolean {
  return schema instanceof z.ZodObject && Object.hasOwn(schema.shape, "quantity");
}

interface Api {
  h: ServiceHarness<Config>;
  send(method: string, path: string, org: string, body?: unknown): Promise<Response>;
  call(method: string, path: string, org: string, body?: unknown): Promise<Json>;
}

async function api(): Promise<Api> {
  const h = await serviceHarness(quotesService);
  const send = (method: string, path: string, org: string, body?: unknown) =>
    h.request(method, path, { organizationId: org, ...(body === undefined ? {} : { body }) });
  return {
    h,
    send,
    call: async (method, path, org, body) => {
      const res = await send(method, path, org, body);
      const json = await res.json() as Json;
      assert(
        res.status === 200 || res.status === 201,
        `${method} ${path}: ${JSON.stringify(json)}`,
      );
      return json.data as Json;
    },
  };
}

/** A realistic organisation: tax rate, markup group, quote → group → Garment line → variant, decoration. */
async function buildFixture(a: Api, org: string): Promise<FixtureIds> {
  const taxRate = await a.call("POST", "/v1/tax-rates", org, {
    name: "GST",
    ratePct: 10,
    isDefault: true,
  });
  const markupGroup = await a.call("POST", "/v1/markup-groups", org, {
    name: "Tees",
    lane: "garment",
    isDefault: true,
    bands: garmentBands,
  });
  const quote = await a.call("POST", "/v1/quotes", org, {
    reference: "Staff uniforms",
    clientId: crypto.randomUUID(),
    salesRepEmail: "amy@shop.test",
    deliveryDate: "2026-12-01",
    notes: "Rush",
    taxRateId: taxRate.id,
  });
  const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, org, { name: "Front" });
  const line = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, org, {
    lineType: "Garment",
    productName: "Classic tee",
  });
  const variant = await a.call("POST", `/v1/quote-lines/${line.id}/variants`, org, {
    size: "M",
    colour: "Black",
    quantity: 15,
    buyPrice: 5,
    extraCost: 0.5,
    markupSource: "group",
    markupGroupId: markupGroup.id,
  });
  const decoration = await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, org, {
    quantity: 15,
    unitCost: 1.2,
    markupType: "percentage",
    markupValue: 50,
    position: "Front",
  });
  return {
    quoteId: quote.id as string,
    groupId: group.id as string,
    lineId: line.id as string,
    variantId: variant.id as string,
    decorationId: decoration.id as string,
    markupGroupId: markupGroup.id as string,
    taxRateId: taxRate.id as string,
  };
}

/** Everything an organisation can read, plus its outbox rows and the service's tables. */
async function snapshot(a: Api, org: string, ids: FixtureIds): Promise<unknown> {
  const tables = await a.h.sql<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
    ORDER BY table_name`;
  const rows: Record<string, unknown> = {};
  for (const { table_name } of tables) {
    if (table_name.includes("migration")) continue;
    const [found] = await a.h.sql<{ rows: unknown }[]>`
      SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text), '[]') AS rows
      FROM ${a.h.sql(table_name)} t`;
    rows[table_name] = found!.rows;
  }
  const [outbox] = await a.h.sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM outbox WHERE organization_id = ${org}`;
  return {
    quote: await a.call("GET", `/v1/quotes/${ids.quoteId}`, org),
    list: await a.call("GET", "/v1/quotes", org),
    markupGroups: await a.call("GET", "/v1/markup-groups", org),
    taxRates: await a.call("GET", "/v1/tax-rates", org),
    outboxRows: outbox!.count,
    tables: rows,
  };
}

const ENVELOPE_KEYS = new Set(["error", "message", "status", "details"]);

/** The response is the error envelope with this status and code (and a detail at `path`). */
async function expectError(
  res: Response,
  status: number,
  code: keyof typeof ERROR_CODES,
  path?: string,
): Promise<void> {
  const text = await res.text();
  const shown = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  assert.notEqual(res.status, 500, `a 500: ${shown}`);
  assertEquals(res.status, status, `expected ${status} ${code}, got ${res.status}: ${shown}`);
  assert(res.headers.get("content-type")?.includes("application/json"), "JSON content type");
  const body = JSON.parse(text) as Json;
  const parsed = ErrorEnvelope.safeParse(body);
  assert(parsed.success, `not the error envelope: ${text}`);
  assertEquals(Object.keys(body).filter((k) => !ENVELOPE_KEYS.has(k)), [], text);
  assertEquals(parsed.data.status, false);
  assertEquals(parsed.data.error, code, text);
  assertEquals(ERROR_CODES[parsed.data.error], res.status, "the code's own status");
  assert(parsed.data.message.length > 0, "a message");
  if (path !== undefined) {
    assert(
      parsed.data.details?.some((d) => d.path === path),
      `details should name "${path}": ${text}`,
    );
  }
}

Deno.test("bad input sweep: the table has a case for every quotes operation, and only those", () => {
  const operations = QUOTE_ROUTES.map((r) => r.operationId).sort();
  assertEquals(Object.keys(CASES).sort(), operations);
  assert(operations.length >= 27, "the quotes service has at least 27 operations");
});

Deno.test("bad input sweep: every case is well formed for its route's schema", () => {
  const ids: FixtureIds = {
    quoteId: crypto.randomUUID(),
    groupId: crypto.randomUUID(),
    lineId: crypto.randomUUID(),
    variantId: crypto.randomUUID(),
    decorationId: crypto.randomUUID(),
    markupGroupId: crypto.randomUUID(),
    taxRateId: crypto.randomUUID(),
  };
  for (const route of QUOTE_ROUTES) {
    const c = caseOf(route, ids);
    const name = route.operationId;
    if (!route.body) {
      assertEquals([c.valid, c.wrongType, c.oversized, c.negative], [
        undefined,
        undefined,
        undefined,
        undefined,
      ], `${name} has no body`);
      continue;
    }
    assert(c.valid && c.wrongType && c.oversized, `${name} needs valid, wrongType, oversized`);
    const valid = route.body.safeParse(c.valid);
    assert(valid.success, `${name}: the valid body must pass: ${JSON.stringify(valid.error)}`);
    for (const probe of [c.wrongType, c.oversized, c.negative]) {
      if (probe) assert(!route.body.safeParse(probe.body).success, `${name}: probe must fail`);
    }
    if (hasQuantity(route.body)) {
      assertEquals(c.negative?.path, "quantity", `${name} has a quantity: probe it with -1`);
    }
  }
});

Deno.test("bad input sweep: every operation refuses bad input with the envelope and nothing changes", async (t) => {
  const a = await api();
  try {
    const org = crypto.randomUUID();
    const other = crypto.randomUUID();
    const ids = await buildFixture(a, org);
    // The other organisation is real too: it has its own data, and asks for ours by id.
    const otherIds = await buildFixture(a, other);
    const before = await snapshot(a, org, ids);
    const otherBefore = await snapshot(a, other, otherIds);

    for (const route of QUOTE_ROUTES) {
      const c = caseOf(route, ids);
      const params = paramsOf(route);
      const real = fill(route, (name) => ids[name]);
      const label = `${route.operationId} (${route.method} ${route.path})`;
      await t.step(label, async (t) => {
        if (route.body) {
          const valid = c.valid!;
          await t.step("malformed JSON is 400 invalid_json", async () => {
            await expectError(await a.send(route.method, real, org, "{nope"), 400, "invalid_json");
          });
          await t.step("truncated JSON is 400 invalid_json", async () => {
            const truncated = JSON.stringify(valid).slice(0, -1);
            await expectError(
              await a.send(route.method, real, org, truncated),
              400,
              "invalid_json",
            );
          });
          await t.step("a JSON array body is 400 validation_error", async () => {
            await expectError(
              await a.send(route.method, real, org, [valid]),
              400,
              "validation_error",
            );
          });
          await t.step("an unknown field is 400 naming it", async () => {
            const res = await a.send(route.method, real, org, { ...valid, surprise: true });
            await expectError(res, 400, "validation_error", "surprise");
          });
          for (
            const [what, probe] of [
              ["a wrong type", c.wrongType],
              ["an oversized string", c.oversized],
              ["a negative number", c.negative],
            ] as const
          ) {
            if (!probe) continue;
            await t.step(`${what} is 400 naming "${probe.path}"`, async () => {
              const res = await a.send(route.method, real, org, probe.body);
              await expectError(res, 400, "validation_error", probe.path);
            });
          }
        }
        if (params.length > 0) {
          const param = params[0]!;
          for (
            const malformed of [
              "not-a-uuid",
              "42",
              `${ids[param]}0`,
              ids[param].replace(/.$/, "g"),
              "%ZZ",
            ]
          ) {
            await t.step(`a malformed ${param} "${malformed}" is 400 naming it`, async () => {
              const path = fill(route, () => malformed);
              await expectError(
                await a.send(route.method, path, org, c.valid),
                400,
                "validation_error",
                param,
              );
            });
          }
          await t.step(`an unknown ${param} is 404 not_found`, async () => {
            const path = fill(route, () => crypto.randomUUID());
            await expectError(await a.send(route.method, path, org, c.valid), 404, "not_found");
          });
          await t.step(`another organisation's ${param} is 404 not_found`, async () => {
            await expectError(await a.send(route.method, real, other, c.valid), 404, "not_found");
          });
        }
        if (route.method === "GET") {
          await t.step("an unknown query parameter is 400 naming it", async () => {
            const res = await a.send("GET", `${real}?colour=red`, org);
            await expectError(res, 400, "validation_error", "colour");
          });
          if (params.length === 0) {
            await t.step("another organisation's list names none of ours", async () => {
              const text = JSON.stringify(await a.call("GET", real, other));
              for (const [name, id] of Object.entries(ids)) {
                assert(!text.includes(id), `${name} ${id} leaked to another organisation`);
              }
            });
          }
        }
      });
    }

    await t.step("nothing changed in either organisation", async () => {
      assertEquals(await snapshot(a, org, ids), before);
      assertEquals(await snapshot(a, other, otherIds), otherBefore);
    });
  } finally {
    await a.h.close();
  }
});

/** A fresh draft quote with one group, for a probe that must not disturb another. */
async function freshGroup(a: Api, org: string): Promise<{ quoteId: string; groupId: string }> {
  const quote = await a.call("POST", "/v1/quotes", org, {});
  const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, org, { name: "Big" });
  return { quoteId: quote.id as string, groupId: group.id as string };
}

Deno.test("bad input sweep: amounts the schemas allow but whose totals are huge are never a 500", async (t) => {
  const a = await api();
  try {
    const org = crypto.randomUUID();
    const MAX_QTY = 10_000_000;
    const MAX_AMOUNT = 1_000_000_000;
    const service = { lineType: "Service", productName: "Big run" };
    /** Each probe builds what it needs and returns the request that makes the total huge. */
    const probes: [string, (g: { groupId: string }) => Promise<[string, string, Json]>][] = [
      ["a line of the largest quantity at the largest price", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/lines`,
          { ...service, quantity: MAX_QTY, unitPriceExGst: MAX_AMOUNT },
        ])],
      ["a subtotal that fits whose total with GST does not", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/lines`,
          { ...service, quantity: 95_000, unitPriceExGst: MAX_AMOUNT },
        ])],
      ["a variant with a manual sell", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        return ["POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: MAX_QTY,
          unitPriceExGst: MAX_AMOUNT,
        }];
      }],
      ["a variant priced from cost and markup", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        return ["POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: MAX_QTY,
          buyPrice: MAX_AMOUNT,
          markupType: "percentage",
          markupValue: 0,
        }];
      }],
      ["a decoration", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/decorations`,
          { quantity: MAX_QTY, baseUnitCost: MAX_AMOUNT },
        ])],
      ["PATCH a line's quantity", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          ...service,
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-lines/${line.id}`, { quantity: MAX_QTY }];
      }],
      ["PATCH a variant's quantity", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        const variant = await a.call("POST", `/v1/quote-lines/${line.id}/variants`, org, {
          size: "M",
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-variants/${variant.id}`, { quantity: MAX_QTY }];
      }],
      ["PATCH a decoration's quantity", async (g) => {
        const decoration = await a.call("POST", `/v1/quote-groups/${g.groupId}/decorations`, org, {
          quantity: 1,
          baseUnitCost: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-decorations/${decoration.id}`, { quantity: MAX_QTY }];
      }],
      ["a percentage discount of the largest percentage", async (g) => {
        await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          ...service,
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["POST", `/v1/quote-groups/${g.groupId}/lines`, {
          lineType: "Discount",
          productName: "Everything off",
          valueType: "Percentage",
          percentage: MAX_AMOUNT,
        }];
      }],
    ];
    for (const [name, build] of probes) {
      await t.step(name, async () => {
        const g = await freshGroup(a, org);
        const [method, path, body] = await build(g);
        const before = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
        const res = await a.send(method, path, org, body);
        if (res.status === 200 || res.status === 201) {
          // Accepted: the totals must be stored and reported, not wrapped or truncated.
          await res.body?.cancel();
          const quote = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
          const subtotal = quote.subtotalExGst as number;
          assert(Math.abs(subtotal) >= 1e13, `a huge subtotal is reported: ${subtotal}`);
          assertEquals(
            quote.totalIncGst,
            Math.round((subtotal + (quote.gstAmount as number)) * 100) / 100,
          );
        } else {
          // Refused: a 400 naming what is too large, and the quote is as it was.
          await expectError(res, 400, "validation_error");
          const after = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
          assertEquals(
            [after.subtotalExGst, after.totalIncGst],
            [before.subtotalExGst, before.totalIncGst],
          );
        }
      });
    }
    await t.step("a tax rate change that takes the total past what can be stored", async () => {
      const g = await freshGroup(a, org);
      await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
        ...service,
        quantity: 90_000,
        unitPriceExGst: MAX_AMOUNT,
      });
      const rate = await a.call("POST", "/v1/tax-rates", org, { name: "All", ratePct: 100 });
      const res = await a.send("PATCH", `/v1/quotes/${g.quoteId}`, org, { taxRateId: rate.id });
      if (res.status === 200) {
        const quote = (await res.json() as Json).data as Json;
        assertEquals([quote.subtotalExGst, quote.totalIncGst], [9e13, 1.8e14]);
      } else {
        await expectError(res, 400, "validation_error");
      }
    });
  } finally {
    await a.h.close();
  }
});

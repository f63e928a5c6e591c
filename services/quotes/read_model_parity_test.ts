/**
 * Parity of the two read models of a quote: the JSON PostgreSQL builds (store/quote_json.ts, what
 * GET /v1/quotes and GET /v1/quotes/{id} send as it is) and the JS presenters (toQuote over
 * groupsOfQuotes: toGroup, toLine, toVariant, toDecoration), which the write answers of groups and
 * items still use. Quotes with every kind of row are built through the API; then, with and
 * without costs.read, the SQL-built quote parsed must deep-equal the presented one, with the keys
 * in the same order: nulls, custom lines, every line type, colours base first, decimals such as
 * 0.0001 and 12.3456, and timestamps to the millisecond, including microsecond values set by SQL
 * where rounding and truncation differ, read in a session whose time zone is not UTC.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { Quote } from "@printshop/shared/contracts/quotes";
import { type Queryable, transaction } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";
import { QUOTE_COLUMNS, type QuoteRow, toQuote } from "./store/rows.ts";
import { groupsOfQuotes } from "./store/read_model.ts";
import { findQuoteJson } from "./store/quotes.ts";
import { applyCustomerFacts } from "./store/customers.ts";
import { COST_FIELDS } from "@printshop/shared/costs";
import { ApiError } from "@printshop/shared/http";

type Json = Record<string, unknown>;

const NO_COSTS = ALL_SCOPES.filter((s) => s !== "costs.read");

/** Text that JSON must escape: quotes, backslashes, control characters, non-ASCII, astral. */
const AWKWARD = 'He said "rush" \\ back\tslash\nnew line \u0001\u001f é ✓ 😀 </script>';

interface Api {
  h: ServiceHarness<Config>;
  org: string;
  call(method: string, path: string, body?: unknown): Promise<Json>;
  get(path: string, scopes?: readonly string[]): Promise<{ res: Response; json: Json }>;
}

async function api(): Promise<Api> {
  const h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  return {
    h,
    org,
    call: async (method, path, body) => {
      const res = await h.request(method, path, {
        organizationId: org,
        ...(body === undefined ? {} : { body }),
      });
      const json = await res.json() as Json;
      assert(
        res.status === 200 || res.status === 201,
        `${method} ${path}: ${JSON.stringify(json)}`,
      );
      return json.data as Json;
    },
    get: async (path, scopes) => {
      const res = await h.request("GET", path, {
        organizationId: org,
        ...(scopes ? { scopes } : {}),
      });
      return { res, json: JSON.parse(await res.text()) as Json };
    },
  };
}

/**
 * Four quotes: one with every field and every kind of row, one with nothing (nulls, no groups),
 * one with an empty group, one sent (sentAt, sentToEmail). Returns their ids.
 */
async function buildQuotes(a: Api): Promise<string[]> {
  const garmentGroup = await a.call("POST", "/v1/markup-groups", {
    name: "Garments",
    lane: "garment",
    bands: [
      { from: 1, markupType: "percentage", markupValue: 33.3333333333 },
      { from: 12, markupType: "fixed", markupValue: 0.0001 },
    ],
  });
  const decorationGroup = await a.call("POST", "/v1/markup-groups", {
    name: "Prints",
    lane: "decoration",
    decorationMethod: "ScreenPrinting",
    bands: [{ from: 1, markupType: "percentage", markupValue: 12.3456 }],
  });
  const setupGroup = await a.call("POST", "/v1/markup-groups", {
    name: "Setups",
    lane: "setup",
    bands: [{ from: 0, markupType: "fixed", markupValue: 7.7 }],
  });
  const taxRate = await a.call("POST", "/v1/tax-rates", { name: "Odd tax", ratePct: 12.3456 });

  const full = await a.call("POST", "/v1/quotes", {
    reference: AWKWARD,
    clientId: crypto.randomUUID(),
    contactId: crypto.randomUUID(),
    shippingAddressId: crypto.randomUUID(),
    salesRepEmail: "amy@shop.test",
    deliveryMethod: "Courier",
    deliveryDate: "2026-12-01",
    productionDeadline: "2026-11-28",
    invoiceDueDate: "2027-01-15",
    notes: AWKWARD,
    mockId: crypto.randomUUID(),
    jobId: "JOB-1",
    jobRef: "J-0001",
    invoiceId: "INV-1",
    invoiceStatus: "draft",
    taxRateId: taxRate.id,
  });
  // Its client as the customer projection knows it, by a name JSON must escape.
  await applyCustomerFacts(a.h.deps.sql, [{
    organizationId: a.org,
    customerId: full.clientId as string,
    name: AWKWARD,
    isArchived: false,
    deleted: false,
    occurredAt: new Date().toISOString(),
    eventId: crypto.randomUUID(),
  }]);
  const empty = await a.call("POST", "/v1/quotes", {});
  const emptyGroup = await a.call("POST", "/v1/quotes", { reference: "Only a group" });
  await a.call("POST", `/v1/quotes/${emptyGroup.id}/groups`, { name: "Nothing yet" });
  const sent = await a.call("POST", "/v1/quotes", { reference: "Sent one" });

  // Full: two groups (the second placed first), every line type, every kind of variant.
  const main = await a.call("POST", `/v1/quotes/${full.id}/groups`, { name: AWKWARD });
  const first = await a.call("POST", `/v1/quotes/${full.id}/groups`, {
    name: "Placed first",
    sortOrder: 1,
  });
  await a.call("PATCH", `/v1/quote-groups/${first.id}`, {
    rollUpDecoration: true,
    rollUpSetup: true,
  });
  const garment = await a.call("POST", `/v1/quote-groups/${main.id}/lines`, {
    lineType: "Garment",
    productName: "Classic tee",
    productSku: "AS-5001",
    title: AWKWARD,
    description: AWKWARD,
    garmentCatalogueItemId: crypto.randomUUID(),
    customImageUrl: "https://img.test/tee.png",
    discountValueType: "Percentage",
    discountPercentage: 12.3456,
  });
  const variants = [
    { size: "M", colour: "Black", quantity: 3, buyPrice: 0.0001, extraCost: 12.3456 },
    {
      size: "L",
      colour: "Navy",
      quantity: 5,
      buyPrice: 2.5,
      markupSource: "group",
      markupGroupId: garmentGroup.id,
    },
    { size: "XL", quantity: 2, buyPrice: 4, markupType: "fixed", markupValue: 0.0001 },
    { quantity: 1, isCustomLine: true, unitPriceExGst: 12.3456, showOnDocuments: true },
    { quantity: 0, size: "S", sortOrder: 1, buyPrice: 1, markupType: "percentage", markupValue: 0 },
  ];
  for (const variant of variants) {
    await a.call("POST", `/v1/quote-lines/${garment.id}/variants`, variant);
  }
  await a.call("POST", `/v1/quote-groups/${main.id}/lines`, {
    lineType: "Garment",
    productName: "Tee without variants",
  });
  const otherLines = [
    { lineType: "Decoration", productName: "Print", quantity: 4, unitPriceExGst: 0.0001 },
    { lineType: "Service", productName: "Folding", quantity: 3, unitPriceExGst: 999999999.9999 },
    { lineType: "Cost", productName: "Freight", quantity: 1, unitPriceExGst: 7.7 },
    { lineType: "Discount", productName: "Loyalty", valueType: "Percentage", percentage: 12.3456 },
    { lineType: "Surcharge", productName: "Rush", unitPriceExGst: 15, sortOrder: 2 },
    {
      lineType: "Other",
      productName: "Misc",
      quantity: 2,
      unitPriceExGst: 1.1,
      discountValueType: "Flat",
      discountPercentage: 0.0001,
    },
  ];
  for (const line of otherLines) {
    await a.call("POST", `/v1/quote-groups/${main.id}/lines`, line);
  }
  const garmentInFirst = await a.call("POST", `/v1/quote-groups/${first.id}/lines`, {
    lineType: "Garment",
    productName: "Hoodie",
  });
  await a.call("POST", `/v1/quote-lines/${garmentInFirst.id}/variants`, {
    size: "M",
    quantity: 7,
    buyPrice: 20,
    markupType: "percentage",
    markupValue: 50,
  });
  await a.call("POST", `/v1/quote-groups/${main.id}/decorations`, {
    quantity: 10,
    decorationItemId: crypto.randomUUID(),
    method: "ScreenPrinting",
    position: AWKWARD,
    unitCost: 1.2345,
    setupCost: 45,
    includeSetupCost: true,
    markupSource: "group",
    markupGroupId: decorationGroup.id,
    setupMarkupSource: "group",
    setupMarkupGroupId: setupGroup.id,
    rollUp: true,
    rollUpSetup: true,
    showOnDocuments: false,
    description: AWKWARD,
    widthCm: 12.34,
    lengthCm: 0,
    necklineDropCm: 0.01,
    screenCount: 3,
    screenMeshGrade: "160",
    colourCount: 3,
    colours: [
      { name: "Navy", isBase: false },
      { name: "Red" },
      { name: "White", isBase: true },
      { name: AWKWARD, isBase: false },
    ],
    specialInstructions: AWKWARD,
    artworkFileUrl: "https://files.test/art.ai",
    separationFileUrl: "https://files.test/seps.pdf",
  });
  await a.call("POST", `/v1/quote-groups/${main.id}/decorations`, {
    quantity: 0,
    sortOrder: 1,
  });
  await a.call("POST", `/v1/quote-groups/${main.id}/decorations`, {
    quantity: 4,
    method: "Embroidery",
    unitCost: 0.0001,
    setupCost: 12.3456,
    markupType: "fixed",
    markupValue: 1.5,
    setupMarkupType: "percentage",
    setupMarkupValue: 33.3333333333,
    colours: [{ name: "Gold", isBase: false }, { name: "Silver", isBase: false }],
  });
  await a.call("POST", `/v1/quotes/${sent.id}/status`, {
    status: "sent",
    sentToEmail: "buyer@client.test",
  });

  // Timestamps a JS Date cannot hold: microseconds where rounding and truncation differ, one
  // that rounding would carry into the next year, and one before 1970.
  const tricky = [
    "2026-03-04 05:06:07.999999+00",
    "1999-12-31 23:59:59.9995+00",
    "2026-07-01 12:00:00.0015+09:30",
    "1969-07-20 20:17:40.123456+00",
    "2026-01-02 03:04:05+00",
  ];
  const set = (table: string, column: string, i: number, where = "true") =>
    a.h.sql.unsafe(
      `UPDATE ${table} SET ${column} = $1::timestamptz WHERE organization_id = $2 AND ${where}`,
      [tricky[i % tricky.length]!, a.org],
    );
  await set("quotes", "created_at", 0, `id = '${full.id}'`);
  await set("quotes", "updated_at", 1, `id = '${full.id}'`);
  await set("quotes", "sent_at", 2, `id = '${sent.id}'`);
  await set("quote_groups", "updated_at", 3);
  await set("quote_lines", "created_at", 1);
  await set("quote_lines", "updated_at", 4, "line_type = 'Garment'");
  await set("quote_variants", "created_at", 0);
  await set("quote_variants", "updated_at", 3, "is_custom_line");
  await set("quote_decorations", "created_at", 2);
  await set("quote_decorations", "updated_at", 1, "quantity = 0");
  // Equal sortOrders in pairs (1, 2 → 1; 3, 4 → 2 …), which the API never leaves behind, so
  // the id tie-break is compared too.
  for (const table of ["quote_groups", "quote_lines", "quote_variants", "quote_decorations"]) {
    await a.h.sql.unsafe(
      `UPDATE ${table} SET sort_order = (sort_order + 1) / 2 WHERE organization_id = $1`,
      [a.org],
    );
  }
  await a.h.sql`UPDATE quote_decorations SET sort_order = 6
    WHERE organization_id = ${a.org} AND quantity > 0`;
  return [full.id, empty.id, emptyGroup.id, sent.id] as string[];
}

/** The quotes as the JS presenters give them, by id. */
async function presented(
  sql: Queryable,
  org: string,
  ids: string[],
  costs: boolean,
): Promise<Map<string, Quote>> {
  const rows = await sql<QuoteRow[]>`
    SELECT ${sql.unsafe(QUOTE_COLUMNS)} FROM quotes
    WHERE organization_id = ${org} AND id = ANY(${ids}::uuid[])`;
  const groups = await groupsOfQuotes(sql, ids, costs);
  return new Map(rows.map((row) => [row.id, toQuote(row, groups.get(row.id) ?? [])]));
}

/** Deep-equal, and the same keys in the same order at every level (the same JSON text). */
function assertSame(actual: unknown, expected: unknown, message: string): void {
  assertEquals(actual, expected, message);
  assertEquals(JSON.stringify(actual), JSON.stringify(expected), `${message} (key order)`);
}

/** Every key of every object nested in `value`. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysIn(v, into));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      keysIn(v, into);
    }
  }
  return into;
}

Deno.test("the SQL-built quote JSON equals the JS presenters' quote", async (t) => {
  const a = await api();
  try {
    const ids = await buildQuotes(a);
    const [fullId] = ids as [string];

    await t.step("the data set has what the comparison must cover", async () => {
      const full = (await presented(a.h.sql, a.org, [fullId], true)).get(fullId)!;
      const lines = full.groups.flatMap((g) => g.lines);
      const variants = lines.flatMap((l) => l.variants);
      const decorations = full.groups.flatMap((g) => g.decorations);
      assertEquals(
        [...new Set(lines.map((l) => l.lineType))].sort(),
        ["Cost", "Decoration", "Discount", "Garment", "Other", "Service", "Surcharge"],
      );
      assert(variants.some((v) => v.isCustomLine && v.size === null && v.colour === null));
      assert(variants.some((v) => v.buyPrice === 0.0001 && v.extraCost === 12.3456));
      assert(variants.some((v) => v.markupSource === "group" && v.markupGroupId !== null));
      assert(lines.some((l) => l.percentage === 12.3456 && l.valueType === "Percentage"));
      assert(lines.some((l) => l.unitPriceExGst === 999999999.9999));
      assertEquals(full.taxRatePct, 12.3456);
      assertEquals(full.clientName, AWKWARD);
      const printed = decorations.find((d) => d.method === "ScreenPrinting")!;
      assertEquals(printed.colours.map((c) => c.name), ["White", "Navy", "Red", AWKWARD]);
      assertEquals([printed.widthCm, printed.lengthCm, printed.necklineDropCm], [12.34, 0, 0.01]);
      assert(decorations.some((d) => d.colours.length === 0 && d.method === null));
      assertEquals(full.groups.map((g) => g.sortOrder), [1, 1], "a tie, broken by id");
      for (const rows of [lines, variants, decorations]) {
        const orders = rows.map((r) => r.sortOrder);
        assert(new Set(orders).size < orders.length, `ties among ${JSON.stringify(orders)}`);
      }
      assertEquals(full.createdAt, "2026-03-04T05:06:07.999Z", "milliseconds are truncated");
      assertEquals(full.updatedAt, "1999-12-31T23:59:59.999Z", "no carry into the next year");
    });

    for (const costs of [true, false]) {
      const who = costs ? "with costs.read" : "without costs.read";

      await t.step(`findQuoteJson parses to toQuote's quote, ${who}`, async () => {
        const expected = await presented(a.h.sql, a.org, ids, costs);
        for (const id of ids) {
          // As the service reads it: the runtime role, for the organisation.
          const text = await withOrganization(
            a.org,
            () => findQuoteJson(a.h.deps.sql, a.org, id, costs),
          );
          assertSame(JSON.parse(text), expected.get(id), `quote ${id}, ${who}`);
        }
        // Another organisation's quote is not found, exactly like a missing one.
        const other = crypto.randomUUID();
        await assert.rejects(
          withOrganization(
            other,
            () => findQuoteJson(a.h.deps.sql, other, fullId, costs),
          ),
          (error) => error instanceof ApiError && error.code === "not_found",
        );
      });

      await t.step(`the same in a session whose time zone is not UTC, ${who}`, async () => {
        await withOrganization(a.org, () =>
          transaction(a.h.deps.sql, async (tx) => {
            await tx`SET LOCAL TimeZone = 'Australia/Adelaide'`;
            const expected = await presented(tx, a.org, ids, costs);
            for (const id of ids) {
              const text = await findQuoteJson(tx, a.org, id, costs);
              assertSame(JSON.parse(text), expected.get(id), `quote ${id}, ${who}, Adelaide`);
            }
          }));
      });

      await t.step(`GET /v1/quotes and /v1/quotes/{id} send it, ${who}`, async () => {
        const scopes = costs ? ALL_SCOPES : NO_COSTS;
        const expected = await presented(a.h.sql, a.org, ids, costs);
        const { res, json } = await a.get("/v1/quotes?limit=200", scopes);
        assertEquals(res.status, 200);
        assertEquals(res.headers.get("content-type"), "application/json");
        assertEquals(Object.keys(json), ["status", "message", "data"]);
        assertEquals([json.status, json.message], [true, "OK"]);
        const page = json.data as { items: Quote[]; totalCount: number };
        assertEquals(Object.keys(page), ["items", "totalCount", "hasMore"]);
        assertEquals(page.totalCount, ids.length);
        assertEquals(page.items.map((q) => q.id).sort(), [...ids].sort());
        for (const item of page.items) {
          assertSame(item, expected.get(item.id), `list item ${item.id}, ${who}`);
        }
        for (const id of ids) {
          const one = await a.get(`/v1/quotes/${id}`, scopes);
          assertEquals(one.res.status, 200);
          assertEquals(one.res.headers.get("content-type"), "application/json");
          assertSame(one.json, { status: true, message: "OK", data: expected.get(id) }, id);
        }
        const keys = keysIn(page);
        assertEquals(
          COST_FIELDS.filter((f) => keys.has(f)),
          costs ? [...COST_FIELDS] : [],
          "cost keys are present with costs.read and absent (not null) without",
        );
        const empty = await a.get("/v1/quotes?limit=0", scopes);
        assertSame(
          empty.json.data,
          { items: [], totalCount: ids.length, hasMore: true },
          "limit=0",
        );
      });
    }

    await t.step("a quote's write answer is the quote as GET shows it", async () => {
      const patched = await a.call("PATCH", `/v1/quotes/${fullId}`, { jobRef: "J-0002" });
      const got = await a.call("GET", `/v1/quotes/${fullId}`);
      assertSame(patched, got, "PATCH answer = GET");
      assertEquals(got.jobRef, "J-0002");
    });
  } finally {
    await a.h.close();
  }
});

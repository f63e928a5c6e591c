/**
 * The pricing preview: a tree previewed prices exactly as the same tree written through the
 * write operations reads back (a property over generated trees, with markup groups whose bands
 * miss as well as match), nothing is written, and it is refused as the writes would refuse it.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import {
  PREVIEW_LIMITS,
  PREVIEW_QUOTE_BODY_EXAMPLE,
  PreviewQuoteBody,
  QUOTE_PREVIEW_EXAMPLE,
  type QuotePreview,
} from "@printshop/shared/contracts/quotes";
import { previewQuote } from "./domain/preview.ts";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

type Json = Record<string, unknown>;
type Tree = NonNullable<PreviewQuoteBody["groups"]>;

/** The organisation's markup groups: defaults for every lane, and a named garment group. */
async function markupGroups(
  h: ServiceHarness<Config>,
  org: string,
): Promise<{ garment: string; decoration: string; setup: string }> {
  const make = (body: Json): Promise<{ id: string }> =>
    okAs(h, "POST", "/v1/markup-groups", org, body);
  // A line of quantity 0 misses every band (they start at 1): its rows keep the markup they had.
  await make({
    name: "Default garments",
    lane: "garment",
    isDefault: true,
    bands: [
      { from: 1, markupType: "percentage", markupValue: 45 },
      { from: 24, markupType: "percentage", markupValue: 33.3333 },
      { from: 72, markupType: "fixed", markupValue: 1.15 },
    ],
  });
  const garment = await make({
    name: "Sports clubs",
    lane: "garment",
    bands: [{ from: 1, markupType: "percentage", markupValue: 27.5 }, {
      from: 40,
      markupType: "fixed",
      markupValue: 2,
    }],
  });
  const decoration = await make({
    name: "Screen print",
    lane: "decoration",
    isDefault: true,
    bands: [{ from: 1, markupType: "percentage", markupValue: 80 }, {
      from: 100,
      markupType: "percentage",
      markupValue: 55,
    }],
  });
  const setup = await make({
    name: "Setup",
    lane: "setup",
    isDefault: true,
    appliesToSetupCost: true,
    bands: [{ from: 0, markupType: "fixed", markupValue: 15 }, {
      from: 50,
      markupType: "percentage",
      markupValue: 20,
    }],
  });
  return { garment: garment.id, decoration: decoration.id, setup: setup.id };
}

const amount = (max: number): fc.Arbitrary<number> =>
  fc.integer({ min: 0, max: max * 10_000 }).map((n) => n / 10_000);
const markup = fc.oneof(
  fc.record({
    markupType: fc.constant("percentage" as const),
    markupValue: fc.integer({ min: -5000, max: 20000 }).map((n) => n / 100),
  }),
  fc.record({ markupType: fc.constant("fixed" as const), markupValue: amount(20) }),
);

function variantArb(garmentGroup: string): fc.Arbitrary<Json> {
  const base = fc.record({
    quantity: fc.integer({ min: 0, max: 60 }),
    buyPrice: amount(30),
    extraCost: fc.oneof(fc.constant(0), amount(3)),
  });
  const pricing = fc.oneof(
    markup,
    fc.record({ unitPriceExGst: amount(60) }),
    fc.record({
      markupSource: fc.constant("group"),
      markupGroupId: fc.constantFrom(garmentGroup, null),
    }),
    fc.record({ markupSource: fc.constant("group") }, { requiredKeys: [] }).chain((g) =>
      markup.map((m) => ({ ...g, ...m }))
    ),
  );
  return fc.tuple(base, pricing, fc.boolean()).map(([b, p, custom]) =>
    custom ? { ...b, ...p, isCustomLine: true } : { ...b, ...p, size: "M", colour: "Black" }
  );
}

function lineArb(garmentGroup: string): fc.Arbitrary<Json> {
  return fc.oneof(
    fc.record({
      lineType: fc.constant("Garment"),
      productName: fc.constant("Tee"),
      variants: fc.array(variantArb(garmentGroup), { maxLength: 5 }),
    }),
    fc.tuple(
      fc.record({
        lineType: fc.constantFrom("Service", "Cost", "Other", "Decoration"),
        productName: fc.constant("Artwork"),
        quantity: fc.integer({ min: 0, max: 20 }),
        unitPriceExGst: amount(80),
      }),
      fc.option(
        fc.record({
          discountValueType: fc.constantFrom("Flat", "Percentage"),
          discountPercentage: amount(20),
        }),
        { nil: undefined },
      ),
    ).map(([line, discount]) => ({ ...line, ...discount })),
    fc.record({
      lineType: fc.constantFrom("Discount", "Surcharge"),
      productName: fc.constant("Adjustment"),
      valueType: fc.constantFrom("Flat", "Percentage"),
      quantity: fc.integer({ min: 0, max: 3 }),
      unitPriceExGst: amount(40),
      percentage: amount(25),
    }),
  );
}

const lane = (prefix: "" | "setup", group: string | null): fc.Arbitrary<Json> => {
  const key = (k: string): string => prefix === "" ? k : `setup${k[0]!.toUpperCase()}${k.slice(1)}`;
  return fc.oneof(
    markup.map((m) => ({ [key("markupType")]: m.markupType, [key("markupValue")]: m.markupValue })),
    fc.constant({
      [key("markupSource")]: "group",
      ...(group ? { [key("markupGroupId")]: group } : {}),
    }),
    fc.constant({}),
  );
};

function decorationArb(groups: { decoration: string; setup: string }): fc.Arbitrary<Json> {
  return fc.tuple(
    fc.record({
      method: fc.constantFrom("ScreenPrinting", "Embroidery"),
      quantity: fc.integer({ min: 0, max: 150 }),
      unitCost: amount(5),
      setupCost: amount(80),
      includeSetupCost: fc.boolean(),
    }),
    lane("", fc.sample(fc.constantFrom(groups.decoration, null), 1)[0]!),
    lane("setup", groups.setup),
    fc.option(fc.record({ baseUnitCost: amount(12) }), { nil: undefined }),
  ).map(([d, unit, setup, charge]) => ({ ...d, ...unit, ...setup, ...charge }));
}

function treeArb(
  groups: { garment: string; decoration: string; setup: string },
): fc.Arbitrary<Tree> {
  return fc.array(
    fc.record({
      name: fc.constant("Group"),
      lines: fc.array(lineArb(groups.garment), { maxLength: 4 }),
      decorations: fc.array(decorationArb(groups), { maxLength: 2 }),
    }),
    { minLength: 1, maxLength: 3 },
  ) as unknown as fc.Arbitrary<Tree>;
}

/** The tree written through the write operations, in the order the preview prices it. */
async function write(h: ServiceHarness<Config>, org: string, tree: Tree): Promise<string> {
  const quote = await okAs<{ id: string }>(h, "POST", "/v1/quotes", org, { reference: "Written" });
  for (const { lines = [], decorations = [], ...group } of tree) {
    const g = await okAs<{ id: string }>(h, "POST", `/v1/quotes/${quote.id}/groups`, org, group);
    for (const { variants = [], ...line } of lines) {
      const l = await okAs<{ id: string }>(h, "POST", `/v1/quote-groups/${g.id}/lines`, org, line);
      for (const variant of variants) {
        await okAs(h, "POST", `/v1/quote-lines/${l.id}/variants`, org, variant);
      }
    }
    for (const decoration of decorations) {
      await okAs(h, "POST", `/v1/quote-groups/${g.id}/decorations`, org, decoration);
    }
  }
  return quote.id;
}

const pick = <K extends string>(row: Json, keys: readonly K[]): Record<K, unknown> =>
  Object.fromEntries(keys.map((k) => [k, row[k]])) as Record<K, unknown>;

const VARIANT_FIELDS = [
  "quantity",
  "unitPriceExGst",
  "markupType",
  "markupValue",
  "markupSource",
] as const;
const DECORATION_FIELDS = [
  "quantity",
  "baseUnitCost",
  "baseSetupCost",
  "markupType",
  "markupValue",
  "markupSource",
  "setupMarkupType",
  "setupMarkupValue",
  "setupMarkupSource",
] as const;

/** What the stored quote reads, in the preview's shape (every figure both of them carry). */
function asRead(quote: Json): Json {
  const groups = quote.groups as Json[];
  return {
    subtotalExGst: quote.subtotalExGst,
    gstAmount: quote.gstAmount,
    totalIncGst: quote.totalIncGst,
    taxRateId: quote.taxRateId,
    taxRatePct: quote.taxRatePct,
    groups: groups.map((g) => ({
      totalQuantity: g.totalQuantity,
      lines: (g.lines as Json[]).map((l) => ({
        quantity: l.quantity,
        unitPriceExGst: l.unitPriceExGst,
        variants: (l.variants as Json[]).map((v) => pick(v, VARIANT_FIELDS)),
      })),
      decorations: (g.decorations as Json[]).map((d) => pick(d, DECORATION_FIELDS)),
    })),
  };
}

function previewAsRead(preview: QuotePreview): Json {
  return {
    subtotalExGst: preview.subtotalExGst,
    gstAmount: preview.gstAmount,
    totalIncGst: preview.totalIncGst,
    taxRateId: preview.taxRateId,
    taxRatePct: preview.taxRatePct,
    groups: preview.groups.map((g) => ({
      totalQuantity: g.totalQuantity,
      lines: g.lines.map((l) => ({
        quantity: l.quantity,
        unitPriceExGst: l.unitPriceExGst,
        variants: l.variants.map((v) => pick(v as unknown as Json, VARIANT_FIELDS)),
      })),
      decorations: g.decorations.map((d) => pick(d as unknown as Json, DECORATION_FIELDS)),
    })),
  };
}

Deno.test("a previewed tree prices to the cent as the same tree written and read back", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const groups = await markupGroups(h, org);
  // The organisation's first quote creates its default rate: write one so both sides use it.
  await okAs(h, "POST", "/v1/quotes", org, { reference: "first" });
  await fc.assert(
    fc.asyncProperty(treeArb(groups), async (tree) => {
      const preview = await okAs<QuotePreview>(h, "POST", "/v1/quotes/preview", org, {
        groups: tree,
      });
      const quoteId = await write(h, org, tree);
      const stored = await okAs<Json>(h, "GET", `/v1/quotes/${quoteId}`, org);
      assertEquals(previewAsRead(preview), asRead(stored));
      // Line and group totals add up to the quote's subtotal, rounded once.
      const groupsTotal = preview.groups.reduce((sum, g) => sum + g.totalExGst, 0);
      assert(Math.abs(Math.round(groupsTotal * 100) / 100 - preview.subtotalExGst) < 0.0101);
      for (const g of preview.groups) {
        const rows = g.lines.reduce((s, l) => s + l.totalExGst, 0) +
          g.decorations.reduce((s, d) => s + d.totalExGst, 0);
        assert(Math.abs(rows - g.totalExGst) < 1e-6, JSON.stringify(g));
      }
    }),
    { numRuns: 40 },
  );
});

Deno.test("a preview writes nothing and sends no event; its default rate is not created", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const before = (await h.sql`SELECT count(*)::int AS n FROM outbox`)[0]!.n;
  const preview = await okAs<QuotePreview>(h, "POST", "/v1/quotes/preview", org, {
    reference: "Not stored",
    groups: [{
      name: "Tees",
      lines: [{
        lineType: "Garment",
        productName: "Tee",
        variants: [{
          size: "M",
          quantity: 10,
          buyPrice: 5,
          markupType: "percentage",
          markupValue: 40,
        }],
      }],
    }],
  });
  assertEquals(
    pick(preview as unknown as Json, [
      "subtotalExGst",
      "gstAmount",
      "totalIncGst",
      "taxRateId",
      "taxName",
      "taxRatePct",
    ]),
    {
      subtotalExGst: 70,
      gstAmount: 7,
      totalIncGst: 77,
      taxRateId: null,
      taxName: "GST",
      taxRatePct: 10,
    },
  );
  assertEquals((await h.sql`SELECT count(*)::int AS n FROM outbox`)[0]!.n, before);
  const [counts] = await h.sql`
    SELECT (SELECT count(*)::int FROM quotes WHERE organization_id = ${org}) AS quotes,
      (SELECT count(*)::int FROM tax_rates WHERE organization_id = ${org}) AS rates`;
  assertEquals({ ...counts }, { quotes: 0, rates: 0 });
});

Deno.test("a preview needs costs.read as well as quotes.read", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const withoutCosts = ALL_SCOPES.filter((s) => s !== "costs.read");
  const refused = await callAs(h, "POST", "/v1/quotes/preview", org, { groups: [] }, withoutCosts);
  assertEquals(refused.status, 403);
  assertEquals(refused.body.error, "insufficient_scope");
  assert(refused.body.message.includes("costs.read"), refused.body.message);
  const noRead = await callAs(h, "POST", "/v1/quotes/preview", org, {}, ["costs.read"]);
  assertEquals(noRead.status, 403);
  assert(noRead.body.message.includes("quotes.read"), noRead.body.message);
});

Deno.test("a preview is refused where the writes would be, the path pointing into the tree", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const theirs = await okAs<{ id: string }>(h, "POST", "/v1/markup-groups", other, {
    name: "Theirs",
    lane: "garment",
    bands: [{ from: 1, markupType: "percentage", markupValue: 50 }],
  });
  const theirRate = await okAs<{ id: string }>(h, "POST", "/v1/tax-rates", other, {
    name: "VAT",
    ratePct: 20,
  });
  const refused = async (body: Json): Promise<{ path: string; message: string }> => {
    const answer = await callAs(h, "POST", "/v1/quotes/preview", org, body);
    assertEquals(answer.status, 400, JSON.stringify(answer.body));
    assertEquals(answer.body.error, "validation_error");
    return answer.body.details![0]!;
  };
  const garment = (variant: Json): Json => ({
    groups: [{
      name: "G",
      lines: [{ lineType: "Garment", productName: "Tee" }, {
        lineType: "Garment",
        productName: "Tee",
        variants: [{ size: "M", quantity: 1 }, { size: "L", quantity: 1, ...variant }],
      }],
    }],
  });
  // Another organisation's markup group reads as one that does not exist.
  assertEquals(await refused(garment({ markupSource: "group", markupGroupId: theirs.id })), {
    path: "groups.0.lines.1.variants.1.markupGroupId",
    message: "Must be a garment markup group of this organisation",
  });
  assertEquals(
    (await refused(garment({ markupSource: "group" }))).path,
    "groups.0.lines.1.variants.1.markupSource",
  );
  assertEquals(
    (await refused(garment({ unitPriceExGst: 5, markupType: "fixed", markupValue: 1 }))).path,
    "groups.0.lines.1.variants.1.unitPriceExGst",
  );
  assertEquals(
    (await refused(garment({ isCustomLine: true }))).path,
    "groups.0.lines.1.variants.1.size",
  );
  assertEquals(await refused({ taxRateId: theirRate.id }), {
    path: "taxRateId",
    message: "No such tax rate in this organisation",
  });
  assertEquals(
    await refused({
      groups: [{
        name: "G",
        lines: [{
          lineType: "Discount",
          productName: "Off",
          variants: [{ size: "M", quantity: 1 }],
        }],
      }],
    }),
    { path: "groups.0.lines.0.variants", message: "A Discount line has no variants" },
  );
  assertEquals(
    (await refused({
      groups: [{ name: "G", decorations: [{ quantity: 1, setupMarkupSource: "group" }] }],
    })).path,
    "groups.0.decorations.0.setupMarkupSource",
  );
  // The schema's own rules, with their paths, and the size of a tree.
  assertEquals(
    (await refused({
      groups: [{
        name: "G",
        lines: [{ lineType: "Garment", productName: "Tee", variants: [{ quantity: -1 }] }],
      }],
    })).path,
    "groups.0.lines.0.variants.0.quantity",
  );
  const wide = Array.from({ length: 11 }, () => ({
    name: "G",
    lines: [{
      lineType: "Garment",
      productName: "Tee",
      variants: Array.from(
        { length: PREVIEW_LIMITS.variantsPerLine },
        () => ({ size: "M", quantity: 1 }),
      ),
    }],
  }));
  assertEquals((await refused({ groups: wide })).path, "groups");
  assertEquals((await refused({ groups: [], sortOrder: 1 })).path, "sortOrder");
});

Deno.test("the document's preview example is what the preview answers for its example body", () => {
  const outcome = previewQuote(
    PreviewQuoteBody.parse(PREVIEW_QUOTE_BODY_EXAMPLE),
    [],
    { id: QUOTE_PREVIEW_EXAMPLE.taxRateId, name: "GST", ratePct: "10" },
  );
  assertEquals(outcome, { ok: true, preview: QUOTE_PREVIEW_EXAMPLE });
});

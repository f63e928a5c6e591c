/**
 * The pricing preview: a whole quote tree in the shape the write operations take, priced as the
 * same tree written through them would read, and nothing stored.
 */
import { z } from "zod";
import { described, setExamples, Uuid } from "../common.ts";
import { operations } from "../operation.ts";
import { CreateQuoteBody } from "./quotes.ts";
import { CreateQuoteGroupBody } from "./groups.ts";
import { CreateQuoteLineBody } from "./lines.ts";
import { CreateQuoteVariantBody } from "./variants.ts";
import { CREATE_QUOTE_DECORATION_EXAMPLE, CreateQuoteDecorationBody } from "./decorations.ts";
import { MarkupSource, MarkupType } from "./values.ts";

/**
 * How big a tree one preview prices. Each variant written re-bands its line's `group` rows, as
 * the writes would, so a line's cost grows with the square of its variants: these bound one
 * request's work to a few milliseconds.
 */
export const PREVIEW_LIMITS = {
  groups: 50,
  linesPerGroup: 100,
  variantsPerLine: 100,
  decorationsPerGroup: 50,
  rows: 1_000,
} as const;

const atMost = (n: number, what: string): string => `At most ${n} ${what}`;

export const PreviewLineBody = CreateQuoteLineBody.extend({
  variants: z.array(CreateQuoteVariantBody).max(
    PREVIEW_LIMITS.variantsPerLine,
    atMost(PREVIEW_LIMITS.variantsPerLine, "variants per line"),
  ).optional().describe(
    "The line's variants, as `POST /v1/quote-lines/{lineId}/variants` takes each",
  ),
}).meta({ id: "PreviewQuoteLineBody", description: "A line to price, with its variants" });

export const PreviewGroupBody = CreateQuoteGroupBody.extend({
  lines: z.array(PreviewLineBody).max(
    PREVIEW_LIMITS.linesPerGroup,
    atMost(PREVIEW_LIMITS.linesPerGroup, "lines per group"),
  ).optional().describe("The group's lines, in the order they would be written"),
  decorations: z.array(CreateQuoteDecorationBody).max(
    PREVIEW_LIMITS.decorationsPerGroup,
    atMost(PREVIEW_LIMITS.decorationsPerGroup, "decorations per group"),
  ).optional().describe("The group's decorations, written after its lines"),
}).meta({ id: "PreviewQuoteGroupBody", description: "A group to price, with its rows" });

/** Lines, variants and decorations of a tree, counted. */
export function previewRowCount(groups: readonly z.infer<typeof PreviewGroupBody>[]): number {
  return groups.reduce(
    (n, g) =>
      n + (g.decorations?.length ?? 0) +
      (g.lines ?? []).reduce((m, l) => m + 1 + (l.variants?.length ?? 0), 0),
    0,
  );
}

export const PreviewQuoteBody = CreateQuoteBody.extend({
  groups: z.array(PreviewGroupBody).max(
    PREVIEW_LIMITS.groups,
    atMost(PREVIEW_LIMITS.groups, "groups"),
  ).optional().describe("The quote's groups, in the order they would be written"),
}).refine(
  (body) => previewRowCount(body.groups ?? []) <= PREVIEW_LIMITS.rows,
  {
    message: atMost(PREVIEW_LIMITS.rows, "lines, variants and decorations in all"),
    path: ["groups"],
  },
).meta({
  id: "PreviewQuoteBody",
  description: "A quote tree as the write operations take it: the quote's fields with its " +
    "groups, each group's lines (with their variants) and decorations. Rows are priced in the " +
    "order given (groups, then each group's lines with their variants, then its decorations), " +
    "which is the order the writes would take; `sortOrder` is accepted and not read, and so are " +
    "references pricing does not read (`externalId`, `clientId`, …). At most " +
    `${PREVIEW_LIMITS.rows} lines, variants and decorations in all`,
});
export type PreviewQuoteBody = z.infer<typeof PreviewQuoteBody>;
/** The 24 staff tees of QUOTE_EXAMPLE with their front print, as one tree. */
export const PREVIEW_QUOTE_BODY_EXAMPLE: PreviewQuoteBody = {
  reference: "Riverside Bakery — staff tees",
  groups: [{
    name: "Staff tees",
    lines: [{
      lineType: "Garment",
      productName: "Gildan 5000 Heavy Cotton Tee",
      variants: [
        {
          size: "M",
          colour: "Black",
          quantity: 12,
          buyPrice: 6,
          markupType: "percentage",
          markupValue: 33,
        },
        {
          size: "L",
          colour: "Black",
          quantity: 12,
          buyPrice: 6,
          markupType: "percentage",
          markupValue: 33,
        },
      ],
    }],
    decorations: [CREATE_QUOTE_DECORATION_EXAMPLE],
  }],
};
setExamples(PreviewQuoteBody, PREVIEW_QUOTE_BODY_EXAMPLE);

const PreviewVariant = z.object(described({
  quantity: z.int(),
  unitPriceExGst: z.number(),
  markupType: MarkupType.nullable(),
  markupValue: z.number().nullable(),
  markupSource: MarkupSource,
  totalExGst: z.number(),
}, {
  quantity: "As given",
  unitPriceExGst: "The sell price per unit the variant would be stored with (4 decimals)",
  markupType: "The markup it would be stored with: a `group` row's is its band's",
  markupValue: "The markup value it would be stored with",
  markupSource: "`group` or `manual`, as it would be stored (a sell price given makes it manual)",
  totalExGst: "quantity × unitPriceExGst, unrounded",
})).meta({ id: "QuotePreviewVariant", description: "A variant as it would be priced" });

const PreviewLine = z.object(described({
  lineType: z.string(),
  quantity: z.int(),
  unitPriceExGst: z.number(),
  grossTotalExGst: z.number(),
  discountAmount: z.number(),
  totalExGst: z.number(),
  variants: z.array(PreviewVariant),
}, {
  lineType: "As given",
  quantity: "The line's quantity as it would read: Σ non-custom variant quantities when it " +
    "has variants",
  unitPriceExGst: "The line's unit price as it would read (4 decimals)",
  grossTotalExGst: "Before the line's own discount; a Discount or Surcharge line's signed amount",
  discountAmount: "The line's own discount taken off grossTotalExGst",
  totalExGst: "What the line adds to its group, unrounded (negative for a Discount line)",
  variants: "Its variants, in the order given",
})).meta({ id: "QuotePreviewLine", description: "A line as it would be priced" });

const PreviewDecoration = z.object(described({
  quantity: z.int(),
  baseUnitCost: z.number(),
  baseSetupCost: z.number(),
  markupType: MarkupType.nullable(),
  markupValue: z.number().nullable(),
  markupSource: MarkupSource,
  setupMarkupType: MarkupType.nullable(),
  setupMarkupValue: z.number().nullable(),
  setupMarkupSource: MarkupSource,
  setupCharge: z.number(),
  totalExGst: z.number(),
}, {
  quantity: "As given",
  baseUnitCost: "The charge per unit it would be stored with (4 decimals)",
  baseSetupCost: "The setup charge it would be stored with (4 decimals)",
  markupType: "The unit lane's markup as it would be stored",
  markupValue: "The unit lane's markup value as it would be stored",
  markupSource: "The unit lane's source as it would be stored",
  setupMarkupType: "The setup lane's markup as it would be stored",
  setupMarkupValue: "The setup lane's markup value as it would be stored",
  setupMarkupSource: "The setup lane's source as it would be stored",
  setupCharge: "baseSetupCost when includeSetupCost, else 0",
  totalExGst: "quantity × baseUnitCost + setupCharge, unrounded",
})).meta({ id: "QuotePreviewDecoration", description: "A decoration as it would be priced" });

const PreviewGroup = z.object(described({
  name: z.string(),
  totalQuantity: z.int(),
  goodsTotalExGst: z.number(),
  adjustmentsTotalExGst: z.number(),
  totalExGst: z.number(),
  lines: z.array(PreviewLine),
  decorations: z.array(PreviewDecoration),
}, {
  name: "As given",
  totalQuantity: "Σ quantity of its Garment lines, as the group would read",
  goodsTotalExGst: "Σ totals of its rows that are not Discount or Surcharge lines, unrounded",
  adjustmentsTotalExGst: "Σ signed Discount and Surcharge amounts, unrounded",
  totalExGst: "goodsTotalExGst + adjustmentsTotalExGst, unrounded",
  lines: "Its lines, in the order given",
  decorations: "Its decorations, in the order given",
})).meta({ id: "QuotePreviewGroup", description: "A group as it would be priced" });

export const QuotePreview = z.object(described({
  subtotalExGst: z.number(),
  gstAmount: z.number(),
  totalIncGst: z.number(),
  taxRateId: Uuid.nullable(),
  taxName: z.string(),
  taxRatePct: z.number(),
  groups: z.array(PreviewGroup),
}, {
  subtotalExGst: "Σ group totals rounded to 2 decimals, as the quote would read",
  gstAmount: "subtotalExGst × taxRatePct / 100 rounded to 2 decimals",
  totalIncGst: "subtotalExGst + gstAmount",
  taxRateId: "The tax rate used: the one named, else the organisation's default; null when it " +
    "has none yet (its first quote would create GST 10 %, which the preview prices with)",
  taxName: "Name of that tax rate",
  taxRatePct: "Its rate in percent",
  groups: "The groups, in the order given",
})).meta({
  id: "QuotePreview",
  description: "A quote tree priced as it would be stored; nothing was written",
});
export type QuotePreview = z.infer<typeof QuotePreview>;

/** PreviewQuoteBody's example priced: the 24 staff tees of QUOTE_EXAMPLE, to the same cent. */
export const QUOTE_PREVIEW_EXAMPLE: QuotePreview = {
  subtotalExGst: 337.52,
  gstAmount: 33.75,
  totalIncGst: 371.27,
  taxRateId: "0192f4a0-3e4d-7f50-a162-7c8d9e0f1a23",
  taxName: "GST",
  taxRatePct: 10,
  groups: [{
    name: "Staff tees",
    totalQuantity: 24,
    goodsTotalExGst: 337.52,
    adjustmentsTotalExGst: 0,
    totalExGst: 337.52,
    lines: [{
      lineType: "Garment",
      quantity: 24,
      unitPriceExGst: 7.98,
      grossTotalExGst: 191.52,
      discountAmount: 0,
      totalExGst: 191.52,
      variants: [12, 12].map((quantity) => ({
        quantity,
        unitPriceExGst: 7.98,
        markupType: "percentage" as const,
        markupValue: 33,
        markupSource: "manual" as const,
        totalExGst: 95.76,
      })),
    }],
    decorations: [{
      quantity: 24,
      baseUnitCost: 4,
      baseSetupCost: 50,
      markupType: "percentage",
      markupValue: 60,
      markupSource: "manual",
      setupMarkupType: "fixed",
      setupMarkupValue: 10,
      setupMarkupSource: "manual",
      setupCharge: 50,
      totalExGst: 146,
    }],
  }],
};
setExamples(QuotePreview, QUOTE_PREVIEW_EXAMPLE);

export const previewOperations = operations("Quotes", {
  previewQuote: {
    method: "POST",
    path: "/v1/quotes/preview",
    scope: "quotes.read",
    alsoRequires: ["costs.read"],
    summary: "Price a quote tree without storing it",
    body: PreviewQuoteBody,
    responses: { 200: QuotePreview },
  },
});

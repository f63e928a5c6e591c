/** Lines of a quote group: garments, services, costs, and Discount/Surcharge adjustments. */
import { z } from "zod";
import {
  absentOrNull,
  DateTime,
  Deleted,
  described,
  documentRules,
  givenTogether,
  setExamples,
  Text,
  Uuid,
  whenThen,
  writeBodies,
} from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import {
  ADJUSTMENT_LINE_TYPES,
  Amount,
  LineType,
  OptionalText,
  Quantity,
  SortOrder,
  Url,
  ValueType,
} from "./values.ts";
import { QUOTE_VARIANT_EXAMPLE, QuoteVariant } from "./variants.ts";

/** One description per field, for the line and its write bodies. */
const LINE_DESCRIPTIONS = {
  id: "The line's id",
  quoteGroupId: "The group this line belongs to",
  lineType: "What the line is; Discount and Surcharge lines adjust the group and have no " +
    "variants",
  garmentCatalogueItemId: "The catalogue garment this line quotes, if any; its thumbnail " +
    "shows when customImageUrl is null",
  productName: "Product name as printed on the quote",
  productSku: "Supplier's style code or SKU",
  title: "Short heading shown above the product name",
  description: "Longer text printed with the line",
  quantity: "Units; with variants, the sum of their non-custom quantities (read-only then)",
  unitPriceExGst: "Sell price per unit ex tax, up to 4 decimals; with variants, derived from " +
    "them (read-only then); a Flat Discount or Surcharge's amount per unit",
  valueType: "Discount and Surcharge only: `Flat` (quantity × unitPriceExGst) or `Percentage` " +
    "(of the group's goods); null on other lines",
  percentage: "Discount and Surcharge with valueType Percentage: the rate in percent; else null",
  discountValueType: "Per-line discount: `Percentage` or `Flat`; null for none, and given " +
    "together with discountPercentage",
  discountPercentage: "Per-line discount: the rate in percent, or with Flat the amount taken " +
    "off the line total",
  customImageUrl: "Image shown for this line instead of the catalogue thumbnail",
  sortOrder: "Position in the group's one sequence shared by lines and decorations, from 1; " +
    "omit on create to append",
  createdAt: "When the line was created",
  updatedAt: "When the line last changed",
  variants: "Sizes, colours and custom costs of the line, by sortOrder",
};

export const QuoteLine = z.object(described({
  id: Uuid,
  quoteGroupId: Uuid,
  lineType: LineType,
  garmentCatalogueItemId: Uuid.nullable(),
  productName: z.string(),
  productSku: z.string().nullable(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  quantity: z.int(),
  unitPriceExGst: z.number(),
  valueType: ValueType.nullable(),
  percentage: z.number().nullable(),
  discountValueType: ValueType.nullable(),
  discountPercentage: z.number().nullable(),
  customImageUrl: z.string().nullable(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
  variants: z.array(QuoteVariant),
}, LINE_DESCRIPTIONS)).meta({ id: "QuoteLine", description: "A line of a quote group" });
export type QuoteLine = z.infer<typeof QuoteLine>;

/** Riverside Bakery's 24 staff tees: 12 M and 12 L, each at 6.00 with a 33 % markup. */
export const QUOTE_LINE_EXAMPLE: QuoteLine = {
  id: "0193a1b2-4c5f-7081-8b12-3d4e5f607182",
  quoteGroupId: "0193a1b2-4c5e-7f70-9a01-2c3d4e5f6071",
  lineType: "Garment",
  garmentCatalogueItemId: "0192f4c0-5a6b-7c8d-9e0f-1a2b3c4d5e6f",
  productName: "Gildan 5000 Heavy Cotton Tee",
  productSku: "G5000",
  title: "Staff tee",
  description: "Black, unisex fit",
  quantity: 24,
  unitPriceExGst: 7.98,
  valueType: null,
  percentage: null,
  discountValueType: null,
  discountPercentage: null,
  customImageUrl: null,
  sortOrder: 1,
  createdAt: "2026-03-02T09:15:40.903Z",
  updatedAt: "2026-03-02T09:16:31.760Z",
  variants: [QUOTE_VARIANT_EXAMPLE, {
    ...QUOTE_VARIANT_EXAMPLE,
    id: "0193a1b2-4c61-72a3-8d34-5f60718293a4",
    size: "L",
    sortOrder: 2,
    createdAt: "2026-03-02T09:16:31.760Z",
    updatedAt: "2026-03-02T09:16:31.760Z",
  }],
};
setExamples(QuoteLine, QUOTE_LINE_EXAMPLE);

const lineFields = {
  lineType: LineType,
  garmentCatalogueItemId: Uuid.nullable(),
  productName: Text(200),
  productSku: OptionalText(100),
  title: OptionalText(200),
  description: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  quantity: Quantity,
  unitPriceExGst: Amount(4),
  valueType: ValueType.nullable(),
  percentage: Amount(4).nullable(),
  discountValueType: ValueType.nullable(),
  discountPercentage: Amount(4).nullable(),
  customImageUrl: Url.nullable(),
  sortOrder: SortOrder,
};

export const { create: CreateQuoteLineBody, update: UpdateQuoteLineBody } = writeBodies(
  "QuoteLine",
  described(lineFields, LINE_DESCRIPTIONS),
  ["lineType", "productName"],
);
setExamples(CreateQuoteLineBody, {
  lineType: "Garment",
  garmentCatalogueItemId: "0192f4c0-5a6b-7c8d-9e0f-1a2b3c4d5e6f",
  productName: "Gildan 5000 Heavy Cotton Tee",
  productSku: "G5000",
  title: "Staff tee",
  description: "Black, unisex fit",
});
setExamples(UpdateQuoteLineBody, { title: "Staff tee", description: "Black, unisex fit" });
// What lineShapeProblem (services/quotes/domain/rows.ts) refuses, for the document too: only a
// Discount or Surcharge line has a valueType (and a percentage when it is Percentage) and no
// per-line discount; a per-line discount is its type and amount together.
const isAdjustmentLine = {
  required: ["lineType"],
  properties: { lineType: { enum: [...ADJUSTMENT_LINE_TYPES] } },
};
documentRules(CreateQuoteLineBody, [
  whenThen(
    {
      required: ["lineType", "valueType"],
      properties: {
        lineType: { enum: [...ADJUSTMENT_LINE_TYPES] },
        valueType: { const: "Percentage" },
      },
    },
    { required: ["percentage"], properties: { percentage: { type: "number" } } },
  ),
  whenThen(isAdjustmentLine, absentOrNull("discountValueType", "discountPercentage")),
  whenThen({ not: isAdjustmentLine }, absentOrNull("valueType", "percentage")),
  ...givenTogether("discountValueType", "discountPercentage"),
]);
export type CreateQuoteLineBody = z.infer<typeof CreateQuoteLineBody>;
export type UpdateQuoteLineBody = z.infer<typeof UpdateQuoteLineBody>;

const LineDeleted = z.object(described({ id: Uuid, quoteGroupId: Uuid }, {
  id: "The deleted line's id",
  quoteGroupId: "The group it belonged to",
})).meta({
  id: "QuoteLineDeletedData",
  description: "The line that was deleted, with its variants",
});

export const lineEvents = defineEvents("quotes", "quotes.read", {
  "quote_line.created": { summary: "A line was added to a group", data: QuoteLine },
  "quote_line.updated": { summary: "A line changed", data: QuoteLine },
  "quote_line.deleted": { summary: "A line was removed", data: LineDeleted },
});

export const lineOperations = operations("Quote lines", {
  createQuoteLine: {
    method: "POST",
    path: "/v1/quote-groups/{groupId}/lines",
    scope: "quotes.write",
    summary: "Add a line to a group",
    body: CreateQuoteLineBody,
    responses: { 201: QuoteLine },
    events: ["quote_line.created"],
    examples: {
      // A new line has no variants yet, so no quantity or price.
      responses: {
        201: {
          ...QUOTE_LINE_EXAMPLE,
          quantity: 0,
          unitPriceExGst: 0,
          variants: [],
          updatedAt: QUOTE_LINE_EXAMPLE.createdAt,
        },
      },
    },
  },
  updateQuoteLine: {
    method: "PATCH",
    path: "/v1/quote-lines/{lineId}",
    scope: "quotes.write",
    summary: "Change a line",
    body: UpdateQuoteLineBody,
    responses: { 200: QuoteLine },
    events: ["quote_line.updated"],
  },
  deleteQuoteLine: {
    method: "DELETE",
    path: "/v1/quote-lines/{lineId}",
    scope: "quotes.write",
    summary: "Delete a line with its variants",
    responses: { 200: Deleted },
    events: ["quote_line.deleted"],
  },
});

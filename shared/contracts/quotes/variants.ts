/** Size/colour variants of a quote line, and custom cost rows (freight). */
import { z } from "zod";
import {
  absentOrNull,
  DateTime,
  Deleted,
  described,
  documentRules,
  given,
  givenTogether,
  setExamples,
  Uuid,
  whenThen,
  writeBodies,
} from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import {
  Amount,
  Flag,
  MarkupSource,
  MarkupType,
  MarkupValue,
  OptionalText,
  Quantity,
  SortOrder,
} from "./values.ts";

/** One description per field, for the variant and its write bodies. */
const VARIANT_DESCRIPTIONS = {
  id: "The variant's id",
  quoteLineId: "The line this variant belongs to",
  size: "Garment size as the shop writes it (`M`, `2XL`); null on a custom line",
  colour: "Garment colour; null on a custom line",
  quantity: "Units of this size and colour; a custom line's quantity does not count toward " +
    "the line's",
  unitPriceExGst: "Sell price per unit ex tax, up to 4 decimals: cost with the markup applied; " +
    "writing it makes the row `manual` and derives the markup back",
  buyPrice: "What the shop pays per unit ex tax, up to 4 decimals",
  extraCost: "Further cost per unit ex tax (freight in, handling), up to 4 decimals; cost is " +
    "buyPrice + extraCost",
  markupType: "`percentage`: sell = cost + cost × value / 100; `fixed`: sell = cost + value; " +
    "null on rows older than markups",
  markupValue: "The markup, a percentage (may be negative or over 100) or an amount per unit",
  markupSource: "`manual`: the row keeps its markup and sell price; `group`: it takes the band " +
    "of its markup group matching the line's quantity, again whenever quantity or cost changes",
  markupGroupId: "The garment markup group a `group` row bands through; null means the " +
    "organisation's default garment group, which must then exist",
  isCustomLine: "A cost of the line that is not per garment (freight): no size or colour",
  showOnDocuments: "Whether the row is drawn on customer documents; it folds into the line's " +
    "price otherwise (the default)",
  sortOrder: "Position among the line's variants, from 1; omit on create to append",
  createdAt: "When the variant was created",
  updatedAt: "When the variant last changed",
};

// Cost and margin fields are optional: they are absent without scope costs.read.
export const QuoteVariant = z.object(described({
  id: Uuid,
  quoteLineId: Uuid,
  size: z.string().nullable(),
  colour: z.string().nullable(),
  quantity: z.int(),
  unitPriceExGst: z.number(),
  buyPrice: z.number().optional(),
  extraCost: z.number().optional(),
  markupType: MarkupType.nullable().optional(),
  markupValue: z.number().nullable().optional(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  isCustomLine: z.boolean(),
  showOnDocuments: z.boolean(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, VARIANT_DESCRIPTIONS)).meta({
  id: "QuoteVariant",
  description: "A size/colour of a line's garment, or a custom cost such as freight",
});
export type QuoteVariant = z.infer<typeof QuoteVariant>;

/** Riverside Bakery's staff tees in M, as a caller holding costs.read sees them. */
export const QUOTE_VARIANT_EXAMPLE: QuoteVariant = {
  id: "0193a1b2-4c60-7192-9c23-4e5f60718293",
  quoteLineId: "0193a1b2-4c5f-7081-8b12-3d4e5f607182",
  size: "M",
  colour: "Black",
  quantity: 12,
  unitPriceExGst: 7.98,
  buyPrice: 6,
  extraCost: 0,
  markupType: "percentage",
  markupValue: 33,
  markupSource: "manual",
  markupGroupId: null,
  isCustomLine: false,
  showOnDocuments: false,
  sortOrder: 1,
  createdAt: "2026-03-02T09:16:02.118Z",
  updatedAt: "2026-03-02T09:16:02.118Z",
};
setExamples(QuoteVariant, QUOTE_VARIANT_EXAMPLE);

const variantFields = {
  size: OptionalText(50),
  colour: OptionalText(100),
  quantity: Quantity,
  unitPriceExGst: Amount(4),
  buyPrice: Amount(4),
  extraCost: Amount(4),
  markupType: MarkupType.nullable(),
  markupValue: MarkupValue.nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  isCustomLine: Flag,
  showOnDocuments: Flag,
  sortOrder: SortOrder,
};

export const { create: CreateQuoteVariantBody, update: UpdateQuoteVariantBody } = writeBodies(
  "QuoteVariant",
  described(variantFields, VARIANT_DESCRIPTIONS),
  ["quantity"],
);
setExamples(CreateQuoteVariantBody, {
  size: "M",
  colour: "Black",
  quantity: 12,
  buyPrice: 6,
  extraCost: 0,
  markupType: "percentage",
  markupValue: 33,
});
setExamples(UpdateQuoteVariantBody, { quantity: 12 });
// What variantPricingProblem and variantShapeProblem (services/quotes/domain/rows.ts) refuse, for
// the document too: a sell price or a markup, never both; a markup is type and value; a custom
// line has no size or colour.
documentRules(CreateQuoteVariantBody, [
  whenThen(
    given("unitPriceExGst"),
    { not: { anyOf: [given("markupType"), given("markupValue")] } },
  ),
  ...givenTogether("markupType", "markupValue"),
  whenThen(
    { required: ["isCustomLine"], properties: { isCustomLine: { const: true } } },
    absentOrNull("size", "colour"),
  ),
]);
export type CreateQuoteVariantBody = z.infer<typeof CreateQuoteVariantBody>;
export type UpdateQuoteVariantBody = z.infer<typeof UpdateQuoteVariantBody>;

const VariantDeleted = z.object(described({ id: Uuid, quoteLineId: Uuid }, {
  id: "The deleted variant's id",
  quoteLineId: "The line it belonged to",
})).meta({
  id: "QuoteVariantDeletedData",
  description: "The variant that was deleted",
});

export const variantEvents = defineEvents("quotes", "quotes.read", {
  "quote_variant.created": {
    summary: "A size/colour variant was added to a line",
    data: QuoteVariant,
  },
  "quote_variant.updated": {
    summary: "A variant changed: written itself, or re-priced because a change of its line's " +
      "quantity moved it to another band of its markup group",
    data: QuoteVariant,
  },
  "quote_variant.deleted": { summary: "A variant was removed", data: VariantDeleted },
});

export const variantOperations = operations("Quote lines", {
  createQuoteVariant: {
    method: "POST",
    path: "/v1/quote-lines/{lineId}/variants",
    scope: "quotes.write",
    summary: "Add a size/colour variant or a custom cost (freight) to a line",
    body: CreateQuoteVariantBody,
    responses: { 201: QuoteVariant },
    // The line's other `group` variants a new quantity re-bands are announced as updated.
    events: ["quote_variant.created", "quote_variant.updated"],
  },
  updateQuoteVariant: {
    method: "PATCH",
    path: "/v1/quote-variants/{variantId}",
    scope: "quotes.write",
    summary: "Change a variant's quantity, costs or markup",
    body: UpdateQuoteVariantBody,
    responses: { 200: QuoteVariant },
    events: ["quote_variant.updated"],
  },
  deleteQuoteVariant: {
    method: "DELETE",
    path: "/v1/quote-variants/{variantId}",
    scope: "quotes.write",
    summary: "Delete a variant",
    responses: { 200: Deleted },
    // The line's other `group` variants a new quantity re-bands are announced as updated.
    events: ["quote_variant.deleted", "quote_variant.updated"],
  },
});

/** Size/colour variants of a quote line, and custom cost rows (freight). */
import { z } from "zod";
import { DateTime, Deleted, Uuid, writeBodies } from "../common.ts";
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

// Cost and margin fields are optional: they are absent without scope costs.read.
export const QuoteVariant = z.object({
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
}).meta({ id: "QuoteVariant" });
export type QuoteVariant = z.infer<typeof QuoteVariant>;

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
  variantFields,
  ["quantity"],
);
export type CreateQuoteVariantBody = z.infer<typeof CreateQuoteVariantBody>;
export type UpdateQuoteVariantBody = z.infer<typeof UpdateQuoteVariantBody>;

const VariantDeleted = z.object({ id: Uuid, quoteLineId: Uuid }).meta({
  id: "QuoteVariantDeletedData",
});

export const variantEvents = defineEvents("quotes", "quotes.read", {
  "quote_variant.created": {
    summary: "A size/colour variant was added to a line",
    data: QuoteVariant,
  },
  "quote_variant.updated": { summary: "A variant changed", data: QuoteVariant },
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
    events: ["quote_variant.created"],
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
    events: ["quote_variant.deleted"],
  },
});

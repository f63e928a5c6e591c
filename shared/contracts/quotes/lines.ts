/** Lines of a quote group: garments, services, costs, and Discount/Surcharge adjustments. */
import { z } from "zod";
import { DateTime, Deleted, Text, Uuid, writeBodies } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, LineType, OptionalText, Quantity, SortOrder, Url, ValueType } from "./values.ts";
import { QuoteVariant } from "./variants.ts";

export const QuoteLine = z.object({
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
}).meta({ id: "QuoteLine" });
export type QuoteLine = z.infer<typeof QuoteLine>;

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
  lineFields,
  ["lineType", "productName"],
);
export type CreateQuoteLineBody = z.infer<typeof CreateQuoteLineBody>;
export type UpdateQuoteLineBody = z.infer<typeof UpdateQuoteLineBody>;

const LineDeleted = z.object({ id: Uuid, quoteGroupId: Uuid }).meta({
  id: "QuoteLineDeletedData",
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

/** Groups of a quote: the lines and decorations printed together, in one shared order. */
import { z } from "zod";
import { DateTime, Deleted, Text, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Flag, SortOrder } from "./values.ts";
import { QuoteLine } from "./lines.ts";
import { QuoteGroupDecoration } from "./decorations.ts";

export const QuoteGroup = z.object({
  id: Uuid,
  quoteId: Uuid,
  name: z.string(),
  totalQuantity: z.int(),
  sortOrder: z.int(),
  rollUpDecoration: z.boolean(),
  rollUpSetup: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
  lines: z.array(QuoteLine),
  decorations: z.array(QuoteGroupDecoration),
}).meta({ id: "QuoteGroup" });
export type QuoteGroup = z.infer<typeof QuoteGroup>;

export const CreateQuoteGroupBody = z.strictObject({
  name: Text(200),
  sortOrder: SortOrder.optional(),
}).meta({ id: "CreateQuoteGroupBody" });
export type CreateQuoteGroupBody = z.infer<typeof CreateQuoteGroupBody>;

export const UpdateQuoteGroupBody = z.strictObject({
  name: Text(200).optional(),
  sortOrder: SortOrder.optional(),
  rollUpDecoration: Flag.optional(),
  rollUpSetup: Flag.optional(),
}).meta({ id: "UpdateQuoteGroupBody" });
export type UpdateQuoteGroupBody = z.infer<typeof UpdateQuoteGroupBody>;

export const ROW_KINDS = ["line", "decoration"] as const;

export const ReorderBody = z.strictObject({
  items: z.array(z.strictObject({
    id: Uuid,
    kind: z.enum(ROW_KINDS, { error: "Must be line or decoration" }),
  })).max(10_000),
}).meta({ id: "ReorderBody" });
export type ReorderBody = z.infer<typeof ReorderBody>;

const GroupDeleted = z.object({ id: Uuid, quoteId: Uuid }).meta({ id: "QuoteGroupDeletedData" });

export const groupEvents = defineEvents("quotes", "quotes.read", {
  "quote_group.created": { summary: "A group was added to a quote", data: QuoteGroup },
  "quote_group.updated": { summary: "A group changed", data: QuoteGroup },
  "quote_group.reordered": {
    summary: "A group's lines and decorations were reordered",
    data: QuoteGroup,
  },
  "quote_group.deleted": { summary: "A group was removed from its quote", data: GroupDeleted },
});

export const groupOperations = operations("Quotes", {
  createQuoteGroup: {
    method: "POST",
    path: "/v1/quotes/{quoteId}/groups",
    scope: "quotes.write",
    summary: "Add a group to a quote",
    body: CreateQuoteGroupBody,
    responses: { 201: QuoteGroup },
    events: ["quote_group.created"],
  },
  updateQuoteGroup: {
    method: "PATCH",
    path: "/v1/quote-groups/{groupId}",
    scope: "quotes.write",
    summary: "Rename, move or flag a quote group",
    body: UpdateQuoteGroupBody,
    responses: { 200: QuoteGroup },
    events: ["quote_group.updated"],
  },
  deleteQuoteGroup: {
    method: "DELETE",
    path: "/v1/quote-groups/{groupId}",
    scope: "quotes.write",
    summary: "Delete a quote group with its lines and decorations",
    responses: { 200: Deleted },
    events: ["quote_group.deleted"],
  },
  reorderQuoteGroup: {
    method: "POST",
    path: "/v1/quote-groups/{groupId}/reorder",
    scope: "quotes.write",
    summary: "Renumber a group's lines and decorations in one shared order",
    body: ReorderBody,
    responses: { 200: QuoteGroup },
    events: ["quote_group.reordered"],
  },
});

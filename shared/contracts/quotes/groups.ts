/** Groups of a quote: the lines and decorations printed together, in one shared order. */
import { z } from "zod";
import { DateTime, Deleted, described, setExamples, Text, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Flag, SortOrder } from "./values.ts";
import { QUOTE_LINE_EXAMPLE, QuoteLine } from "./lines.ts";
import { QUOTE_DECORATION_EXAMPLE, QuoteGroupDecoration } from "./decorations.ts";

/** One description per field, for the group and its write bodies. */
const GROUP_DESCRIPTIONS = {
  id: "The group's id",
  quoteId: "The quote this group belongs to",
  name: "Heading of the group on the quote",
  totalQuantity: "Sum of the quantities of the group's Garment lines; derived, read-only",
  sortOrder: "Position among the quote's groups, from 1; omit on create to append",
  rollUpDecoration: "Kept for older clients; feeds no calculation (each decoration's `rollUp` " +
    "does)",
  rollUpSetup: "Kept for older clients; feeds no calculation (each decoration's `rollUpSetup` " +
    "does)",
  createdAt: "When the group was created",
  updatedAt: "When the group last changed",
  lines: "The group's lines by sortOrder; merge with decorations by sortOrder for the " +
    "operator's order",
  decorations: "The group's decorations by sortOrder, in the same sequence as the lines",
};

export const QuoteGroup = z.object(described({
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
}, GROUP_DESCRIPTIONS)).meta({
  id: "QuoteGroup",
  description: "A group of a quote: lines and decorations printed together",
});
export type QuoteGroup = z.infer<typeof QuoteGroup>;

/** Riverside Bakery's staff tees with their front print: 337.52 ex tax. */
export const QUOTE_GROUP_EXAMPLE: QuoteGroup = {
  id: "0193a1b2-4c5e-7f70-9a01-2c3d4e5f6071",
  quoteId: "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60",
  name: "Staff tees",
  totalQuantity: 24,
  sortOrder: 1,
  rollUpDecoration: false,
  rollUpSetup: false,
  createdAt: "2026-03-02T09:15:02.377Z",
  updatedAt: "2026-03-02T09:18:12.054Z",
  lines: [QUOTE_LINE_EXAMPLE],
  decorations: [QUOTE_DECORATION_EXAMPLE],
};
setExamples(QuoteGroup, QUOTE_GROUP_EXAMPLE);

export const CreateQuoteGroupBody = z.strictObject(described({
  name: Text(200),
  sortOrder: SortOrder.optional(),
}, GROUP_DESCRIPTIONS)).meta({
  id: "CreateQuoteGroupBody",
  description: "A new group's name, and its position if not last",
});
export type CreateQuoteGroupBody = z.infer<typeof CreateQuoteGroupBody>;
setExamples(CreateQuoteGroupBody, { name: "Staff tees" });

export const UpdateQuoteGroupBody = z.strictObject(described({
  name: Text(200).optional(),
  sortOrder: SortOrder.optional(),
  rollUpDecoration: Flag.optional(),
  rollUpSetup: Flag.optional(),
}, GROUP_DESCRIPTIONS)).meta({
  id: "UpdateQuoteGroupBody",
  description: "The group fields to change; those not given stay as they are",
});
export type UpdateQuoteGroupBody = z.infer<typeof UpdateQuoteGroupBody>;
setExamples(UpdateQuoteGroupBody, { name: "Staff tees", sortOrder: 1 });

export const ROW_KINDS = ["line", "decoration"] as const;

export const ReorderBody = z.strictObject(described({
  items: z.array(z.strictObject(described({
    id: Uuid,
    kind: z.enum(ROW_KINDS, { error: "Must be line or decoration" }),
  }, {
    id: "The line's or decoration's id",
    kind: "Whether the id is a line's or a decoration's",
  }))).max(10_000),
}, {
  items: "Every line and decoration of the group exactly once, in the new order",
})).meta({ id: "ReorderBody", description: "A group's rows in their new order" });
export type ReorderBody = z.infer<typeof ReorderBody>;
setExamples(ReorderBody, {
  items: [
    { id: QUOTE_LINE_EXAMPLE.id, kind: "line" },
    { id: QUOTE_DECORATION_EXAMPLE.id, kind: "decoration" },
  ],
});

const GroupDeleted = z.object(described({ id: Uuid, quoteId: Uuid }, {
  id: "The deleted group's id",
  quoteId: "The quote it belonged to",
})).meta({ id: "QuoteGroupDeletedData", description: "The group that was deleted" });

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
    examples: {
      // A new group is empty.
      responses: {
        201: {
          ...QUOTE_GROUP_EXAMPLE,
          totalQuantity: 0,
          lines: [],
          decorations: [],
          updatedAt: QUOTE_GROUP_EXAMPLE.createdAt,
        },
      },
    },
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

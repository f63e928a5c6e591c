/** Markup groups: bands of markups by quantity (garment, decoration) or by setup cost (setup). */
import { z } from "zod";
import { DateTime, Deleted, page, Text, Uuid, writeBodies } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, DecorationMethod, Flag, MarkupLane, MarkupType, MarkupValue } from "./values.ts";

export const MarkupBand = z.object({
  from: z.number(),
  markupType: MarkupType,
  markupValue: z.number(),
});

export const MarkupGroup = z.object({
  id: Uuid,
  name: z.string(),
  lane: MarkupLane,
  decorationMethod: DecorationMethod.nullable(),
  isDefault: z.boolean(),
  appliesToSetupCost: z.boolean(),
  // Absent without scope costs.read: a band and a sell price give the cost back.
  bands: z.array(MarkupBand).optional(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "MarkupGroup" });
export type MarkupGroup = z.infer<typeof MarkupGroup>;

const Bands = z.array(z.strictObject({
  from: Amount(4),
  markupType: MarkupType,
  markupValue: MarkupValue,
})).min(1, "Give at least one band").max(100, "At most 100 bands");

const markupGroupFields = {
  name: Text(200),
  lane: MarkupLane,
  decorationMethod: DecorationMethod.nullable(),
  isDefault: Flag,
  appliesToSetupCost: Flag,
  bands: Bands,
};

export const { create: CreateMarkupGroupBody, update: UpdateMarkupGroupBody } = writeBodies(
  "MarkupGroup",
  markupGroupFields,
  ["name", "lane", "bands"],
);
export type CreateMarkupGroupBody = z.infer<typeof CreateMarkupGroupBody>;
export type UpdateMarkupGroupBody = z.infer<typeof UpdateMarkupGroupBody>;

export const MARKUP_GROUP_SORT_FIELDS = ["createdAt", "name", "lane"] as const;

export const ListMarkupGroupsQuery = offsetListQuery({
  sortFields: MARKUP_GROUP_SORT_FIELDS,
  named: { lane: MarkupLane.optional() },
});
export type ListMarkupGroupsQuery = z.infer<typeof ListMarkupGroupsQuery>;

export const markupGroupEvents = defineEvents("quotes", "quotes.read", {
  "markup_group.created": { summary: "A markup group was created", data: MarkupGroup },
  "markup_group.updated": { summary: "A markup group or its bands changed", data: MarkupGroup },
  "markup_group.deleted": { summary: "A markup group was deleted", data: MarkupGroup },
});

export const markupGroupOperations = operations("Markup groups", {
  createMarkupGroup: {
    method: "POST",
    path: "/v1/markup-groups",
    scope: "quotes.write",
    summary: "Create a markup group (bands of markups by quantity or setup cost)",
    body: CreateMarkupGroupBody,
    responses: { 201: MarkupGroup },
    // A new default unsets the previous one.
    events: ["markup_group.created", "markup_group.updated"],
  },
  listMarkupGroups: {
    method: "GET",
    path: "/v1/markup-groups",
    scope: "quotes.read",
    summary: "List the organisation's markup groups, oldest first unless sorted otherwise",
    query: ListMarkupGroupsQuery,
    responses: { 200: page(MarkupGroup) },
  },
  getMarkupGroup: {
    method: "GET",
    path: "/v1/markup-groups/{markupGroupId}",
    scope: "quotes.read",
    summary: "Read one markup group",
    responses: { 200: MarkupGroup },
  },
  updateMarkupGroup: {
    method: "PATCH",
    path: "/v1/markup-groups/{markupGroupId}",
    scope: "quotes.write",
    summary: "Change a markup group; quotes re-band on their next quantity or cost change",
    body: UpdateMarkupGroupBody,
    responses: { 200: MarkupGroup },
    events: ["markup_group.updated"],
  },
  deleteMarkupGroup: {
    method: "DELETE",
    path: "/v1/markup-groups/{markupGroupId}",
    scope: "quotes.write",
    summary: "Delete a markup group that no row uses (409 otherwise)",
    responses: { 200: Deleted },
    events: ["markup_group.deleted"],
  },
});

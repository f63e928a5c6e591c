/** Markup groups: bands of markups by quantity (garment, decoration) or by setup cost (setup). */
import { z } from "zod";
import {
  DateTime,
  Deleted,
  described,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, DecorationMethod, Flag, MarkupLane, MarkupType, MarkupValue } from "./values.ts";

/** One description per field of a band, as answered and as written. */
const BAND_DESCRIPTIONS = {
  from: "Where the band starts: a quantity (garment, decoration lanes) or a setup cost " +
    "(setup lane); the band with the greatest `from` not above the value applies",
  markupType: "`percentage` of cost, or `fixed` amount added to cost",
  markupValue: "The markup: a percentage (may be negative or over 100) or an amount",
};

export const MarkupBand = z.object(described({
  from: z.number(),
  markupType: MarkupType,
  markupValue: z.number(),
}, BAND_DESCRIPTIONS));

/** One description per field, for the markup group and its write bodies. */
const MARKUP_GROUP_DESCRIPTIONS = {
  id: "The markup group's id",
  name: "Name the shop knows the group by",
  lane: "What it prices: `garment` variants and `decoration` unit lanes band on quantity, " +
    "`setup` lanes on the setup cost",
  decorationMethod: "Decoration lane only: the method this group is the default for; null for " +
    "any method (and on other lanes)",
  isDefault: "Whether `group` rows that name no group use this one (per lane, and per method " +
    "on the decoration lane); making one the default unsets the previous",
  appliesToSetupCost: "True exactly on the setup lane; derived from the lane when not sent",
  bands: "Markups by threshold, ascending by `from`; the lowest starts at 0 (or 1 for a " +
    "quantity), and `from` values are unique",
  createdAt: "When the markup group was created",
  updatedAt: "When the markup group last changed",
};

export const MarkupGroup = z.object(described({
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
}, MARKUP_GROUP_DESCRIPTIONS)).meta({
  id: "MarkupGroup",
  description: "Markups by quantity or setup cost, for rows whose markup source is `group`",
});
export type MarkupGroup = z.infer<typeof MarkupGroup>;

/** The shop's garment markups: dearer per tee for small runs. */
const GARMENT_BANDS_EXAMPLE: z.infer<typeof MarkupBand>[] = [
  { from: 1, markupType: "percentage", markupValue: 60 },
  { from: 24, markupType: "percentage", markupValue: 45 },
  { from: 72, markupType: "percentage", markupValue: 35 },
];

export const MARKUP_GROUP_EXAMPLE: MarkupGroup = {
  id: "0192f4a0-4f5e-7061-b273-8d9e0f1a2b34",
  name: "Garments, standard",
  lane: "garment",
  decorationMethod: null,
  isDefault: true,
  appliesToSetupCost: false,
  bands: GARMENT_BANDS_EXAMPLE,
  createdAt: "2026-01-12T23:40:18.006Z",
  updatedAt: "2026-02-20T04:05:51.932Z",
};
setExamples(MarkupGroup, MARKUP_GROUP_EXAMPLE);

const Bands = z.array(z.strictObject(described({
  from: Amount(4),
  markupType: MarkupType,
  markupValue: MarkupValue,
}, BAND_DESCRIPTIONS))).min(1, "Give at least one band").max(100, "At most 100 bands");

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
  described(markupGroupFields, MARKUP_GROUP_DESCRIPTIONS),
  ["name", "lane", "bands"],
);
setExamples(CreateMarkupGroupBody, {
  name: "Garments, standard",
  lane: "garment",
  isDefault: true,
  bands: GARMENT_BANDS_EXAMPLE,
});
setExamples(UpdateMarkupGroupBody, { bands: GARMENT_BANDS_EXAMPLE });
export type CreateMarkupGroupBody = z.infer<typeof CreateMarkupGroupBody>;
export type UpdateMarkupGroupBody = z.infer<typeof UpdateMarkupGroupBody>;

export const MARKUP_GROUP_SORT_FIELDS = ["createdAt", "name", "lane"] as const;

export const ListMarkupGroupsQuery = offsetListQuery({
  sortFields: MARKUP_GROUP_SORT_FIELDS,
  named: described({ lane: MarkupLane.optional() }, { lane: "Only groups of this lane" }),
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
    examples: { query: { lane: "garment" } },
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

/** Decorations of a quote group: print or embroidery placements, priced per unit and per setup. */
import { z } from "zod";
import { DateTime, Deleted, Text, Uuid, writeBodies } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import {
  Amount,
  Centimetres,
  DecorationMethod,
  Flag,
  MarkupSource,
  MarkupType,
  MarkupValue,
  OptionalText,
  Quantity,
  SortOrder,
  Url,
} from "./values.ts";

export const DecorationColour = z.object({ name: z.string(), isBase: z.boolean() });

// Cost and margin fields are optional: they are absent without scope costs.read.
export const QuoteGroupDecoration = z.object({
  id: Uuid,
  quoteGroupId: Uuid,
  decorationItemId: Uuid.nullable(),
  method: DecorationMethod.nullable(),
  position: z.string().nullable(),
  quantity: z.int(),
  setupCost: z.number().optional(),
  unitCost: z.number().optional(),
  baseUnitCost: z.number(),
  baseSetupCost: z.number(),
  includeSetupCost: z.boolean(),
  markupType: MarkupType.nullable().optional(),
  markupValue: z.number().nullable().optional(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  setupMarkupType: MarkupType.nullable().optional(),
  setupMarkupValue: z.number().nullable().optional(),
  setupMarkupSource: MarkupSource,
  setupMarkupGroupId: Uuid.nullable(),
  rollUp: z.boolean(),
  rollUpSetup: z.boolean(),
  showOnDocuments: z.boolean(),
  description: z.string().nullable(),
  widthCm: z.number().nullable(),
  lengthCm: z.number().nullable(),
  necklineDropCm: z.number().nullable(),
  screenCount: z.int().nullable(),
  screenMeshGrade: z.string().nullable(),
  colourCount: z.int().nullable(),
  colours: z.array(DecorationColour),
  specialInstructions: z.string().nullable(),
  artworkFileUrl: z.string().nullable(),
  separationFileUrl: z.string().nullable(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "QuoteGroupDecoration" });
export type QuoteGroupDecoration = z.infer<typeof QuoteGroupDecoration>;

const Colours = z.array(z.strictObject({
  name: Text(100),
  isBase: Flag.default(false),
})).max(50, "At most 50 colours").refine(
  (colours) => colours.filter((c) => c.isBase).length <= 1,
  "At most one colour may be the base",
);

const decorationFields = {
  decorationItemId: Uuid.nullable(),
  method: DecorationMethod.nullable(),
  position: Text(100).nullable(),
  quantity: Quantity,
  unitCost: Amount(4),
  setupCost: Amount(4),
  baseUnitCost: Amount(4),
  baseSetupCost: Amount(4),
  includeSetupCost: Flag,
  markupType: MarkupType.nullable(),
  markupValue: MarkupValue.nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  setupMarkupType: MarkupType.nullable(),
  setupMarkupValue: MarkupValue.nullable(),
  setupMarkupSource: MarkupSource,
  setupMarkupGroupId: Uuid.nullable(),
  rollUp: Flag,
  rollUpSetup: Flag,
  showOnDocuments: Flag,
  description: OptionalText(500),
  widthCm: Centimetres.nullable(),
  lengthCm: Centimetres.nullable(),
  necklineDropCm: Centimetres.nullable(),
  screenCount: z.int("Must be a whole number").min(0, "Must not be negative").max(1000)
    .nullable(),
  screenMeshGrade: OptionalText(50),
  colourCount: z.int("Must be a whole number").min(0, "Must not be negative").max(1000)
    .nullable(),
  colours: Colours,
  specialInstructions: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  artworkFileUrl: Url.nullable(),
  separationFileUrl: Url.nullable(),
  sortOrder: SortOrder,
};

export const { create: CreateQuoteDecorationBody, update: UpdateQuoteDecorationBody } = writeBodies(
  "QuoteDecoration",
  decorationFields,
  ["quantity"],
);
export type CreateQuoteDecorationBody = z.infer<typeof CreateQuoteDecorationBody>;
export type UpdateQuoteDecorationBody = z.infer<typeof UpdateQuoteDecorationBody>;

const DecorationDeleted = z.object({ id: Uuid, quoteGroupId: Uuid }).meta({
  id: "QuoteDecorationDeletedData",
});

export const decorationEvents = defineEvents("quotes", "quotes.read", {
  "quote_decoration.created": {
    summary: "A decoration was added to a group",
    data: QuoteGroupDecoration,
  },
  "quote_decoration.updated": { summary: "A decoration changed", data: QuoteGroupDecoration },
  "quote_decoration.deleted": { summary: "A decoration was removed", data: DecorationDeleted },
});

export const decorationOperations = operations("Quote decorations", {
  createQuoteDecoration: {
    method: "POST",
    path: "/v1/quote-groups/{groupId}/decorations",
    scope: "quotes.write",
    summary: "Add a decoration to a group",
    body: CreateQuoteDecorationBody,
    responses: { 201: QuoteGroupDecoration },
    events: ["quote_decoration.created"],
  },
  updateQuoteDecoration: {
    method: "PATCH",
    path: "/v1/quote-decorations/{decorationId}",
    scope: "quotes.write",
    summary: "Change a decoration",
    body: UpdateQuoteDecorationBody,
    responses: { 200: QuoteGroupDecoration },
    events: ["quote_decoration.updated"],
  },
  deleteQuoteDecoration: {
    method: "DELETE",
    path: "/v1/quote-decorations/{decorationId}",
    scope: "quotes.write",
    summary: "Delete a decoration",
    responses: { 200: Deleted },
    events: ["quote_decoration.deleted"],
  },
});

/** Decorations of a quote group: print or embroidery placements, priced per unit and per setup. */
import { z } from "zod";
import { DateTime, Deleted, described, setExamples, Text, Uuid, writeBodies } from "../common.ts";
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

/** One description per field of a colour, as answered and as written. */
const COLOUR_DESCRIPTIONS = {
  name: "Ink or thread colour, as the shop names it",
  isBase: "Whether this is the base (underbase) colour; at most one is, and it is listed first",
};

export const DecorationColour = z.object(described(
  { name: z.string(), isBase: z.boolean() },
  COLOUR_DESCRIPTIONS,
));

/**
 * What a decoration is and where it goes, apart from its quote and its prices: described and
 * validated once here, and shared by every resource that holds decorations (a quote group's, a
 * pre-built item's), so the rules (position trimmed and capped, at most one base colour,
 * centimetres where 0 is a measurement) cannot drift apart.
 */
export const DECORATION_PLACEMENT_DESCRIPTIONS = {
  method: "Decoration technique",
  position: "Where the decoration goes, as free text (`Front`, `Left chest`); trimmed, null " +
    "for none",
  description: "Title printed on the quote",
  widthCm: "Print width in centimetres; 0 is a measurement, null means not given",
  lengthCm: "Print length in centimetres; 0 is a measurement, null means not given",
  necklineDropCm: "How far below the collar the print starts, in centimetres",
  screenCount: "Screens needed (screen printing)",
  screenMeshGrade: "Screen mesh grade (screen printing), such as `156`",
  colourCount: "How many colours are printed; kept apart from `colours`",
  colours: "Colours in the operator's order, the base colour first",
  specialInstructions: "Internal notes for the shop floor; never shown to the customer",
  artworkFileUrl: "Where the artwork file is",
  separationFileUrl: "Where the colour separation file is",
};

/** The shop's costs of a decoration; they follow costs.read wherever a decoration appears. */
export const DECORATION_COST_DESCRIPTIONS = {
  setupCost: "What the setup (screens, digitising) costs the shop ex tax, up to 4 decimals",
  unitCost: "What decorating one unit costs the shop ex tax, up to 4 decimals",
};

/** One description per field, for the decoration and its write bodies. */
const DECORATION_DESCRIPTIONS = {
  ...DECORATION_PLACEMENT_DESCRIPTIONS,
  ...DECORATION_COST_DESCRIPTIONS,
  id: "The decoration's id",
  quoteGroupId: "The group this decoration belongs to",
  decorationItemId: "The catalogue decoration this was priced from, if any",
  quantity: "Units decorated",
  baseUnitCost: "Charge per unit ex tax: unitCost with the unit markup applied; writing it " +
    "makes the unit lane `manual` and derives its markup",
  baseSetupCost: "Setup charge ex tax: setupCost with the setup markup applied; writing it " +
    "makes the setup lane `manual` and derives its markup",
  includeSetupCost: "Whether the setup is charged; the setup lane is inert otherwise",
  markupType: "Unit lane: `percentage` (of unitCost) or `fixed` (amount per unit); null on " +
    "rows older than markups",
  markupValue: "Unit lane markup: a percentage (may be negative or over 100) or an amount",
  markupSource: "Unit lane: `manual` keeps its markup; `group` takes the band of its markup " +
    "group matching the quantity, again whenever quantity or cost changes",
  markupGroupId: "The decoration markup group a `group` unit lane bands through; null means " +
    "the organisation's default decoration group for the method, which must then exist",
  setupMarkupType: "Setup lane: `percentage` (of setupCost) or `fixed` (an amount)",
  setupMarkupValue: "Setup lane markup: a percentage or an amount",
  setupMarkupSource: "Setup lane: `manual` keeps its markup; `group` takes the band of its " +
    "setup markup group matching the setup cost",
  setupMarkupGroupId: "The setup markup group a `group` setup lane bands through; null means " +
    "the organisation's default setup group, which must then exist",
  rollUp: "Show the unit charge folded into the garment price; presentation only, totals " +
    "are the same",
  rollUpSetup: "Show the setup charge folded into the garment price; presentation only",
  showOnDocuments: "Whether the row is drawn on customer documents (default true); hiding it " +
    "folds its charge into the garment price",
  sortOrder: "Position in the group's one sequence shared by lines and decorations, from 1; " +
    "omit on create to append",
  createdAt: "When the decoration was created",
  updatedAt: "When the decoration last changed",
};

/** The placement fields as answered (undescribed: each holder describes them in its object). */
export const decorationPlacementAnswerFields = {
  method: DecorationMethod.nullable(),
  position: z.string().nullable(),
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
};

// Cost and margin fields are optional: they are absent without scope costs.read.
export const QuoteGroupDecoration = z.object(described({
  id: Uuid,
  quoteGroupId: Uuid,
  decorationItemId: Uuid.nullable(),
  method: decorationPlacementAnswerFields.method,
  position: decorationPlacementAnswerFields.position,
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
  description: decorationPlacementAnswerFields.description,
  widthCm: decorationPlacementAnswerFields.widthCm,
  lengthCm: decorationPlacementAnswerFields.lengthCm,
  necklineDropCm: decorationPlacementAnswerFields.necklineDropCm,
  screenCount: decorationPlacementAnswerFields.screenCount,
  screenMeshGrade: decorationPlacementAnswerFields.screenMeshGrade,
  colourCount: decorationPlacementAnswerFields.colourCount,
  colours: decorationPlacementAnswerFields.colours,
  specialInstructions: decorationPlacementAnswerFields.specialInstructions,
  artworkFileUrl: decorationPlacementAnswerFields.artworkFileUrl,
  separationFileUrl: decorationPlacementAnswerFields.separationFileUrl,
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, DECORATION_DESCRIPTIONS)).meta({
  id: "QuoteGroupDecoration",
  description: "A print or embroidery placement of a quote group, with a unit and a setup lane",
});
export type QuoteGroupDecoration = z.infer<typeof QuoteGroupDecoration>;

/** Riverside Bakery's one-colour front print on the 24 tees, with its setup charged. */
export const QUOTE_DECORATION_EXAMPLE: QuoteGroupDecoration = {
  id: "0193a1b2-4c62-73b4-9e45-60718293a4b5",
  quoteGroupId: "0193a1b2-4c5e-7f70-9a01-2c3d4e5f6071",
  decorationItemId: null,
  method: "ScreenPrinting",
  position: "Front",
  quantity: 24,
  setupCost: 40,
  unitCost: 2.5,
  baseUnitCost: 4,
  baseSetupCost: 50,
  includeSetupCost: true,
  markupType: "percentage",
  markupValue: 60,
  markupSource: "manual",
  markupGroupId: null,
  setupMarkupType: "fixed",
  setupMarkupValue: 10,
  setupMarkupSource: "manual",
  setupMarkupGroupId: null,
  rollUp: false,
  rollUpSetup: false,
  showOnDocuments: true,
  description: "Front print, bakery logo",
  widthCm: 28,
  lengthCm: 12.5,
  necklineDropCm: 7.5,
  screenCount: 1,
  screenMeshGrade: "156",
  colourCount: 1,
  colours: [{ name: "White", isBase: true }],
  specialInstructions: "Flash-cure the white before the final pass",
  artworkFileUrl: "https://files.inkwellprint.com.au/art/riverside-bakery-logo.pdf",
  separationFileUrl: null,
  sortOrder: 2,
  createdAt: "2026-03-02T09:18:12.054Z",
  updatedAt: "2026-03-02T09:18:12.054Z",
};
setExamples(QuoteGroupDecoration, QUOTE_DECORATION_EXAMPLE);

const Colours = z.array(z.strictObject(described({
  name: Text(100),
  isBase: Flag.default(false),
}, COLOUR_DESCRIPTIONS))).max(50, "At most 50 colours").refine(
  (colours) => colours.filter((c) => c.isBase).length <= 1,
  "At most one colour may be the base",
);

/** The placement fields as written: one schema per field, whoever holds the decoration. */
export const decorationPlacementFields = {
  method: DecorationMethod.nullable(),
  position: Text(100).nullable(),
  description: OptionalText(500),
  widthCm: Centimetres.nullable(),
  lengthCm: Centimetres.nullable(),
  necklineDropCm: Centimetres.nullable(),
  screenCount: z.int().min(0, "Must not be negative").max(1000)
    .nullable(),
  screenMeshGrade: OptionalText(50),
  colourCount: z.int().min(0, "Must not be negative").max(1000)
    .nullable(),
  colours: Colours,
  specialInstructions: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  artworkFileUrl: Url.nullable(),
  separationFileUrl: Url.nullable(),
};

/** The cost fields as written (costs.read to set them). */
export const decorationCostFields = {
  unitCost: Amount(4),
  setupCost: Amount(4),
};

// Listed field by field, not spread, so the document keeps its property order.
const decorationFields = {
  decorationItemId: Uuid.nullable(),
  method: decorationPlacementFields.method,
  position: decorationPlacementFields.position,
  quantity: Quantity,
  unitCost: decorationCostFields.unitCost,
  setupCost: decorationCostFields.setupCost,
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
  description: decorationPlacementFields.description,
  widthCm: decorationPlacementFields.widthCm,
  lengthCm: decorationPlacementFields.lengthCm,
  necklineDropCm: decorationPlacementFields.necklineDropCm,
  screenCount: decorationPlacementFields.screenCount,
  screenMeshGrade: decorationPlacementFields.screenMeshGrade,
  colourCount: decorationPlacementFields.colourCount,
  colours: decorationPlacementFields.colours,
  specialInstructions: decorationPlacementFields.specialInstructions,
  artworkFileUrl: decorationPlacementFields.artworkFileUrl,
  separationFileUrl: decorationPlacementFields.separationFileUrl,
  sortOrder: SortOrder,
};

export const { create: CreateQuoteDecorationBody, update: UpdateQuoteDecorationBody } = writeBodies(
  "QuoteDecoration",
  described(decorationFields, DECORATION_DESCRIPTIONS),
  ["quantity"],
);
/** Riverside Bakery's front print, as a create writes it. */
export const CREATE_QUOTE_DECORATION_EXAMPLE: CreateQuoteDecorationBody = {
  method: "ScreenPrinting",
  position: "Front",
  quantity: 24,
  unitCost: 2.5,
  markupType: "percentage",
  markupValue: 60,
  setupCost: 40,
  setupMarkupType: "fixed",
  setupMarkupValue: 10,
  includeSetupCost: true,
  description: "Front print, bakery logo",
  widthCm: 28,
  lengthCm: 12.5,
  necklineDropCm: 7.5,
  screenCount: 1,
  screenMeshGrade: "156",
  colourCount: 1,
  colours: [{ name: "White", isBase: true }],
  artworkFileUrl: "https://files.inkwellprint.com.au/art/riverside-bakery-logo.pdf",
};
setExamples(CreateQuoteDecorationBody, CREATE_QUOTE_DECORATION_EXAMPLE);
setExamples(UpdateQuoteDecorationBody, {
  specialInstructions: "Flash-cure the white before the final pass",
});
export type CreateQuoteDecorationBody = z.infer<typeof CreateQuoteDecorationBody>;
export type UpdateQuoteDecorationBody = z.infer<typeof UpdateQuoteDecorationBody>;

const DecorationDeleted = z.object(described({ id: Uuid, quoteGroupId: Uuid }, {
  id: "The deleted decoration's id",
  quoteGroupId: "The group it belonged to",
})).meta({
  id: "QuoteDecorationDeletedData",
  description: "The decoration that was deleted",
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

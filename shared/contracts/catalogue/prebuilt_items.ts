/**
 * Pre-built items (spec 4.8): a saved garment-plus-decoration combination the shop sells again
 * and again ("Staff polo, left-chest logo"), with the colours and sizes it usually comes in.
 */
import { z } from "zod";
import {
  DateTime,
  Deleted,
  described,
  optionalAll,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { bulkBody, BulkResult } from "../bulk.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import {
  DECORATION_COST_DESCRIPTIONS,
  DECORATION_PLACEMENT_DESCRIPTIONS,
  decorationCostFields,
  decorationPlacementAnswerFields,
  decorationPlacementFields,
} from "../quotes/decorations.ts";

/**
 * A pre-built item's lifecycle: `draft` while it is put together, `active` while it is offered,
 * `archived` when retired. The moves between them are in services/catalogue/domain.
 */
export const PREBUILT_ITEM_STATUSES = ["draft", "active", "archived"] as const;
export type PrebuiltItemStatus = typeof PREBUILT_ITEM_STATUSES[number];
export const PrebuiltItemStatus = z.enum(PREBUILT_ITEM_STATUSES, {
  error: `Must be one of ${PREBUILT_ITEM_STATUSES.join(", ")}`,
});

const PREBUILT_DECORATION_DESCRIPTIONS = {
  ...DECORATION_PLACEMENT_DESCRIPTIONS,
  ...DECORATION_COST_DESCRIPTIONS,
};

// Cost fields are optional: they are absent without scope costs.read.
export const PrebuiltDecoration = z.object(described({
  ...decorationPlacementAnswerFields,
  unitCost: z.number().nullable().optional(),
  setupCost: z.number().nullable().optional(),
}, PREBUILT_DECORATION_DESCRIPTIONS)).meta({
  id: "PrebuiltDecoration",
  description: "A decoration of a pre-built item: the same fields and rules as a quote " +
    "decoration's placement, with its costs; no quantity or prices until it is quoted",
});
export type PrebuiltDecoration = z.infer<typeof PrebuiltDecoration>;

/**
 * A decoration as written: every field may be left out (stored as null, or no colours). No
 * defaults in the schema: a cost key present after parsing would read as set (costs.read).
 */
export const PrebuiltDecorationInput = z.strictObject(described(
  optionalAll({
    ...decorationPlacementFields,
    unitCost: decorationCostFields.unitCost.nullable(),
    setupCost: decorationCostFields.setupCost.nullable(),
  }),
  PREBUILT_DECORATION_DESCRIPTIONS,
)).meta({
  id: "PrebuiltDecorationInput",
  description: "A decoration of a pre-built item as written; fields not given are null " +
    "(`colours` empty); setting a cost needs scope costs.read",
});
export type PrebuiltDecorationInput = z.output<typeof PrebuiltDecorationInput>;

/** One description per field, for the item and its write bodies. */
const PREBUILT_ITEM_DESCRIPTIONS = {
  id: "The pre-built item's id: the server's, or the one the client chose with PUT",
  name: "Name the shop sells it by",
  description: "Longer description for quotes and the shop's site",
  garmentCatalogueItemId: "The garment (a catalogue item of this organisation); null while " +
    "not chosen, or for decorations meant for any garment. A catalogue item a pre-built item " +
    "uses cannot be deleted",
  status: "`draft` while put together, `active` while offered, `archived` when retired. " +
    "Moves: draft → active or archived; active → draft or archived; archived → active only. " +
    "New items are `draft` unless created with another status; PUT without it keeps the " +
    "current status",
  defaultColors: "Garment colours it usually comes in, in the shop's order",
  defaultSizes: "Sizes it usually comes in, in the shop's order",
  decorations: "Its decorations, in order; costs follow scope costs.read",
  createdAt: "When the pre-built item was created",
  updatedAt: "When the pre-built item last changed",
};

export const PrebuiltItem = z.object(described({
  id: Uuid,
  name: z.string(),
  description: z.string().nullable(),
  garmentCatalogueItemId: Uuid.nullable(),
  status: PrebuiltItemStatus,
  defaultColors: z.array(z.string()),
  defaultSizes: z.array(z.string()),
  decorations: z.array(PrebuiltDecoration),
  createdAt: DateTime,
  updatedAt: DateTime,
}, PREBUILT_ITEM_DESCRIPTIONS)).meta({
  id: "PrebuiltItem",
  description: "A saved garment-plus-decoration combination, quoted again and again",
});
export type PrebuiltItem = z.infer<typeof PrebuiltItem>;

const LEFT_CHEST_LOGO: PrebuiltDecoration = {
  method: "Embroidery",
  position: "Left chest",
  description: "Bakery logo, left chest",
  widthCm: 9,
  lengthCm: 4.5,
  necklineDropCm: null,
  screenCount: null,
  screenMeshGrade: null,
  colourCount: 2,
  colours: [{ name: "Navy", isBase: false }, { name: "Gold", isBase: false }],
  specialInstructions: "Use the 2026 digitised file",
  artworkFileUrl: "https://files.inkwellprint.com.au/art/riverside-bakery-logo.dst",
  separationFileUrl: null,
  unitCost: 3.2,
  setupCost: 45,
};

export const PREBUILT_ITEM_EXAMPLE: PrebuiltItem = {
  id: "0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9012",
  name: "Staff polo, embroidered logo",
  description: "Riverside Bakery's counter staff polo",
  garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
  status: "active",
  defaultColors: ["White", "Navy"],
  defaultSizes: ["S", "M", "L", "XL"],
  decorations: [LEFT_CHEST_LOGO],
  createdAt: "2026-03-04T01:12:40.118Z",
  updatedAt: "2026-03-04T01:12:40.118Z",
};
setExamples(PrebuiltItem, PREBUILT_ITEM_EXAMPLE);

const Labels = z.array(Text(100)).max(100, "At most 100 values");

const prebuiltItemFields = {
  name: Text(200),
  description: z.string().trim().max(10_000, "Must be at most 10000 characters").nullable(),
  garmentCatalogueItemId: Uuid.nullable(),
  status: PrebuiltItemStatus,
  defaultColors: Labels,
  defaultSizes: Labels,
  decorations: z.array(PrebuiltDecorationInput).max(50, "At most 50 decorations"),
};

export const { create: CreatePrebuiltItemBody } = writeBodies(
  "PrebuiltItem",
  described(prebuiltItemFields, PREBUILT_ITEM_DESCRIPTIONS),
  ["name"],
);
setExamples(CreatePrebuiltItemBody, {
  name: "Staff polo, embroidered logo",
  garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
  defaultColors: ["White", "Navy"],
  defaultSizes: ["S", "M", "L", "XL"],
  decorations: [{
    method: "Embroidery",
    position: "Left chest",
    widthCm: 9,
    colours: [{ name: "Navy", isBase: false }, { name: "Gold", isBase: false }],
    unitCost: 3.2,
  }],
});
export type CreatePrebuiltItemBody = z.output<typeof CreatePrebuiltItemBody>;

export const PREBUILT_ITEM_SORT_FIELDS = ["createdAt", "updatedAt", "name", "status"] as const;

export const ListPrebuiltItemsQuery = offsetListQuery({
  sortFields: PREBUILT_ITEM_SORT_FIELDS,
  named: described({
    status: PrebuiltItemStatus.optional(),
    garmentCatalogueItemId: Uuid.optional(),
  }, {
    status: "Only items in this status",
    garmentCatalogueItemId: "Only items made on this garment",
  }),
  search: true,
});
export type ListPrebuiltItemsQuery = z.infer<typeof ListPrebuiltItemsQuery>;

export const BulkDeletePrebuiltItemsBody = bulkBody(
  "DeletePrebuiltItems",
  {},
  "The pre-built items to delete",
);
setExamples(BulkDeletePrebuiltItemsBody, {
  target: { filters: [{ field: "status", op: "eq", value: "archived" }] },
});
export type BulkDeletePrebuiltItemsBody = z.output<typeof BulkDeletePrebuiltItemsBody>;

export const BulkPrebuiltItemStatusBody = bulkBody(
  "PrebuiltItemStatus",
  described({ status: PrebuiltItemStatus }, {
    status: "The status to move every targeted item to; a move the lifecycle does not allow " +
      "is `refused` for that row, one already there is `unchanged`",
  }),
  "The pre-built items to move, and the status to move them to",
);
setExamples(BulkPrebuiltItemStatusBody, {
  target: { ids: ["0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9012"] },
  status: "archived",
});
export type BulkPrebuiltItemStatusBody = z.output<typeof BulkPrebuiltItemStatusBody>;

export const prebuiltItemEvents = defineEvents("catalogue", "prebuiltitems.read", {
  "prebuilt_item.created": { summary: "A pre-built item was created", data: PrebuiltItem },
  "prebuilt_item.updated": {
    summary: "A pre-built item was replaced or changed status",
    data: PrebuiltItem,
  },
  "prebuilt_item.deleted": {
    summary: "A pre-built item was deleted (one event per item in a bulk delete)",
    data: PrebuiltItem,
  },
});

export const prebuiltItemOperations = operations("Pre-built items", {
  listPrebuiltItems: {
    method: "GET",
    path: "/v1/prebuilt-items",
    scope: "prebuiltitems.read",
    summary: "List the organisation's pre-built items, oldest first unless sorted otherwise",
    query: ListPrebuiltItemsQuery,
    responses: { 200: page(PrebuiltItem) },
    examples: { query: { limit: "50", status: "active", search: "polo" } },
  },
  createPrebuiltItem: {
    method: "POST",
    path: "/v1/prebuilt-items",
    scope: "prebuiltitems.write",
    summary: "Create a pre-built item with an id the server assigns",
    body: CreatePrebuiltItemBody,
    responses: { 201: PrebuiltItem },
    events: ["prebuilt_item.created"],
  },
  getPrebuiltItem: {
    method: "GET",
    path: "/v1/prebuilt-items/{prebuiltItemId}",
    scope: "prebuiltitems.read",
    summary: "Read one pre-built item",
    responses: { 200: PrebuiltItem },
  },
  putPrebuiltItem: {
    method: "PUT",
    path: "/v1/prebuilt-items/{prebuiltItemId}",
    scope: "prebuiltitems.write",
    summary: "Create a pre-built item with the client's id (201), or replace it (200); fields " +
      "not given take their defaults, a status not given stays. Ids are the organisation's " +
      "own: one another organisation uses is this one's to take as well",
    body: CreatePrebuiltItemBody,
    responses: { 200: PrebuiltItem, 201: PrebuiltItem },
    // An id the organisation does not have creates the item: this operation never answers 404.
    unknownIdSucceeds: true,
    events: ["prebuilt_item.created", "prebuilt_item.updated"],
  },
  deletePrebuiltItem: {
    method: "DELETE",
    path: "/v1/prebuilt-items/{prebuiltItemId}",
    scope: "prebuiltitems.write",
    summary: "Delete a pre-built item",
    responses: { 200: Deleted },
    events: ["prebuilt_item.deleted"],
  },
  bulkDeletePrebuiltItems: {
    method: "POST",
    path: "/v1/prebuilt-items/bulk/delete",
    scope: "prebuiltitems.write",
    summary: "Delete every pre-built item of a target (ids, or all matching filters now)",
    body: BulkDeletePrebuiltItemsBody,
    responses: { 200: BulkResult },
    events: ["prebuilt_item.deleted"],
  },
  bulkSetPrebuiltItemStatus: {
    method: "POST",
    path: "/v1/prebuilt-items/bulk/status",
    scope: "prebuiltitems.write",
    summary: "Move every pre-built item of a target to a status; moves the lifecycle does not " +
      "allow are refused row by row",
    body: BulkPrebuiltItemStatusBody,
    responses: { 200: BulkResult },
    events: ["prebuilt_item.updated"],
  },
});

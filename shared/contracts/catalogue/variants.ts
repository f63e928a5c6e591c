/** Garment variants: one colour and size of a catalogue item, with its stock. */
import { z } from "zod";
import {
  BooleanParam,
  DateTime,
  Deleted,
  described,
  ExternalId,
  externalIdDescription,
  externalIdFilter,
  IsoDate,
  page,
  setExamples,
  Uuid,
} from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { BULK_ROWS_CEILING } from "../bulk.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, Flag, OptionalText } from "../quotes/values.ts";
import { ColorHex, GarmentSource, ImageUrls, Label, StockCount } from "./values.ts";

const LOCATION_DESCRIPTIONS = {
  location: "Where the stock is (a warehouse, a shelf), as the shop names it",
  quantity: "Units there",
};

export const StockAtLocation = z.object(described({
  location: z.string(),
  quantity: z.int(),
}, LOCATION_DESCRIPTIONS));

const FUTURE_DESCRIPTIONS = {
  quantity: "Units the supplier expects to have",
  availableOn: "The day they are expected, `YYYY-MM-DD`",
};

export const FutureAvailability = z.object(described({
  quantity: z.int(),
  availableOn: z.string(),
}, FUTURE_DESCRIPTIONS));

/** One description per field, for the variant and its write bodies. */
const VARIANT_DESCRIPTIONS = {
  id: "The variant's id",
  garmentCatalogueItemId: "The catalogue item (style) this is a colour and size of",
  styleCode: "Style code: the item's, following it when it changes, unless the variant was " +
    "given its own (at creation or by a PATCH), which it keeps",
  color: "Colour name as the supplier spells it",
  size: "Size label, any text (`M`, `2XL`, `YL`, `XLT`); sorted by the organisation's size order",
  stockCode: "The supplier's SKU for this colour and size",
  colorHex: "Display colour, `#RRGGBB`",
  countryOfManufacture: "Where it is made",
  stockOnHand: "Units the shop holds: the sum of `stockByLocation` when locations are kept; " +
    "changes only through stock adjustments (a PATCH writes one for the difference)",
  stockReserved: "Units promised to jobs; never more than `stockOnHand`",
  supplierStock: "Units the supplier reports it holds",
  stockByLocation: "Units per location; empty when the variant keeps no locations",
  futureAvailability: "What the supplier expects to have and when (PromoStandards " +
    "Inventory 2.0.0 shape)",
  isDiscontinued: "Whether this colour and size is no longer made",
  images: "Image URLs of this colour, the first is the main one",
  source: "Where the row came from: `manual`, `supplier_feed`, `import` or `api`",
  nextDeliveryEta: "When the next delivery from the supplier is expected",
  unitPrice: "Sell price of one unit ex tax, up to 4 decimals",
  externalId: externalIdDescription("garment variants"),
  lastSyncedAt: "When a supplier feed last updated the row",
  createdAt: "When the variant was created",
  updatedAt: "When the variant last changed",
};

export const GarmentVariant = z.object(described({
  id: Uuid,
  garmentCatalogueItemId: Uuid,
  styleCode: z.string(),
  color: z.string(),
  size: z.string(),
  stockCode: z.string().nullable(),
  colorHex: z.string().nullable(),
  countryOfManufacture: z.string().nullable(),
  stockOnHand: z.int(),
  stockReserved: z.int(),
  supplierStock: z.int(),
  stockByLocation: z.array(StockAtLocation),
  futureAvailability: z.array(FutureAvailability),
  isDiscontinued: z.boolean(),
  images: z.array(z.string()),
  source: GarmentSource,
  nextDeliveryEta: DateTime.nullable(),
  unitPrice: z.number().nullable(),
  externalId: z.string().nullable(),
  lastSyncedAt: DateTime.nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, VARIANT_DESCRIPTIONS)).meta({
  id: "GarmentVariant",
  description: "One colour and size of a catalogue item, with its stock",
});
export type GarmentVariant = z.infer<typeof GarmentVariant>;

export const GARMENT_VARIANT_EXAMPLE: GarmentVariant = {
  id: "0193a0f1-3c01-7d2e-8f90-a1b2c3d4e5f6",
  garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
  styleCode: "5000",
  color: "Black",
  size: "2XL",
  stockCode: "G500-BLK-2XL",
  colorHex: "#1B1B1B",
  countryOfManufacture: "Honduras",
  stockOnHand: 46,
  stockReserved: 12,
  supplierStock: 5200,
  stockByLocation: [{ location: "Main store", quantity: 40 }, { location: "Van", quantity: 6 }],
  futureAvailability: [{ quantity: 1200, availableOn: "2026-12-14" }],
  isDiscontinued: false,
  images: ["https://cdn.example-supplier.com/gildan/5000/black.jpg"],
  source: "supplier_feed",
  nextDeliveryEta: "2026-12-14T00:00:00.000Z",
  unitPrice: 4.95,
  externalId: "GIL-5000-BLK-2XL",
  lastSyncedAt: "2026-11-20T03:00:12.500Z",
  createdAt: "2026-02-03T22:14:10.002Z",
  updatedAt: "2026-11-20T03:00:12.500Z",
};
setExamples(GarmentVariant, GARMENT_VARIANT_EXAMPLE);

const Locations = z.array(z.strictObject(described({
  location: Label,
  quantity: StockCount,
}, LOCATION_DESCRIPTIONS))).max(100, "At most 100 locations").refine(
  (rows) => new Set(rows.map((r) => r.location.toLowerCase())).size === rows.length,
  "Each location may appear once",
);

const Future = z.array(z.strictObject(described({
  quantity: StockCount,
  availableOn: IsoDate,
}, FUTURE_DESCRIPTIONS))).max(100, "At most 100 rows");

/** The writable fields of a variant, beside its item, colour and size. */
const variantFields = {
  styleCode: Label,
  stockCode: OptionalText(100),
  colorHex: ColorHex.nullable(),
  countryOfManufacture: OptionalText(100),
  stockOnHand: StockCount,
  stockReserved: StockCount,
  supplierStock: StockCount,
  stockByLocation: Locations,
  futureAvailability: Future,
  isDiscontinued: Flag,
  images: ImageUrls,
  source: GarmentSource,
  nextDeliveryEta: DateTime.nullable(),
  unitPrice: Amount(4).nullable(),
  externalId: ExternalId,
  lastSyncedAt: DateTime.nullable(),
};

/** One row of a bulk create: the spec's eight fields, and any other writable field. */
export const BulkVariantRow = z.strictObject(described({
  garmentCatalogueItemId: Uuid,
  color: Label,
  size: Label,
  ...Object.fromEntries(Object.entries(variantFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof variantFields]: z.ZodOptional<typeof variantFields[K]>;
  },
}, VARIANT_DESCRIPTIONS)).meta({
  id: "BulkVariantRow",
  description: "A new variant: its item, colour and size, and any other field; a variant " +
    "with `stockByLocation` and no `stockOnHand` holds their sum",
});
export type BulkVariantRow = z.infer<typeof BulkVariantRow>;

export const BulkCreateVariantsBody = z.strictObject(described({
  input: z.array(BulkVariantRow).min(1, "Give at least one row").max(BULK_ROWS_CEILING)
    .optional(),
  items: z.array(BulkVariantRow).min(1, "Give at least one row").max(BULK_ROWS_CEILING)
    .optional(),
}, {
  input: "The rows to create (preferred name)",
  items: "The rows to create (accepted for compatibility; give `input` or `items`, not both)",
})).superRefine((body, ctx) => {
  if (body.input !== undefined && body.items !== undefined) {
    ctx.addIssue({ code: "custom", path: ["items"], message: "Give input or items, not both" });
  } else if (body.input === undefined && body.items === undefined) {
    ctx.addIssue({ code: "custom", path: ["input"], message: "Give the rows as input" });
  }
}).meta({
  id: "BulkCreateVariantsBody",
  description: "Variants to create in one transaction: all are written, or none",
});
setExamples(BulkCreateVariantsBody, {
  input: [
    {
      garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
      color: "Black",
      colorHex: "#1B1B1B",
      size: "M",
      stockCode: "G500-BLK-M",
      countryOfManufacture: "Honduras",
      stockOnHand: 120,
    },
    {
      garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
      color: "Black",
      colorHex: "#1B1B1B",
      size: "2XL",
      stockByLocation: [{ location: "Main store", quantity: 40 }, { location: "Van", quantity: 6 }],
    },
  ],
});
export type BulkCreateVariantsBody = z.infer<typeof BulkCreateVariantsBody>;

export const UpdateGarmentVariantBody = z.strictObject(described({
  color: Label.optional(),
  size: Label.optional(),
  ...Object.fromEntries(Object.entries(variantFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof variantFields]: z.ZodOptional<typeof variantFields[K]>;
  },
}, VARIANT_DESCRIPTIONS)).meta({
  id: "UpdateGarmentVariantBody",
  description: "The variant fields to change; a new stock figure is written to the stock " +
    "ledger as a `stocktake` adjustment",
});
setExamples(UpdateGarmentVariantBody, { stockReserved: 24, isDiscontinued: false });
export type UpdateGarmentVariantBody = z.infer<typeof UpdateGarmentVariantBody>;

export const GARMENT_VARIANT_SORT_FIELDS = [
  "size",
  "styleCode",
  "color",
  "stockOnHand",
  "createdAt",
  "updatedAt",
] as const;

export const ListGarmentVariantsQuery = offsetListQuery({
  sortFields: GARMENT_VARIANT_SORT_FIELDS,
  named: {
    ...described({
      garmentCatalogueItemId: Uuid.optional(),
      styleCode: z.string().max(100, "Must be at most 100 characters").optional(),
      color: z.string().max(100, "Must be at most 100 characters").optional(),
      size: z.string().max(100, "Must be at most 100 characters").optional(),
      isDiscontinued: BooleanParam.optional(),
      inStock: BooleanParam.optional(),
    }, {
      garmentCatalogueItemId: "Only variants of this catalogue item",
      styleCode: "Only this style code",
      color: "Only this colour (exact)",
      size: "Only this size (exact)",
      isDiscontinued: "`true` for discontinued variants only, `false` for current ones only",
      inStock: "`true` for variants with stock on hand beyond what is reserved, `false` for " +
        "the others",
    }),
    ...externalIdFilter("garment variant"),
  },
  search: true,
});
export type ListGarmentVariantsQuery = z.infer<typeof ListGarmentVariantsQuery>;

const VariantDeleted = z.object(described({ id: Uuid, garmentCatalogueItemId: Uuid }, {
  id: "The deleted variant's id",
  garmentCatalogueItemId: "The catalogue item it belonged to",
})).meta({ id: "GarmentVariantDeletedData", description: "The garment variant that was deleted" });

export const variantEvents = defineEvents("catalogue", "garments.read", {
  "garment_variant.created": { summary: "A garment variant was created", data: GarmentVariant },
  "garment_variant.updated": { summary: "A garment variant changed", data: GarmentVariant },
  "garment_variant.deleted": { summary: "A garment variant was deleted", data: VariantDeleted },
});

export const variantOperations = operations("Garment variants", {
  bulkCreateGarmentVariants: {
    method: "POST",
    path: "/v1/garment-variants/bulk/create",
    scope: "garments.write",
    summary: "Create up to BULK_MAX_ROWS variants in one transaction; every row is checked " +
      "before any is written",
    body: BulkCreateVariantsBody,
    responses: {
      201: z.array(GarmentVariant).describe("The created variants, in the order of the rows"),
    },
    // Opening stock is in the ledger; the created event carries the figures.
    events: ["garment_variant.created"],
  },
  createGarmentVariant: {
    method: "POST",
    path: "/v1/garment-variants",
    scope: "garments.write",
    summary: "Create one variant (bulk/create takes many in one transaction)",
    body: BulkVariantRow,
    responses: { 201: GarmentVariant },
    events: ["garment_variant.created"],
    examples: {
      body: {
        garmentCatalogueItemId: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
        color: "Black",
        colorHex: "#1B1B1B",
        size: "M",
        stockCode: "G500-BLK-M",
        stockOnHand: 120,
      },
    },
  },
  listGarmentVariants: {
    method: "GET",
    path: "/v1/garment-variants",
    scope: "garments.read",
    summary: "List variants, by style, colour and size order unless sorted otherwise",
    query: ListGarmentVariantsQuery,
    responses: { 200: page(GarmentVariant) },
    examples: { query: { styleCode: "5000", inStock: "true" } },
  },
  getGarmentVariant: {
    method: "GET",
    path: "/v1/garment-variants/{garmentVariantId}",
    scope: "garments.read",
    summary: "Read one variant",
    responses: { 200: GarmentVariant },
  },
  updateGarmentVariant: {
    method: "PATCH",
    path: "/v1/garment-variants/{garmentVariantId}",
    scope: "garments.write",
    summary: "Change a variant; new stock figures are written to the stock ledger",
    body: UpdateGarmentVariantBody,
    responses: { 200: GarmentVariant },
    events: ["garment_variant.updated", "garment_variant.stock_adjusted"],
  },
  deleteGarmentVariant: {
    method: "DELETE",
    path: "/v1/garment-variants/{garmentVariantId}",
    scope: "garments.write",
    summary: "Delete a variant and its stock ledger",
    responses: { 200: Deleted },
    events: ["garment_variant.deleted"],
  },
});

/** Garment catalogue items: a style the shop buys (a Gildan 5000), with its variants below it. */
import { z } from "zod";
import {
  BooleanParam,
  DateTime,
  Deleted,
  described,
  ExternalId,
  externalIdDescription,
  externalIdFilter,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { cursorPage } from "../common.ts";
import { cursorListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, Flag, OptionalText } from "../quotes/values.ts";
import { GarmentSource, ImageUrls } from "./values.ts";

/** One description per field, for the item and its write bodies. */
const ITEM_DESCRIPTIONS = {
  id: "The catalogue item's id",
  styleCode: "The supplier's style code (`5000`, `AS-5001`); unique in the organisation. " +
    "Variants given no code of their own follow it when it changes",
  name: "Name the shop sells it by",
  brand: "Brand or mill (`Gildan`, `AS Colour`)",
  description: "Longer description for quotes and the shop's site",
  category: "The shop's own category (`T-shirts`, `Hoodies`)",
  supplierVendorId: "The CRM vendor the shop buys it from (an id only; not checked here)",
  fabric: "Fabric, as the supplier describes it (`100% combed cotton`)",
  weightGsm: "Fabric weight in grams per square metre",
  images: "Image URLs, the first is the main one",
  isDiscontinued: "Whether the supplier no longer makes it; kept for old quotes",
  externalId: externalIdDescription("catalogue items"),
  source: "Where the row came from: `manual`, `supplier_feed`, `import` or `api`",
  buyPrice: "What one unit costs the shop ex tax, before variant pricing (scope costs.read)",
  createdAt: "When the item was created",
  updatedAt: "When the item last changed",
};

// buyPrice is optional: it is absent without scope costs.read.
export const GarmentCatalogueItem = z.object(described({
  id: Uuid,
  styleCode: z.string(),
  name: z.string(),
  brand: z.string().nullable(),
  description: z.string().nullable(),
  category: z.string().nullable(),
  supplierVendorId: Uuid.nullable(),
  fabric: z.string().nullable(),
  weightGsm: z.int().nullable(),
  images: z.array(z.string()),
  isDiscontinued: z.boolean(),
  externalId: z.string().nullable(),
  source: GarmentSource,
  buyPrice: z.number().nullable().optional(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, ITEM_DESCRIPTIONS)).meta({
  id: "GarmentCatalogueItem",
  description: "A garment style in the shop's catalogue; its colours and sizes are variants",
});
export type GarmentCatalogueItem = z.infer<typeof GarmentCatalogueItem>;

export const CATALOGUE_ITEM_EXAMPLE: GarmentCatalogueItem = {
  id: "0193a0f1-22b4-7c88-9d10-4e5f60718293",
  styleCode: "5000",
  name: "Heavy Cotton Tee",
  brand: "Gildan",
  description: "Classic fit, taped neck and shoulders",
  category: "T-shirts",
  supplierVendorId: "0193a0e9-8f10-7a21-b3c4-d5e6f7081920",
  fabric: "100% cotton",
  weightGsm: 180,
  images: ["https://cdn.example-supplier.com/gildan/5000/main.jpg"],
  isDiscontinued: false,
  externalId: "GIL-5000",
  source: "supplier_feed",
  buyPrice: 3.85,
  createdAt: "2026-02-03T22:14:09.311Z",
  updatedAt: "2026-02-03T22:14:09.311Z",
};
setExamples(GarmentCatalogueItem, CATALOGUE_ITEM_EXAMPLE);

const itemFields = {
  styleCode: Text(100),
  name: Text(200),
  brand: OptionalText(100),
  description: z.string().trim().max(10_000, "Must be at most 10000 characters").nullable(),
  category: OptionalText(100),
  supplierVendorId: Uuid.nullable(),
  fabric: OptionalText(200),
  weightGsm: z.int().min(1, "Must be at least 1").max(5000).nullable(),
  images: ImageUrls,
  isDiscontinued: Flag,
  externalId: ExternalId,
  source: GarmentSource,
  buyPrice: Amount(4).nullable(),
};

export const { create: CreateCatalogueItemBody, update: UpdateCatalogueItemBody } = writeBodies(
  "CatalogueItem",
  described(itemFields, ITEM_DESCRIPTIONS),
  ["styleCode", "name"],
);
setExamples(CreateCatalogueItemBody, {
  styleCode: "5000",
  name: "Heavy Cotton Tee",
  brand: "Gildan",
  category: "T-shirts",
  weightGsm: 180,
  buyPrice: 3.85,
});
setExamples(UpdateCatalogueItemBody, { isDiscontinued: true });
export type CreateCatalogueItemBody = z.infer<typeof CreateCatalogueItemBody>;
export type UpdateCatalogueItemBody = z.infer<typeof UpdateCatalogueItemBody>;

export const CATALOGUE_SORT_FIELDS = ["createdAt", "updatedAt", "styleCode", "name"] as const;

export const ListCatalogueItemsQuery = cursorListQuery({
  sortFields: CATALOGUE_SORT_FIELDS,
  named: {
    ...described({
      brand: z.string().max(100, "Must be at most 100 characters").optional(),
      category: z.string().max(100, "Must be at most 100 characters").optional(),
      isDiscontinued: BooleanParam.optional(),
      supplierVendorId: Uuid.optional(),
    }, {
      brand: "Only this brand",
      category: "Only this category",
      isDiscontinued: "`true` for discontinued styles only, `false` for current ones only",
      supplierVendorId: "Only styles bought from this vendor",
    }),
    ...externalIdFilter("catalogue item"),
  },
  search: true,
});
export type ListCatalogueItemsQuery = z.infer<typeof ListCatalogueItemsQuery>;

export const DeleteCatalogueItemQuery = z.strictObject(described({
  cascade: BooleanParam.optional(),
}, {
  cascade: "`true` deletes the item's variants with it; without it, an item with variants is 409",
}));

export const catalogueItemEvents = defineEvents("catalogue", "garments.read", {
  "garment_catalogue_item.created": {
    summary: "A catalogue item was created",
    data: GarmentCatalogueItem,
  },
  "garment_catalogue_item.updated": {
    summary: "A catalogue item changed",
    data: GarmentCatalogueItem,
  },
  "garment_catalogue_item.deleted": {
    summary: "A catalogue item was deleted (its variants' deletions come as their own events)",
    data: GarmentCatalogueItem,
  },
});

export const catalogueItemOperations = operations("Garment catalogue", {
  createCatalogueItem: {
    method: "POST",
    path: "/v1/catalogue",
    scope: "garments.write",
    summary: "Add a garment style to the catalogue",
    body: CreateCatalogueItemBody,
    responses: { 201: GarmentCatalogueItem },
    events: ["garment_catalogue_item.created"],
  },
  listCatalogueItems: {
    method: "GET",
    path: "/v1/catalogue",
    scope: "garments.read",
    summary: "Page through the catalogue with a cursor, oldest first unless sorted otherwise",
    query: ListCatalogueItemsQuery,
    responses: { 200: cursorPage(GarmentCatalogueItem) },
    examples: { query: { limit: "50", brand: "Gildan", sortField: "styleCode" } },
  },
  getCatalogueItem: {
    method: "GET",
    path: "/v1/catalogue/{catalogueItemId}",
    scope: "garments.read",
    summary: "Read one catalogue item",
    responses: { 200: GarmentCatalogueItem },
  },
  updateCatalogueItem: {
    method: "PATCH",
    path: "/v1/catalogue/{catalogueItemId}",
    scope: "garments.write",
    summary: "Change a catalogue item",
    body: UpdateCatalogueItemBody,
    responses: { 200: GarmentCatalogueItem },
    // A new style code reaches the variants that have none of their own, each announced.
    events: ["garment_catalogue_item.updated", "garment_variant.updated"],
  },
  deleteCatalogueItem: {
    method: "DELETE",
    path: "/v1/catalogue/{catalogueItemId}",
    scope: "garments.write",
    summary: "Delete a catalogue item; one with variants only with `cascade=true`, and never " +
      "one a pre-built item uses",
    query: DeleteCatalogueItemQuery,
    responses: { 200: Deleted },
    examples: { query: { cascade: "true" } },
    events: ["garment_catalogue_item.deleted", "garment_variant.deleted"],
  },
});

/**
 * The garment_variants table, declared once: the variant store (variants.ts) and the stock
 * ledger (stock.ts) both read and lock variants through it, and neither reaches into the other.
 */
import type { Queryable } from "@printshop/shared/db";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { externalIdKey } from "@printshop/shared/db/held-keys";
import { GARMENT_SOURCES, type GarmentVariant } from "@printshop/shared/contracts/catalogue";
import type { Stock } from "../domain/stock.ts";
import { SIZE_SORT_KEY } from "./settings.ts";

export const VARIANTS = defineTable({
  name: "garment_variants",
  tenant: true,
  noun: "Garment variant",
  references: { garment_catalogue_item_id: "catalogue_items" },
  columns: {
    id: col.uuid(),
    garmentCatalogueItemId: col.uuid().filterable(),
    styleCode: col.text().filterable(),
    color: col.text().filterable(),
    // By the organisation's size order, then alphabetically; equality is on the label.
    size: col.text().filterable({ sortColumn: SIZE_SORT_KEY }),
    stockCode: col.text().nullable().filterable(),
    colorHex: col.text().nullable().filterable(),
    countryOfManufacture: col.text().nullable().filterable(),
    stockOnHand: col.integer().filterable(),
    stockReserved: col.integer().filterable(),
    supplierStock: col.integer().filterable(),
    stockByLocation: col.json<GarmentVariant["stockByLocation"]>(),
    futureAvailability: col.json<GarmentVariant["futureAvailability"]>(),
    isDiscontinued: col.boolean().filterable(),
    images: col.textArray(),
    source: col.enum(GARMENT_SOURCES).filterable({ type: "text" }),
    nextDeliveryEta: col.timestamp().nullable().filterable(),
    unitPrice: col.number().nullable().filterable(),
    externalId: col.text().nullable().filterable(),
    lastSyncedAt: col.timestamp().nullable().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

export type VariantRow = RowOf<typeof VARIANTS>;

export const toVariant = (row: VariantRow): GarmentVariant => VARIANTS.read(row);

/** The stock figures of a variant row, as the stock rules take them. */
export function stockOf(row: VariantRow): Stock {
  return {
    stockOnHand: row.stock_on_hand,
    stockReserved: row.stock_reserved,
    stockByLocation: row.stock_by_location,
  };
}

/** The variant (locked for the rest of the transaction), or 404 when the organisation has none. */
export const lockVariant = (
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<VariantRow> => VARIANTS.lock(tx, organizationId, id);

/** The integrator's id of a variant, held once per organisation (409 naming the holder). */
export const VARIANT_EXTERNAL_ID = externalIdKey(VARIANTS);

/** The variant's row, or 404 when the organisation has none. */
export async function findVariantRow(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<VariantRow> {
  const row = await VARIANTS.get(sql, organizationId, id);
  return row;
}

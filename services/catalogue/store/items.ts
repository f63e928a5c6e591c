import postgres from "postgres";
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { externalIdKey, type HeldKey, holdingKeys } from "@printshop/shared/db/held-keys";
import {
  type CATALOGUE_SORT_FIELDS,
  type CreateCatalogueItemBody,
  GARMENT_SOURCES,
  type GarmentCatalogueItem,
  ListCatalogueItemsQuery,
  type UpdateCatalogueItemBody,
} from "@printshop/shared/contracts/catalogue";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { cursorPage, type CursorScope, listSpec } from "@printshop/shared/db/pages";
import { conflict } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { followItemStyleCode } from "./variants.ts";

/** The catalogue_items table: each field of GarmentCatalogueItem, in the order it answers them. */
const ITEMS = defineTable({
  name: "catalogue_items",
  tenant: true,
  noun: "Catalogue item",
  columns: {
    id: col.uuid(),
    styleCode: col.text().filterable(),
    name: col.text().filterable(),
    brand: col.text().nullable().filterable(),
    description: col.text().nullable(),
    category: col.text().nullable().filterable(),
    supplierVendorId: col.uuid().nullable().filterable(),
    fabric: col.text().nullable().filterable(),
    weightGsm: col.integer().nullable().filterable(),
    images: col.textArray(),
    isDiscontinued: col.boolean().filterable(),
    externalId: col.text().nullable().filterable(),
    source: col.enum(GARMENT_SOURCES).filterable({ type: "text" }),
    buyPrice: col.number().nullable().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type ItemRow = RowOf<typeof ITEMS>;

const toItem = (row: ItemRow): GarmentCatalogueItem => ITEMS.read(row);

/**
 * The keys the organisation holds once among its items: a style code (its own key for an item)
 * and an integrator's external id. A second one is a 409 naming the item that holds it.
 */
const STYLE_CODE: HeldKey = {
  table: ITEMS.name,
  column: "style_code",
  index: "catalogue_items_organization_id_style_code_key",
  field: "styleCode",
  noun: "catalogue item",
};
const ITEM_EXTERNAL_ID = externalIdKey(ITEMS);

const heldBy = (
  input: { styleCode?: string | undefined; externalId?: string | null | undefined },
): { key: HeldKey; value: string | null | undefined }[] => [
  { key: STYLE_CODE, value: input.styleCode },
  { key: ITEM_EXTERNAL_ID, value: input.externalId },
];

export async function createItem(
  sql: Sql,
  organizationId: string,
  input: CreateCatalogueItemBody,
): Promise<GarmentCatalogueItem> {
  const write = (): Promise<GarmentCatalogueItem> =>
    transaction(sql, async (tx) => {
      const [row] = await tx<ItemRow[]>`
        INSERT INTO catalogue_items ${
        tx({ id: uuidv7(), organization_id: organizationId, ...changedColumns(input) })
      }
        RETURNING ${tx.unsafe(ITEMS.select)}`;
      const item = toItem(row!);
      await writeEvent(tx, {
        organizationId,
        type: "garment_catalogue_item.created",
        aggregateId: item.id,
        payload: item,
      });
      return item;
    });
  return await holdingKeys(sql, organizationId, heldBy(input), write);
}

export async function findItem(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<GarmentCatalogueItem> {
  const row = await ITEMS.get(sql, organizationId, id);
  return toItem(row);
}

/** The catalogue's fields: what `filters` may name, and what `sortField` orders on. */
export const CATALOGUE_FIELDS = ITEMS.fields() satisfies FieldTable<
  typeof CATALOGUE_SORT_FIELDS[number]
>;

const CATALOGUE_LIST = listSpec(ListCatalogueItemsQuery, {
  from: "catalogue_items",
  select: ITEMS.select,
  fields: CATALOGUE_FIELDS,
  search: "catalogue_items_matching",
  order: { field: "createdAt", direction: "asc" },
});

/** One page of the catalogue in keyset order, and the signed cursor of the next. */
export async function listItems(
  sql: Sql,
  scope: CursorScope,
  query: ListCatalogueItemsQuery,
  pageSizeMax: number,
): Promise<{ items: GarmentCatalogueItem[]; nextCursor: string | null }> {
  return await cursorPage(
    sql,
    CATALOGUE_LIST,
    { where: sql`organization_id = ${scope.organizationId}`, query, pageSizeMax, scope },
    (rows: ItemRow[]) => rows.map(toItem),
  );
}

export async function updateItem(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateCatalogueItemBody,
): Promise<GarmentCatalogueItem> {
  const write = (): Promise<GarmentCatalogueItem> =>
    transaction(sql, async (tx) => {
      const current = await ITEMS.lock(tx, organizationId, id);
      const changes = changedColumns(input);
      if (Object.keys(changes).length === 0) return toItem(current);
      const [row] = await tx<ItemRow[]>`
        UPDATE catalogue_items SET ${tx(changes)}, updated_at = now()
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${tx.unsafe(ITEMS.select)}`;
      const item = toItem(row!);
      await writeEvent(tx, {
        organizationId,
        type: "garment_catalogue_item.updated",
        aggregateId: item.id,
        payload: item,
      });
      // In the same transaction, under the item's lock: no one sees the item's new code beside
      // variants that still show the old one, and no variant is created from the old one.
      if (row!.style_code !== current.style_code) {
        await followItemStyleCode(tx, organizationId, id, row!.style_code);
      }
      return item;
    });
  return await holdingKeys(sql, organizationId, heldBy(input), write);
}

/** True when the error is a foreign-key violation (23503): something still points at the row. */
function isStillReferenced(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.code === "23503";
}

/**
 * Deletes an item. One with variants needs `cascade` (they go with it, each with its event);
 * one that pre-built items use is kept (409) whatever is asked.
 */
export async function deleteItem(
  sql: Sql,
  organizationId: string,
  id: string,
  cascade: boolean,
): Promise<GarmentCatalogueItem> {
  try {
    return await transaction(sql, async (tx) => {
      const current = await ITEMS.lock(tx, organizationId, id);
      const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
        SELECT count(*)::int AS count FROM garment_variants
        WHERE organization_id = ${organizationId} AND garment_catalogue_item_id = ${id}`;
      if (count > 0 && !cascade) {
        throw conflict(
          `Catalogue item "${id}" has ${count} variant${count === 1 ? "" : "s"}; delete ` +
            `them first, or ask with cascade=true to delete them with it`,
        );
      }
      const variants = await tx<{ id: string }[]>`
        DELETE FROM garment_variants
        WHERE organization_id = ${organizationId} AND garment_catalogue_item_id = ${id}
        RETURNING id`;
      await writeEvents(
        tx,
        variants.map((variant) => ({
          organizationId,
          type: "garment_variant.deleted" as const,
          aggregateId: variant.id,
          payload: { id: variant.id, garmentCatalogueItemId: id },
        })),
      );
      await tx`DELETE FROM catalogue_items WHERE organization_id = ${organizationId} AND id = ${id}`;
      const item = toItem(current);
      await writeEvent(tx, {
        organizationId,
        type: "garment_catalogue_item.deleted",
        aggregateId: item.id,
        payload: item,
      });
      return item;
    });
  } catch (error) {
    if (!isStillReferenced(error)) throw error;
    throw conflict(
      `Catalogue item "${id}" is used by pre-built items; point them at another garment ` +
        `before deleting it`,
    );
  }
}

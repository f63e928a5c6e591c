import { type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import { isUniqueViolation, jsonParam } from "@printshop/shared/db";
import { holdingKeys, keyTaken, violates } from "@printshop/shared/db/held-keys";
import {
  type BulkVariantRow,
  type GARMENT_VARIANT_SORT_FIELDS,
  type GarmentVariant,
  ListGarmentVariantsQuery,
  type UpdateGarmentVariantBody,
} from "@printshop/shared/contracts/catalogue";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import {
  ApiError,
  conflict,
  type ErrorDetail,
  invalid,
  validationError,
} from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { InternalContext } from "@printshop/shared/internal-context";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { type LedgerEntry, openingStock, type Stock, stocktake } from "../domain/stock.ts";
import { announceAdjustments, type LedgerWrite, recordLedger } from "./stock.ts";
import { sizeKey } from "./settings.ts";
import {
  findVariantRow,
  lockVariant,
  stockOf,
  toVariant,
  VARIANT_EXTERNAL_ID,
  type VariantRow,
  VARIANTS,
} from "./variant_rows.ts";

export { findVariantRow, lockVariant, stockOf };

const keyOf = (row: { garmentCatalogueItemId: string; color: string; size: string }): string =>
  JSON.stringify([row.garmentCatalogueItemId, row.color, row.size]);

/**
 * Creates variants in one transaction: every row is checked first (its item is one of the
 * organisation's, its colour and size are new for that item, in the request and in the table,
 * its stock figures agree), and a problem anywhere writes nothing and names each row. Opening
 * stock goes to the ledger; each variant gets its `garment_variant.created` event.
 */
export async function bulkCreateVariants(
  sql: Sql,
  auth: InternalContext,
  field: "input" | "items",
  given: readonly BulkVariantRow[],
  bulkMaxRows: number,
): Promise<GarmentVariant[]> {
  if (given.length > bulkMaxRows) {
    throw validationError(
      field,
      `At most ${bulkMaxRows} rows in one call (BULK_MAX_ROWS); got ${given.length}`,
    );
  }
  return await createVariants(sql, auth, given, {
    row: (index) => `${field}.${index}`,
    field: (index, name) => `${field}.${index}.${name}`,
  });
}

/**
 * Creates one variant, with the same checks as a row of a bulk create, each problem named by its
 * field; a variant the item already has in that colour and size is a conflict (409) naming it.
 */
export async function createVariant(
  sql: Sql,
  auth: InternalContext,
  given: BulkVariantRow,
): Promise<GarmentVariant> {
  const [variant] = await holdingKeys(
    sql,
    auth.organizationId,
    [{ key: VARIANT_EXTERNAL_ID, value: given.externalId }],
    () => createVariants(sql, auth, [given], { row: null, field: (_index, name) => name }),
  );
  return variant!;
}

/** Where a row's problems are reported: `input.3.size` in a bulk create, `size` in a single one. */
interface RowPaths {
  /** The row itself; null for a single create, whose taken colour and size are a conflict. */
  row: ((index: number) => string) | null;
  field(index: number, name: string): string;
}

async function createVariants(
  sql: Sql,
  auth: InternalContext,
  given: readonly BulkVariantRow[],
  at: RowPaths,
): Promise<GarmentVariant[]> {
  // Ids are compared as text below: one spelling of each, as the database writes them.
  const rows = given.map((row) => ({
    ...row,
    garmentCatalogueItemId: row.garmentCatalogueItemId.toLowerCase(),
  }));
  const organizationId = auth.organizationId;
  const problems: ErrorDetail[] = [];
  const stocks: { stock: Stock; ledger: LedgerEntry[] }[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const opening = openingStock(row, at.field(index, ""));
    if ("problem" in opening) problems.push(opening.problem);
    else stocks.push(opening);
    const first = seen.get(keyOf(row));
    if (first !== undefined && at.row !== null) {
      problems.push({
        path: at.row(index),
        message:
          `Repeats row ${first}: the same item, colour "${row.color}" and size "${row.size}"`,
      });
    } else seen.set(keyOf(row), index);
  });
  try {
    return await transaction(sql, async (tx) => {
      const itemIds = [...new Set(rows.map((row) => row.garmentCatalogueItemId))];
      // FOR SHARE: an item cannot be deleted while its new variants are being written.
      const items = await tx<{ id: string; style_code: string }[]>`
        SELECT id, style_code FROM catalogue_items
        WHERE organization_id = ${organizationId} AND id = ANY(${itemIds}::uuid[]) FOR SHARE`;
      const styleOf = new Map(items.map((item) => [item.id, item.style_code]));
      rows.forEach((row, index) => {
        if (!styleOf.has(row.garmentCatalogueItemId)) {
          problems.push({
            path: at.field(index, "garmentCatalogueItemId"),
            message: `No catalogue item "${row.garmentCatalogueItemId}" in this organisation`,
          });
        }
      });
      const existing = await tx<{ id: string; item: string; color: string; size: string }[]>`
        SELECT v.id, v.garment_catalogue_item_id AS item, v.color, v.size
        FROM garment_variants v
        JOIN unnest(${rows.map((r) => r.garmentCatalogueItemId)}::uuid[],
                    ${rows.map((r) => r.color)}::text[],
                    ${rows.map((r) => r.size)}::text[]) AS k(item, color, size)
          ON v.garment_catalogue_item_id = k.item AND v.color = k.color AND v.size = k.size
        WHERE v.organization_id = ${organizationId}`;
      const taken = new Map(
        existing.map((
          v,
        ) => [keyOf({ garmentCatalogueItemId: v.item, color: v.color, size: v.size }), v.id]),
      );
      await checkExternalIds(tx, organizationId, rows, at, problems);
      rows.forEach((row, index) => {
        const id = taken.get(keyOf(row));
        if (id === undefined) return;
        const message = `The item already has a variant in colour "${row.color}" and size ` +
          `"${row.size}" (${id})`;
        if (at.row === null) throw conflict(message);
        problems.push({ path: at.row(index), message });
      });
      if (problems.length > 0) {
        throw invalid(
          at.row === null ? "variant" : "variants",
          problems.sort((a, b) => rowIndex(a) - rowIndex(b)),
        );
      }
      const records = rows.map((row, index) => {
        const { stock } = stocks[index]!;
        return {
          id: uuidv7(),
          organization_id: organizationId,
          garment_catalogue_item_id: row.garmentCatalogueItemId,
          style_code: row.styleCode ?? styleOf.get(row.garmentCatalogueItemId)!,
          style_code_is_own: row.styleCode !== undefined,
          color: row.color,
          size: row.size,
          stock_code: row.stockCode ?? null,
          color_hex: row.colorHex ?? null,
          country_of_manufacture: row.countryOfManufacture ?? null,
          stock_on_hand: stock.stockOnHand,
          stock_reserved: stock.stockReserved,
          supplier_stock: row.supplierStock ?? 0,
          stock_by_location: stock.stockByLocation,
          future_availability: row.futureAvailability ?? [],
          is_discontinued: row.isDiscontinued ?? false,
          images: row.images ?? [],
          source: row.source ?? "manual",
          next_delivery_eta: row.nextDeliveryEta ?? null,
          unit_price: row.unitPrice ?? null,
          external_id: row.externalId ?? null,
          last_synced_at: row.lastSyncedAt ?? null,
          size_key: sizeKey(row.size),
        };
      });
      const inserted = await tx<VariantRow[]>`
        INSERT INTO garment_variants (${tx.unsafe(INSERT.columns)})
        SELECT ${tx.unsafe(INSERT.columns)}
        FROM jsonb_to_recordset(${jsonParam(tx, records)}::jsonb) AS r(${tx.unsafe(INSERT.types)})
        RETURNING ${tx.unsafe(VARIANTS.select)}`;
      const byId = new Map(inserted.map((row) => [row.id, toVariant(row)]));
      const variants = records.map((record) => byId.get(record.id)!);
      await recordLedger(
        tx,
        auth,
        "opening",
        variants.map((variant, index): LedgerWrite => ({
          garmentVariantId: variant.id,
          entries: stocks[index]!.ledger,
        })),
      );
      await writeEvents(
        tx,
        variants.map((variant) => ({
          organizationId,
          type: "garment_variant.created" as const,
          aggregateId: variant.id,
          payload: variant,
        })),
      );
      return variants;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    if (violates(error, VARIANT_EXTERNAL_ID)) {
      // A single create is answered by holdingKeys, naming the variant that took it.
      if (at.row === null) throw error;
      throw await externalIdsTakenMeanwhile(sql, organizationId, rows, at);
    }
    if (at.row === null) {
      // A single create that lost a race to another: named as if it had come second.
      const row = rows[0]!;
      const [taken] = await read(sql, (q) =>
        q<{ id: string }[]>`
          SELECT id FROM garment_variants
          WHERE organization_id = ${organizationId}
            AND garment_catalogue_item_id = ${row.garmentCatalogueItemId}
            AND color = ${row.color} AND size = ${row.size}`);
      throw conflict(
        `The item already has a variant in colour "${row.color}" and size "${row.size}"` +
          (taken ? ` (${taken.id})` : ""),
      );
    }
    throw conflict(
      "Another request created a variant with the same item, colour and size meanwhile; " +
        "nothing was written, send the rows again",
    );
  }
}

/**
 * Rows whose external id another variant of the organisation holds, or an earlier row of the
 * same request gives: a single create is a 409 naming the holder; a bulk one lists each row.
 */
async function checkExternalIds(
  tx: Queryable,
  organizationId: string,
  rows: readonly { externalId?: string | null | undefined }[],
  at: RowPaths,
  problems: ErrorDetail[],
): Promise<void> {
  const given = rows.flatMap((row) => row.externalId ? [row.externalId] : []);
  if (given.length === 0) return;
  const held = new Map(
    (await tx<{ id: string; external_id: string }[]>`
      SELECT id, external_id FROM garment_variants
      WHERE organization_id = ${organizationId} AND external_id = ANY(${given}::text[])`)
      .map((v) => [v.external_id, v.id]),
  );
  const first = new Map<string, number>();
  rows.forEach((row, index) => {
    if (!row.externalId) return;
    const holder = held.get(row.externalId);
    if (holder !== undefined) {
      if (at.row === null) throw keyTaken(VARIANT_EXTERNAL_ID, row.externalId, holder);
      problems.push({
        path: at.field(index, "externalId"),
        message: `Already taken by garment variant ${holder}`,
      });
    } else if (first.has(row.externalId)) {
      problems.push({
        path: at.field(index, "externalId"),
        message: `Repeats row ${first.get(row.externalId)}'s externalId`,
      });
    } else first.set(row.externalId, index);
  });
}

/**
 * A bulk create that another request beat to one of its external ids (between the check and the
 * write): 409, each such row named with the variant that now holds its id.
 */
async function externalIdsTakenMeanwhile(
  sql: Sql,
  organizationId: string,
  rows: readonly { externalId?: string | null | undefined }[],
  at: RowPaths,
): Promise<ApiError> {
  const given = rows.flatMap((row) => row.externalId ? [row.externalId] : []);
  const held = new Map(
    (await read(sql, (q) =>
      q<{ id: string; external_id: string }[]>`
        SELECT id, external_id FROM garment_variants
        WHERE organization_id = ${organizationId} AND external_id = ANY(${given}::text[])`))
      .map((v) => [v.external_id, v.id]),
  );
  const details = rows.flatMap((row, index) => {
    const holder = row.externalId ? held.get(row.externalId) : undefined;
    return holder === undefined ? [] : [{
      path: at.field(index, "externalId"),
      message: `Already taken by garment variant ${holder}`,
    }];
  });
  return new ApiError(
    "conflict",
    "Another request took an external id of these rows meanwhile; nothing was written",
    details,
  );
}

/** `input.12.size` → 12, for listing problems in row order. */
const rowIndex = (detail: ErrorDetail): number => Number(detail.path.split(".")[1] ?? 0);

/** What a bulk create writes: the resource's columns but its times, and three it does not show. */
const INSERT = VARIANTS.insertable(["createdAt", "updatedAt"], [
  "organization_id uuid",
  "size_key text",
  "style_code_is_own boolean",
]);

export async function findVariant(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<GarmentVariant> {
  return toVariant(await findVariantRow(sql, organizationId, id));
}

/** Stock fields a PATCH hands to the stocktake rule rather than writing them as they are. */
const STOCK_FIELDS = [
  "stockOnHand",
  "stockReserved",
  "stockByLocation",
  "futureAvailability",
] as const;

/**
 * Changes a variant. New stock figures are a stocktake: the ledger gets a row for each
 * difference (with the caller's credential), and each its stock_adjusted event.
 */
export async function updateVariant(
  sql: Sql,
  auth: InternalContext,
  id: string,
  input: UpdateGarmentVariantBody,
): Promise<GarmentVariant> {
  return await holdingKeys(
    sql,
    auth.organizationId,
    [{ key: VARIANT_EXTERNAL_ID, value: input.externalId }],
    () => changeVariant(sql, auth, id, input),
  );
}

async function changeVariant(
  sql: Sql,
  auth: InternalContext,
  id: string,
  input: UpdateGarmentVariantBody,
): Promise<GarmentVariant> {
  const organizationId = auth.organizationId;
  try {
    return await transaction(sql, async (tx) => {
      const row = await lockVariant(tx, organizationId, id);
      const counted = stocktake(stockOf(row), input);
      if ("problem" in counted) {
        throw validationError(counted.problem.path, counted.problem.message);
      }
      const changes = changedColumns(input, [...STOCK_FIELDS]);
      if (input.size !== undefined) changes.size_key = sizeKey(input.size);
      // A code given is the variant's own from now on, even one equal to its item's.
      if (input.styleCode !== undefined) changes.style_code_is_own = true;
      if (input.futureAvailability !== undefined) {
        changes.future_availability = jsonParam(tx, input.futureAvailability);
      }
      const stock = counted.stock;
      if (
        stock.stockOnHand !== row.stock_on_hand || stock.stockReserved !== row.stock_reserved ||
        input.stockByLocation !== undefined
      ) {
        changes.stock_on_hand = stock.stockOnHand;
        changes.stock_reserved = stock.stockReserved;
        changes.stock_by_location = jsonParam(tx, stock.stockByLocation);
      }
      if (Object.keys(changes).length === 0) return toVariant(row);
      const [updated] = await tx<VariantRow[]>`
        UPDATE garment_variants SET ${tx(changes)}, updated_at = clock_timestamp()
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${tx.unsafe(VARIANTS.select)}`;
      const variant = toVariant(updated!);
      await writeEvent(tx, {
        organizationId,
        type: "garment_variant.updated",
        aggregateId: variant.id,
        payload: variant,
      });
      const adjustments = await recordLedger(tx, auth, "stocktake", [
        { garmentVariantId: id, entries: counted.ledger },
      ]);
      await announceAdjustments(tx, organizationId, adjustments);
      return variant;
    });
  } catch (error) {
    if (!isUniqueViolation(error) || violates(error, VARIANT_EXTERNAL_ID)) throw error;
    throw conflict(
      `The item already has a variant in colour "${input.color ?? "…"}" and size ` +
        `"${input.size ?? "…"}"`,
    );
  }
}

export async function deleteVariant(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<{ id: string }> {
  return await transaction(sql, async (tx) => {
    const row = await lockVariant(tx, organizationId, id);
    await tx`DELETE FROM garment_variants WHERE organization_id = ${organizationId} AND id = ${id}`;
    await writeEvent(tx, {
      organizationId,
      type: "garment_variant.deleted",
      aggregateId: id,
      payload: { id, garmentCatalogueItemId: row.garment_catalogue_item_id },
    });
    return { id };
  });
}

/**
 * How many variants one statement of `followItemStyleCode` rewrites and one event insert
 * announces: an item with many variants changes them in batches of this size, so no statement
 * or event insert grows with the item (10,000 variants are ten of each, in one transaction).
 */
export const STYLE_CODE_BATCH = 1000;

/**
 * Gives the item's new style code to every variant of it that has no code of its own, in the
 * item's transaction (the caller holds the item's row lock, so no variant of it is created
 * meanwhile from the old code), with a `garment_variant.updated` for each variant that changed.
 * Variants are locked in id order, batch by batch; one whose own PATCH gave it a code meanwhile
 * is re-read under its lock and left alone. Returns how many changed.
 */
export async function followItemStyleCode(
  tx: Queryable,
  organizationId: string,
  itemId: string,
  styleCode: string,
  batchSize: number = STYLE_CODE_BATCH,
): Promise<number> {
  let changed = 0;
  // Each batch starts after the last id of the one before, so no variant is read twice.
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const rows = await tx<VariantRow[]>`
      WITH batch AS (
        SELECT id FROM garment_variants
        WHERE organization_id = ${organizationId} AND garment_catalogue_item_id = ${itemId}
          AND NOT style_code_is_own AND style_code <> ${styleCode} AND id > ${after}
        ORDER BY id LIMIT ${batchSize}
        FOR UPDATE
      )
      UPDATE garment_variants v SET style_code = ${styleCode}, updated_at = clock_timestamp()
      FROM batch WHERE v.organization_id = ${organizationId} AND v.id = batch.id
      RETURNING ${tx.unsafe(VARIANTS.selectAs("v"))}`;
    // RETURNING has no order: events follow the ids'.
    const variants = rows.map(toVariant).sort((a, b) => a.id < b.id ? -1 : 1);
    await writeEvents(
      tx,
      variants.map((variant) => ({
        organizationId,
        type: "garment_variant.updated" as const,
        aggregateId: variant.id,
        payload: variant,
      })),
    );
    changed += variants.length;
    // Only an empty batch is the last: a short one may have lost a variant that was given its
    // own code while this waited for its lock, and says nothing about the ids after it.
    if (variants.length === 0) return changed;
    after = variants.at(-1)!.id;
  }
}

/** The variant list's fields: what `filters` may name, and what `sortField` orders on. */
export const GARMENT_VARIANT_FIELDS = VARIANTS.fields("v", {
  inStock: { type: "boolean", column: "(v.stock_on_hand - v.stock_reserved > 0)" },
}) satisfies FieldTable<typeof GARMENT_VARIANT_SORT_FIELDS[number]>;

const GARMENT_VARIANT_LIST = listSpec(ListGarmentVariantsQuery, {
  from: "garment_variants v LEFT JOIN catalogue_settings s " +
    "ON s.organization_id = v.organization_id",
  select: VARIANTS.selectAs("v"),
  id: "v.id",
  fields: GARMENT_VARIANT_FIELDS,
  search: "garment_variants_matching",
  first: "v.style_code ASC, v.color ASC",
  order: { field: "size", direction: "asc" },
});

export async function listVariants(
  sql: Sql,
  organizationId: string,
  query: ListGarmentVariantsQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<GarmentVariant>> {
  return await offsetPage(
    sql,
    GARMENT_VARIANT_LIST,
    { where: sql`v.organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: VariantRow[]) => rows.map(toVariant),
  );
}

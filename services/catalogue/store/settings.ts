import { type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import {
  type CatalogueSettings,
  DEFAULT_SIZE_ORDER,
  type UpdateCatalogueSettingsBody,
} from "@printshop/shared/contracts/catalogue";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { writeEvent } from "@printshop/shared/outbox";

/**
 * The catalogue_settings table: one row per organisation, keyed by organization_id (it has no
 * id, so the declaration's find and lock by id do not apply), written when the organisation first
 * changes its settings.
 */
const SETTINGS = defineTable({
  name: "catalogue_settings",
  tenant: true,
  noun: "Catalogue settings",
  columns: {
    sizeOrder: col.textArray(),
    allowNegativeStock: col.boolean(),
    updatedAt: col.timestamp(),
  },
});

type SettingsRow = RowOf<typeof SETTINGS>;

const DEFAULTS: CatalogueSettings = {
  sizeOrder: [...DEFAULT_SIZE_ORDER],
  allowNegativeStock: false,
  updatedAt: null,
};

const toSettings = (row: SettingsRow | undefined): CatalogueSettings =>
  row ? SETTINGS.read(row) : DEFAULTS;

/**
 * The organisation's catalogue settings; the defaults until it changes them. Given the pool, it
 * reads under the organisation (`read`): a statement sent straight to the pool sees no rows and
 * would answer the defaults.
 */
export async function readSettings(
  sql: Queryable,
  organizationId: string,
): Promise<CatalogueSettings> {
  return await read(sql, async (q) => {
    const [row] = await q<SettingsRow[]>`
      SELECT ${q.unsafe(SETTINGS.select)} FROM catalogue_settings
      WHERE organization_id = ${organizationId}`;
    return toSettings(row);
  });
}

/**
 * Changes the fields given and no others, in one statement: the upsert locks the organisation's
 * row and applies each given field to the row as it stands then, so two PATCHes of different
 * fields at the same moment both survive (reading the row first and writing every field back
 * lost one of them). The first change of an organisation inserts the row, the fields not given
 * taking their defaults. A PATCH that names no field writes nothing.
 */
export async function updateSettings(
  sql: Sql,
  organizationId: string,
  input: UpdateCatalogueSettingsBody,
): Promise<CatalogueSettings> {
  // Nothing named, nothing changed: no write, and no event for a change that did not happen.
  if (input.sizeOrder === undefined && input.allowNegativeStock === undefined) {
    return await readSettings(sql, organizationId);
  }
  return await transaction(sql, async (tx) => {
    const sizeOrder = input.sizeOrder ?? null;
    const sizeKeys = sizeOrder?.map(sizeKey) ?? null;
    const allowNegative = input.allowNegativeStock ?? null;
    const [row] = await tx<SettingsRow[]>`
      INSERT INTO catalogue_settings
        (organization_id, size_order, size_keys, allow_negative_stock)
      VALUES (
        ${organizationId},
        coalesce(${sizeOrder}::text[], ${DEFAULTS.sizeOrder}::text[]),
        coalesce(${sizeKeys}::text[], ${DEFAULTS.sizeOrder.map(sizeKey)}::text[]),
        coalesce(${allowNegative}::boolean, ${DEFAULTS.allowNegativeStock})
      )
      ON CONFLICT (organization_id) DO UPDATE SET
        size_order = coalesce(${sizeOrder}::text[], catalogue_settings.size_order),
        size_keys = coalesce(${sizeKeys}::text[], catalogue_settings.size_keys),
        allow_negative_stock = coalesce(${allowNegative}::boolean,
                                        catalogue_settings.allow_negative_stock),
        updated_at = now()
      RETURNING ${tx.unsafe(SETTINGS.select)}`;
    const settings = toSettings(row);
    await writeEvent(tx, {
      organizationId,
      type: "catalogue_settings.updated",
      aggregateId: organizationId,
      payload: settings,
    });
    return settings;
  });
}

/**
 * What a size label is matched on: upper-cased here, for the order's labels and for every
 * variant's size alike (PostgreSQL's upper() depends on the cluster's locale).
 */
export function sizeKey(size: string): string {
  return size.toUpperCase();
}

/**
 * How a list orders sizes: the organisation's size order (the defaults when it has none),
 * matched without regard to case, then sizes it does not list, alphabetically. A trusted SQL
 * expression over `v.size_key`, `v.size` and the settings row `s` the list joins.
 */
export const SIZE_SORT_KEY = `lpad(coalesce(array_position(
    coalesce(s.size_keys, ARRAY[${
  DEFAULT_SIZE_ORDER.map((size) => `'${sizeKey(size)}'`).join(",")
}]::text[]) , v.size_key), 99999)::text, 5, '0') || v.size`;

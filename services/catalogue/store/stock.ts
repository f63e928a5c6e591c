import { jsonParam, type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { CREDENTIAL_KINDS } from "@printshop/shared/contracts";
import {
  type CreateStockAdjustmentBody,
  ListStockAdjustmentsQuery,
  type STOCK_ADJUSTMENT_SORT_FIELDS,
  STOCK_REASONS,
  type StockAdjustment,
  type StockReason,
} from "@printshop/shared/contracts/catalogue";
import type { FieldTable } from "@printshop/shared/db/fields";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { conflict, validationError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller, InternalContext } from "@printshop/shared/internal-context";
import { writeEvents } from "@printshop/shared/outbox";
import { adjust, type LedgerEntry } from "../domain/stock.ts";
import { findVariantRow, lockVariant, stockOf } from "./variant_rows.ts";
import { readSettings } from "./settings.ts";

/** The stock_adjustments table: each field of StockAdjustment, in the order it answers them. */
const ADJUSTMENTS = defineTable({
  name: "stock_adjustments",
  tenant: true,
  noun: "Stock adjustment",
  references: { garment_variant_id: "garment_variants" },
  columns: {
    id: col.uuid(),
    garmentVariantId: col.uuid(),
    location: col.text().nullable().filterable(),
    delta: col.integer().filterable(),
    reason: col.enum(STOCK_REASONS).filterable({ type: "text" }),
    reference: col.text().nullable().filterable(),
    note: col.text().nullable(),
    stockOnHandAfter: col.integer(),
    locationQuantityAfter: col.integer().nullable(),
    credentialKind: col.enum(CREDENTIAL_KINDS),
    credentialId: col.text().filterable(),
    createdAt: col.timestamp().filterable(),
  },
});

type AdjustmentRow = RowOf<typeof ADJUSTMENTS>;

const toAdjustment = (row: AdjustmentRow): StockAdjustment => ADJUSTMENTS.read(row);

/** What a ledger write inserts: every column but the time, stamped by the statement itself. */
const LEDGER_INSERT = ADJUSTMENTS.insertable(["createdAt"], ["organization_id uuid"]);

/** One record of that insert: a column the table gains and a write leaves out fails to compile. */
type LedgerRecord = Omit<AdjustmentRow, "created_at"> & { organization_id: string };

/** Ledger rows for one reason: which variant, and its entries in the order they happened. */
export interface LedgerWrite {
  garmentVariantId: string;
  entries: readonly LedgerEntry[];
}

/**
 * Writes ledger rows in one statement, each stamped with the credential that made the change.
 * Returns them in the order given. The time is the clock's when the row is written, not the
 * transaction's start: callers hold the variant's lock by then, so "newest first" is the order
 * the changes were made in, whatever order their transactions began in.
 */
export async function recordLedger(
  tx: Queryable,
  auth: Caller & { organizationId: string },
  reason: StockReason,
  writes: readonly LedgerWrite[],
  details: { reference?: string | null; note?: string | null } = {},
): Promise<StockAdjustment[]> {
  const rows = writes.flatMap((write) =>
    write.entries.map((entry): LedgerRecord => ({
      id: uuidv7(),
      organization_id: auth.organizationId,
      garment_variant_id: write.garmentVariantId,
      location: entry.location,
      delta: entry.delta,
      reason,
      reference: details.reference ?? null,
      note: details.note ?? null,
      stock_on_hand_after: entry.stockOnHandAfter,
      location_quantity_after: entry.locationQuantityAfter,
      credential_kind: auth.credentialKind,
      credential_id: auth.credentialId,
    }))
  );
  if (rows.length === 0) return [];
  const written = await tx<AdjustmentRow[]>`
    INSERT INTO stock_adjustments (${tx.unsafe(LEDGER_INSERT.columns)}, created_at)
    SELECT ${tx.unsafe(LEDGER_INSERT.columns)}, clock_timestamp()
    FROM jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) AS r(${tx.unsafe(LEDGER_INSERT.types)})
    RETURNING ${tx.unsafe(ADJUSTMENTS.select)}`;
  const byId = new Map(written.map((row) => [row.id, row]));
  return rows.map((row) => toAdjustment(byId.get(row.id)!));
}

/** The stock_adjusted events of ledger rows, one per row. */
export async function announceAdjustments(
  tx: Queryable,
  organizationId: string,
  adjustments: readonly StockAdjustment[],
): Promise<void> {
  await writeEvents(
    tx,
    adjustments.map((adjustment) => ({
      organizationId,
      type: "garment_variant.stock_adjusted" as const,
      aggregateId: adjustment.garmentVariantId,
      payload: adjustment,
    })),
  );
}

/**
 * Adds or takes away stock. The variant's row is locked for the transaction, so concurrent
 * adjustments queue behind one another and none is lost; a change the stock rules refuse is a
 * 409 (taking a count below zero or below what is reserved) or a 400 (a location is needed).
 */
export async function adjustStock(
  sql: Sql,
  auth: InternalContext,
  variantId: string,
  input: CreateStockAdjustmentBody,
): Promise<StockAdjustment> {
  return await transaction(sql, async (tx) => {
    const row = await lockVariant(tx, auth.organizationId, variantId);
    const { allowNegativeStock } = await readSettings(tx, auth.organizationId);
    const outcome = adjust(
      stockOf(row),
      { location: input.location ?? null, delta: input.delta },
      allowNegativeStock,
    );
    if ("refused" in outcome) {
      const refusal = outcome.refused;
      throw refusal.kind === "conflict"
        ? conflict(refusal.message)
        : validationError(refusal.problem.path, refusal.problem.message);
    }
    await tx`
      UPDATE garment_variants SET
        stock_on_hand = ${outcome.stock.stockOnHand},
        stock_by_location = ${jsonParam(tx, outcome.stock.stockByLocation)},
        updated_at = clock_timestamp()
      WHERE organization_id = ${auth.organizationId} AND id = ${variantId}`;
    const [adjustment] = await recordLedger(
      tx,
      auth,
      input.reason,
      [{ garmentVariantId: variantId, entries: [outcome.entry] }],
      input,
    );
    await announceAdjustments(tx, auth.organizationId, [adjustment!]);
    return adjustment!;
  });
}

/** The ledger's fields: what `filters` may name, and what `sortField` orders on. */
export const STOCK_ADJUSTMENT_FIELDS = ADJUSTMENTS.fields() satisfies FieldTable<
  typeof STOCK_ADJUSTMENT_SORT_FIELDS[number]
>;

const STOCK_ADJUSTMENT_LIST = listSpec(ListStockAdjustmentsQuery, {
  from: "stock_adjustments",
  select: ADJUSTMENTS.select,
  fields: STOCK_ADJUSTMENT_FIELDS,
  order: { field: "createdAt", direction: "desc" },
});

/** One page of a variant's ledger, newest first unless asked otherwise. */
export async function listAdjustments(
  sql: Sql,
  organizationId: string,
  variantId: string,
  query: ListStockAdjustmentsQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<StockAdjustment>> {
  await findVariantRow(sql, organizationId, variantId);
  return await offsetPage(
    sql,
    STOCK_ADJUSTMENT_LIST,
    {
      where: sql`organization_id = ${organizationId} AND garment_variant_id = ${variantId}`,
      query,
      pageSizeMax,
    },
    (rows: AdjustmentRow[]) => rows.map(toAdjustment),
  );
}

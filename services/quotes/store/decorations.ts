import type { Sql, TransactionSql } from "@printshop/shared/db";
import type {
  CreateQuoteDecorationBody,
  UpdateQuoteDecorationBody,
} from "@printshop/shared/contracts";
import { ApiError, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { insertAt } from "../domain/reorder.ts";
import type { MarkupLane } from "../domain/markup.ts";
import { type LockedQuote, lockQuoteForEdit, recomputeQuote } from "./aggregate.ts";
import { DECORATION_COLUMNS, type DecorationRow, toDecoration } from "./item_rows.ts";
import { compactGroup, placeRow } from "./row_order.ts";

/** Body fields other than `sortOrder`, each stored in one column. */
type DecorationField = Exclude<keyof UpdateQuoteDecorationBody, "sortOrder">;

const COLUMN_OF = {
  decorationItemId: "decoration_item_id",
  method: "method",
  position: "position",
  quantity: "quantity",
  unitCost: "unit_cost",
  setupCost: "setup_cost",
  baseUnitCost: "base_unit_cost",
  baseSetupCost: "base_setup_cost",
  includeSetupCost: "include_setup_cost",
  markupType: "markup_type",
  markupValue: "markup_value",
  markupSource: "markup_source",
  markupGroupId: "markup_group_id",
  setupMarkupType: "setup_markup_type",
  setupMarkupValue: "setup_markup_value",
  setupMarkupSource: "setup_markup_source",
  setupMarkupGroupId: "setup_markup_group_id",
  rollUp: "roll_up",
  rollUpSetup: "roll_up_setup",
  showOnDocuments: "show_on_documents",
  description: "description",
  widthCm: "width_cm",
  lengthCm: "length_cm",
  necklineDropCm: "neckline_drop_cm",
  screenCount: "screen_count",
  screenMeshGrade: "screen_mesh_grade",
  colourCount: "colour_count",
  colours: "colours",
  specialInstructions: "special_instructions",
  artworkFileUrl: "artwork_file_url",
  separationFileUrl: "separation_file_url",
} as const satisfies Record<DecorationField, keyof DecorationRow>;

type SettableColumn = typeof COLUMN_OF[DecorationField];
const SETTABLE_COLUMNS = Object.values(COLUMN_OF) as SettableColumn[];

/** What a write stores: the row's own values, where numeric columns may also be JS numbers. */
type DecorationValues = {
  [K in SettableColumn]: DecorationRow[K] | (DecorationRow[K] extends string ? number : never);
};

/** A change to any of these re-bands the decoration's `group` lanes (pricing.md, Decorations). */
const REBAND_FIELDS: readonly DecorationField[] = [
  "quantity",
  "unitCost",
  "setupCost",
  "markupSource",
  "markupGroupId",
  "setupMarkupSource",
  "setupMarkupGroupId",
  // The unit lane's default group is chosen by method.
  "method",
];

/** Defaults of a new decoration (the columns' defaults, spelled out). */
function defaults(quantity: number): DecorationValues {
  return {
    decoration_item_id: null,
    method: null,
    position: null,
    quantity,
    unit_cost: 0,
    setup_cost: 0,
    base_unit_cost: 0,
    base_setup_cost: 0,
    include_setup_cost: false,
    markup_type: null,
    markup_value: null,
    markup_source: "manual",
    markup_group_id: null,
    setup_markup_type: null,
    setup_markup_value: null,
    setup_markup_source: "manual",
    setup_markup_group_id: null,
    roll_up: false,
    roll_up_setup: false,
    show_on_documents: true,
    description: null,
    width_cm: null,
    length_cm: null,
    neckline_drop_cm: null,
    screen_count: null,
    screen_mesh_grade: null,
    colour_count: null,
    colours: [],
    special_instructions: null,
    artwork_file_url: null,
    separation_file_url: null,
  };
}

function valuesOf(row: DecorationRow): DecorationValues {
  const values = {} as Record<SettableColumn, unknown>;
  for (const column of SETTABLE_COLUMNS) values[column] = row[column];
  return values as DecorationValues;
}

/** The given body fields laid over `base`; absent fields keep their value. */
function apply(base: DecorationValues, input: UpdateQuoteDecorationBody): DecorationValues {
  const values: Record<string, unknown> = { ...base };
  for (const field of Object.keys(COLUMN_OF) as DecorationField[]) {
    const value = input[field];
    if (value !== undefined) values[COLUMN_OF[field]] = value;
  }
  return values as DecorationValues;
}

type Param = string | number | boolean | null | ReturnType<TransactionSql["json"]>;

/** Column → parameter for postgres.js helpers; `colours` goes as jsonb. */
function toParams(tx: TransactionSql, values: DecorationValues): Record<string, Param> {
  return { ...values, colours: tx.json(values.colours) };
}

/** The lane a markup group must belong to, per field that names one. */
const LANE_OF_FIELD: readonly (readonly ["markupGroupId" | "setupMarkupGroupId", MarkupLane])[] = [
  ["markupGroupId", "decoration"],
  ["setupMarkupGroupId", "setup"],
];

/**
 * A markup group named by the body must be one of this organisation's groups of the lane it is
 * named for (unit lane: `decoration`, setup lane: `setup`); otherwise 400 naming the field.
 */
async function assertMarkupGroups(
  tx: TransactionSql,
  organizationId: string,
  input: UpdateQuoteDecorationBody,
): Promise<void> {
  for (const [field, lane] of LANE_OF_FIELD) {
    const id = input[field];
    if (id === undefined || id === null) continue;
    const [found] = await tx<{ lane: MarkupLane }[]>`
      SELECT lane FROM markup_groups WHERE organization_id = ${organizationId} AND id = ${id}`;
    if (found?.lane === lane) continue;
    const message = found
      ? `Must be a ${lane} markup group, not a ${found.lane} one`
      : `Must be a ${lane} markup group of this organisation`;
    throw new ApiError(
      "validation_error",
      `Invalid request body: "${field}" m${message.slice(1)}`,
      [
        { path: field, message },
      ],
    );
  }
}

/** The sortOrders the group's lines and decorations hold now (one shared sequence). */
async function sortOrdersOfGroup(tx: TransactionSql, groupId: string): Promise<number[]> {
  const rows = await tx<{ sort_order: number }[]>`
    SELECT sort_order FROM quote_lines WHERE quote_group_id = ${groupId}
    UNION ALL
    SELECT sort_order FROM quote_decorations WHERE quote_group_id = ${groupId}`;
  return rows.map((r) => r.sort_order);
}

async function readDecoration(tx: TransactionSql, id: string): Promise<DecorationRow> {
  const [row] = await tx<DecorationRow[]>`
    SELECT ${tx.unsafe(DECORATION_COLUMNS)} FROM quote_decorations WHERE id = ${id}`;
  return row!;
}

/**
 * Locks the quote that holds `decorationId` (this organisation's; 404 otherwise, 409 when the
 * quote is not a draft) and returns the decoration as it is under that lock.
 */
async function lockDecoration(
  tx: TransactionSql,
  organizationId: string,
  decorationId: string,
): Promise<{ quote: LockedQuote; row: DecorationRow }> {
  const [owner] = await tx<{ quote_id: string }[]>`
    SELECT quote_id FROM quote_decorations
    WHERE organization_id = ${organizationId} AND id = ${decorationId}`;
  if (!owner) throw notFound("Quote decoration", decorationId);
  const quote = await lockQuoteForEdit(
    tx,
    organizationId,
    owner.quote_id,
    "Quote decoration",
    decorationId,
  );
  // Deleted (or its group deleted) while we waited for the lock.
  const [row] = await tx<DecorationRow[]>`
    SELECT ${tx.unsafe(DECORATION_COLUMNS)} FROM quote_decorations
    WHERE id = ${decorationId} AND quote_id = ${quote.id}`;
  if (!row) throw notFound("Quote decoration", decorationId);
  return { quote, row };
}

async function recordEvent(
  tx: TransactionSql,
  organizationId: string,
  type: "quote_decoration.created" | "quote_decoration.updated",
  row: DecorationRow,
): Promise<void> {
  await writeEvent(tx, {
    organizationId,
    type,
    aggregateId: row.id,
    // As a costs.read subscriber sees it.
    payload: toDecoration(row, true),
  });
}

/**
 * Adds a decoration to a group of this organisation (404 otherwise; 409 unless the quote is a
 * draft). Without `sortOrder` it is appended to the group's shared line/decoration sequence;
 * with one it is inserted there and the rows at or after it move down by one. The quote is
 * recomputed in the same transaction; the row is returned as the recomputation left it.
 */
export async function createDecoration(
  sql: Sql,
  organizationId: string,
  groupId: string,
  input: CreateQuoteDecorationBody,
): Promise<DecorationRow> {
  return await sql.begin(async (tx) => {
    const [group] = await tx<{ quote_id: string }[]>`
      SELECT quote_id FROM quote_groups
      WHERE organization_id = ${organizationId} AND id = ${groupId}`;
    if (!group) throw notFound("Quote group", groupId);
    const quote = await lockQuoteForEdit(
      tx,
      organizationId,
      group.quote_id,
      "Quote group",
      groupId,
    );
    const [stillThere] = await tx`
      SELECT 1 FROM quote_groups WHERE id = ${groupId} AND quote_id = ${quote.id}`;
    if (!stillThere) throw notFound("Quote group", groupId);
    await assertMarkupGroups(tx, organizationId, input);

    const existing = await sortOrdersOfGroup(tx, groupId);
    const { sortOrder, shifts } = insertAt(existing, input.sortOrder);
    if (shifts.length > 0) {
      await tx`
        UPDATE quote_lines SET sort_order = sort_order + 1, updated_at = now()
        WHERE quote_group_id = ${groupId} AND sort_order >= ${sortOrder}`;
      await tx`
        UPDATE quote_decorations SET sort_order = sort_order + 1, updated_at = now()
        WHERE quote_group_id = ${groupId} AND sort_order >= ${sortOrder}`;
    }

    const id = uuidv7();
    const values = apply(defaults(input.quantity), input);
    const row: Record<string, Param> = {
      id,
      organization_id: organizationId,
      quote_id: quote.id,
      quote_group_id: groupId,
      sort_order: sortOrder,
      ...toParams(tx, values),
    };
    await tx`INSERT INTO quote_decorations ${tx(row)}`;
    await recomputeQuote(tx, organizationId, quote, { decorationIds: new Set([id]) });
    const saved = await readDecoration(tx, id);
    await recordEvent(tx, organizationId, "quote_decoration.created", saved);
    return saved;
  });
}

/**
 * Changes the given fields of a decoration. A new `sortOrder` moves it within the group's
 * shared sequence (clamped to 1..n), which is renumbered 1..n. Pricing changes re-band its
 * `group` lanes; the quote is recomputed either way.
 */
export async function updateDecoration(
  sql: Sql,
  organizationId: string,
  decorationId: string,
  input: UpdateQuoteDecorationBody,
): Promise<DecorationRow> {
  return await sql.begin(async (tx) => {
    const { quote, row } = await lockDecoration(tx, organizationId, decorationId);
    const fields = (Object.keys(input) as (keyof UpdateQuoteDecorationBody)[]).filter((k) =>
      input[k] !== undefined
    );
    if (fields.length === 0) return row;
    await assertMarkupGroups(tx, organizationId, input);

    if (fields.some((f) => f !== "sortOrder")) {
      const values = apply(valuesOf(row), input);
      await tx`
        UPDATE quote_decorations SET ${tx(toParams(tx, values))}, updated_at = now()
        WHERE id = ${decorationId}`;
    } else {
      await tx`UPDATE quote_decorations SET updated_at = now() WHERE id = ${decorationId}`;
    }
    if (input.sortOrder !== undefined) {
      // Moves it within the group's shared sequence (clamped), renumbered 1..n.
      await placeRow(tx, row.quote_group_id, { id: row.id, kind: "decoration" }, input.sortOrder);
    }

    const reband = fields.some((f) => (REBAND_FIELDS as readonly string[]).includes(f));
    await recomputeQuote(
      tx,
      organizationId,
      quote,
      reband ? { decorationIds: new Set([decorationId]) } : {},
    );
    const saved = await readDecoration(tx, decorationId);
    await recordEvent(tx, organizationId, "quote_decoration.updated", saved);
    return saved;
  });
}

/**
 * Deletes a decoration, closes the gap it leaves in the group's shared sequence (renumbered
 * 1..n) and recomputes the quote.
 */
export async function deleteDecoration(
  sql: Sql,
  organizationId: string,
  decorationId: string,
): Promise<{ id: string; quoteGroupId: string }> {
  return await sql.begin(async (tx) => {
    const { quote, row } = await lockDecoration(tx, organizationId, decorationId);
    await tx`DELETE FROM quote_decorations WHERE id = ${decorationId}`;
    await compactGroup(tx, row.quote_group_id);
    await recomputeQuote(tx, organizationId, quote);
    const deleted = { id: decorationId, quoteGroupId: row.quote_group_id };
    await writeEvent(tx, {
      organizationId,
      type: "quote_decoration.deleted",
      aggregateId: decorationId,
      payload: deleted,
    });
    return deleted;
  });
}

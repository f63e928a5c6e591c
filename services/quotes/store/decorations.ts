import { type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import type {
  CreateQuoteDecorationBody,
  UpdateQuoteDecorationBody,
} from "@printshop/shared/contracts/quotes";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { changedColumns, type EveryFieldHasAColumn } from "@printshop/shared/db/fields";
import { rebandsDecoration } from "../domain/rows.ts";
import { DECORATION_GROUP_LANES } from "../domain/markup_groups.ts";
import { setManualCharges } from "../domain/pricing.ts";
import { newDecoration } from "../domain/new_rows.ts";
import { decorationInput, recomputeQuote } from "./aggregate.ts";
import { lockGroup, lockQuoteRow } from "./quote_locks.ts";
import { assertDefaultGroup, assertGroupOfLane } from "./markup_groups.ts";
import { type DecorationRow, DECORATIONS, toDecoration } from "./item_rows.ts";
import { GROUP_ROWS } from "./sequences.ts";
import { PAST_THE_END } from "@printshop/shared/db/sort-order";

// Each field a write may set is written to the column of its name.
const _columns: EveryFieldHasAColumn<UpdateQuoteDecorationBody, DecorationRow, "sortOrder"> = true;

/** The columns a write sets, from the given body fields; `colours` goes as jsonb. */
function columnsOf(tx: TransactionSql, input: UpdateQuoteDecorationBody): Record<string, unknown> {
  const columns = changedColumns(input, ["sortOrder"]);
  if (input.colours !== undefined) columns.colours = tx.json(input.colours);
  return columns;
}

/**
 * The markup groups a write asks a decoration to band through: each one the body names must be
 * this organisation's group of the lane it is named for (unit lane: `decoration`, setup lane:
 * `setup`), and a lane this write sets to `group` without naming one needs a default for it.
 * `after` is the decoration as the write leaves it.
 */
async function assertMarkupGroups(
  tx: TransactionSql,
  organizationId: string,
  input: UpdateQuoteDecorationBody,
  after: Pick<
    DecorationRow,
    "markup_source" | "markup_group_id" | "setup_markup_source" | "setup_markup_group_id" | "method"
  >,
): Promise<void> {
  for (const [field, lane] of DECORATION_GROUP_LANES) {
    await assertGroupOfLane(tx, organizationId, field, input[field], lane);
  }
  const unitAsked = input.markupSource === "group" || input.markupGroupId === null ||
    input.method !== undefined;
  if (after.markup_source === "group" && !after.markup_group_id && unitAsked) {
    await assertDefaultGroup(tx, organizationId, "markupSource", "decoration", after.method);
  }
  const setupAsked = input.setupMarkupSource === "group" || input.setupMarkupGroupId === null;
  if (after.setup_markup_source === "group" && !after.setup_markup_group_id && setupAsked) {
    await assertDefaultGroup(tx, organizationId, "setupMarkupSource", "setup");
  }
}

/**
 * A charge the body names directly (`baseUnitCost`, `baseSetupCost`: the sell side, open to a
 * caller without costs.read) makes its lane manual with the markup that gives it back; without
 * this the recomputation would price the lane from its old markup and drop the written charge.
 */
async function applyWrittenCharges(
  tx: TransactionSql,
  organizationId: string,
  decorationId: string,
  input: UpdateQuoteDecorationBody,
): Promise<void> {
  if (input.baseUnitCost === undefined && input.baseSetupCost === undefined) return;
  const row = await readDecoration(tx, organizationId, decorationId);
  const charges = setManualCharges(decorationInput(row), {
    ...(input.baseUnitCost === undefined ? {} : { baseUnitCost: String(input.baseUnitCost) }),
    ...(input.baseSetupCost === undefined ? {} : { baseSetupCost: String(input.baseSetupCost) }),
  });
  await tx`
    UPDATE quote_decorations SET
      markup_source = ${charges.markupSource}, markup_value = ${charges.markupValue},
      base_unit_cost = ${charges.baseUnitCost},
      setup_markup_source = ${charges.setupMarkupSource},
      setup_markup_value = ${charges.setupMarkupValue},
      base_setup_cost = ${charges.baseSetupCost}
    WHERE id = ${decorationId}`;
}

/** The decoration (known to exist) as it is now. */
async function readDecoration(
  tx: TransactionSql,
  organizationId: string,
  id: string,
): Promise<DecorationRow> {
  return (await DECORATIONS.find(tx, organizationId, id))!;
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
  return await transaction(sql, async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    await assertMarkupGroups(tx, organizationId, input, {
      markup_source: input.markupSource ?? "manual",
      markup_group_id: input.markupGroupId ?? null,
      setup_markup_source: input.setupMarkupSource ?? "manual",
      setup_markup_group_id: input.setupMarkupGroupId ?? null,
      method: input.method ?? null,
    });
    const id = uuidv7();
    // A charge the body names makes its lane manual (newDecoration), written with the row.
    const priced = newDecoration(input);
    // Columns not given take their defaults; the row goes last, then to its asked place. The
    // keys that place the row come last, so no body field could ever stand in for them.
    const row: Record<string, unknown> = {
      ...columnsOf(tx, input),
      markup_source: priced.markupSource,
      markup_value: priced.markupValue,
      base_unit_cost: priced.baseUnitCost,
      setup_markup_source: priced.setupMarkupSource,
      setup_markup_value: priced.setupMarkupValue,
      base_setup_cost: priced.baseSetupCost,
      id,
      organization_id: organizationId,
      quote_id: quote.id,
      quote_group_id: groupId,
      sort_order: PAST_THE_END,
    };
    await tx`INSERT INTO quote_decorations ${tx(row)}`;
    await GROUP_ROWS.place(tx, groupId, { id, kind: "decoration" }, input.sortOrder);
    await recomputeQuote(tx, organizationId, quote, { decorationIds: new Set([id]) });
    const saved = await readDecoration(tx, organizationId, id);
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
  return await transaction(sql, async (tx) => {
    const { quote, row } = await lockQuoteRow(tx, organizationId, DECORATIONS, decorationId);
    const fields = (Object.keys(input) as (keyof UpdateQuoteDecorationBody)[]).filter((k) =>
      input[k] !== undefined
    );
    if (fields.length === 0) return row;
    await assertMarkupGroups(tx, organizationId, input, {
      markup_source: input.markupSource ?? row.markup_source,
      markup_group_id: input.markupGroupId !== undefined
        ? input.markupGroupId
        : row.markup_group_id,
      setup_markup_source: input.setupMarkupSource ?? row.setup_markup_source,
      setup_markup_group_id: input.setupMarkupGroupId !== undefined
        ? input.setupMarkupGroupId
        : row.setup_markup_group_id,
      method: input.method !== undefined ? input.method : row.method,
    });

    const changes = columnsOf(tx, input);
    if (Object.keys(changes).length > 0) {
      await tx`
        UPDATE quote_decorations SET ${tx(changes)}, updated_at = now()
        WHERE id = ${decorationId}`;
    } else {
      await tx`UPDATE quote_decorations SET updated_at = now() WHERE id = ${decorationId}`;
    }
    await applyWrittenCharges(tx, organizationId, decorationId, input);
    if (input.sortOrder !== undefined) {
      // Moves it within the group's shared sequence (clamped), renumbered 1..n.
      await GROUP_ROWS.place(
        tx,
        row.quote_group_id,
        { id: row.id, kind: "decoration" },
        input.sortOrder,
      );
    }

    const reband = rebandsDecoration(fields);
    await recomputeQuote(
      tx,
      organizationId,
      quote,
      reband ? { decorationIds: new Set([decorationId]) } : {},
    );
    const saved = await readDecoration(tx, organizationId, decorationId);
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
  return await transaction(sql, async (tx) => {
    const { quote, row } = await lockQuoteRow(tx, organizationId, DECORATIONS, decorationId);
    await tx`DELETE FROM quote_decorations WHERE id = ${decorationId}`;
    await GROUP_ROWS.compact(tx, row.quote_group_id);
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

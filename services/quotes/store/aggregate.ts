/**
 * A quote's recomputation: after any change to its rows, under the lock of quote_locks.ts, the
 * whole quote is priced once and what changed is written back with its totals.
 */
import {
  type Fragment,
  type Queryable,
  sendBeforeCommit,
  type TransactionSql,
} from "@printshop/shared/db";
import { ApiError } from "@printshop/shared/http";
import {
  type DecorationInput,
  type GroupInput,
  isGoodsLine,
  type LineInput,
  MAX_QUOTE_TOTAL,
  quoteTotals,
  totalTooLarge,
  type VariantInput,
} from "../domain/pricing.ts";
import { rebandDecorationLanes, rebandLineVariants } from "../domain/reband.ts";
import type { DecorationRow, LineRow, VariantRow } from "./item_rows.ts";
import { markupGroupsForPricing } from "./markup_groups.ts";
import type { LockedQuote } from "./quote_locks.ts";

/** Which `group`-source rows re-band in this recomputation (pricing.md: quantity or cost change, reopen). */
export interface RebandScope {
  all?: boolean;
  /** Every `group` variant of these lines (their line quantity changed). */
  lineIds?: ReadonlySet<string>;
  variantIds?: ReadonlySet<string>;
  decorationIds?: ReadonlySet<string>;
}

/**
 * The columns a recomputation reads of each row: what pricing needs and what it writes back,
 * nothing it would only parse and drop (timestamps, names, descriptions). A quote of 60 variants
 * is read whole on every change to any of its rows.
 */
const PRICED_LINE = [
  "id",
  "quote_group_id",
  "line_type",
  "quantity",
  "unit_price_ex_gst",
  "value_type",
  "percentage",
  "discount_value_type",
  "discount_percentage",
] as const satisfies readonly (keyof LineRow)[];
const PRICED_VARIANT = [
  "id",
  "quote_line_id",
  "quantity",
  "unit_price_ex_gst",
  "buy_price",
  "extra_cost",
  "markup_type",
  "markup_value",
  "markup_source",
  "markup_group_id",
  "is_custom_line",
] as const satisfies readonly (keyof VariantRow)[];
const PRICED_DECORATION = [
  "id",
  "quote_group_id",
  "method",
  "quantity",
  "unit_cost",
  "markup_type",
  "markup_value",
  "markup_source",
  "markup_group_id",
  "base_unit_cost",
  "setup_cost",
  "setup_markup_type",
  "setup_markup_value",
  "setup_markup_source",
  "setup_markup_group_id",
  "base_setup_cost",
  "include_setup_cost",
  "roll_up",
  "roll_up_setup",
  "show_on_documents",
] as const satisfies readonly (keyof DecorationRow)[];
type PricedLine = Pick<LineRow, typeof PRICED_LINE[number]>;
type PricedVariant = Pick<VariantRow, typeof PRICED_VARIANT[number]>;
type PricedDecoration = Pick<DecorationRow, typeof PRICED_DECORATION[number]>;
const columns = (names: readonly string[]): string => names.join(", ");

const variantInput = (v: PricedVariant): VariantInput => ({
  quantity: v.quantity,
  buyPrice: v.buy_price,
  extraCost: v.extra_cost,
  markupType: v.markup_type,
  markupValue: v.markup_value,
  markupSource: v.markup_source,
  unitPriceExGst: v.unit_price_ex_gst,
  isCustomLine: v.is_custom_line,
});

/** A decoration row as the pricing rules read it. */
export const decorationInput = (d: PricedDecoration): DecorationInput => ({
  quantity: d.quantity,
  unitCost: d.unit_cost,
  markupType: d.markup_type,
  markupValue: d.markup_value,
  markupSource: d.markup_source,
  baseUnitCost: d.base_unit_cost,
  setupCost: d.setup_cost,
  setupMarkupType: d.setup_markup_type,
  setupMarkupValue: d.setup_markup_value,
  setupMarkupSource: d.setup_markup_source,
  baseSetupCost: d.base_setup_cost,
  includeSetupCost: d.include_setup_cost,
  rollUp: d.roll_up,
  rollUpSetup: d.roll_up_setup,
  showOnDocuments: d.show_on_documents,
});

/**
 * Two stored values alike: equal, or the same amount written differently (numeric columns come
 * back as "6.2500" where pricing writes "6.25").
 */
function alike(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "string" || typeof b !== "string") return false;
  const [x, y] = [Number(a), Number(b)];
  return !Number.isNaN(x) && x === y;
}

/** The row with its derived fields written over it, or null when every one is as stored. */
function changed<R extends object>(row: R, derived: Partial<R>): R | null {
  const differs = (Object.keys(derived) as (keyof R)[]).some((k) => !alike(derived[k], row[k]));
  return differs ? { ...row, ...derived } : null;
}

/** The pricing fields a recomputation wrote to variants, by id (rows it did not change are absent). */
export type RepricedVariants = ReadonlyMap<
  string,
  Pick<VariantRow, "unit_price_ex_gst" | "markup_type" | "markup_value">
>;

export interface RecomputeOptions {
  /**
   * Statements to send behind the recomputation's write, once the repricing is known (a
   * change's event, built from what was written); with `sendBeforeCommit`, they travel with
   * that write and the COMMIT in one round trip.
   */
  alongside?: (repriced: RepricedVariants) => Promise<unknown>;
}

/**
 * Re-bands what the scope names, re-derives every derived field (variant and decoration sell
 * prices, line quantity and unit price) and the quote's totals, and writes back what changed.
 * Runs inside the transaction of the change that caused it.
 */
export async function recomputeQuote(
  tx: TransactionSql,
  organizationId: string,
  quote: LockedQuote,
  scope: RebandScope = {},
  options: RecomputeOptions = {},
): Promise<RepricedVariants> {
  // What may re-band needs the organisation's markup groups: read with the rows, in the same
  // round trip (whether any in-scope row is `group`-sourced is known only from the rows).
  const mayReband = scope.all === true || (scope.lineIds?.size ?? 0) > 0 ||
    (scope.variantIds?.size ?? 0) > 0 || (scope.decorationIds?.size ?? 0) > 0;
  const [groupRows, variants, decorations, markupGroups] = await Promise.all([
    // Groups and their lines in one statement: a group without lines is a row without a line.
    tx<({ group_id: string } & (PricedLine | { [K in keyof PricedLine]: null }))[]>`
      SELECT g.id AS group_id, ${tx.unsafe(PRICED_LINE.map((c) => `l.${c}`).join(", "))}
      FROM quote_groups g LEFT JOIN quote_lines l ON l.quote_group_id = g.id
      WHERE g.quote_id = ${quote.id} ORDER BY g.sort_order, g.id, l.sort_order, l.id`,
    tx<PricedVariant[]>`SELECT ${tx.unsafe(columns(PRICED_VARIANT))} FROM quote_variants
      WHERE quote_id = ${quote.id} ORDER BY sort_order, id`,
    tx<PricedDecoration[]>`SELECT ${tx.unsafe(columns(PRICED_DECORATION))} FROM quote_decorations
      WHERE quote_id = ${quote.id} ORDER BY sort_order, id`,
    mayReband ? markupGroupsForPricing(tx, organizationId) : [],
  ]);
  const groups = [...new Set(groupRows.map((r) => r.group_id))].map((id) => ({ id }));
  const lines = groupRows.filter((r): r is { group_id: string } & PricedLine => r.id !== null);
  const inScope = (v: PricedVariant): boolean =>
    scope.all === true || (scope.variantIds?.has(v.id) ?? false) ||
    (scope.lineIds?.has(v.quote_line_id) ?? false);
  const decorationInScope = (d: PricedDecoration): boolean =>
    scope.all === true || (scope.decorationIds?.has(d.id) ?? false);

  const variantsByLine = new Map<string, PricedVariant[]>();
  for (const v of variants) {
    const list = variantsByLine.get(v.quote_line_id) ?? [];
    list.push(v);
    variantsByLine.set(v.quote_line_id, list);
  }

  // Group rows in scope re-band first: their markup follows the band their quantity falls in.
  const variantInputs = new Map<string, VariantInput>();
  for (const lineVariants of variantsByLine.values()) {
    const banded = rebandLineVariants(
      lineVariants.map((v) => ({
        input: variantInput(v),
        markupGroupId: v.markup_group_id,
        inScope: inScope(v),
      })),
      markupGroups,
    );
    lineVariants.forEach((v, i) => variantInputs.set(v.id, banded[i]!));
  }
  const decorationInputs = new Map<string, DecorationInput>();
  for (const d of decorations) {
    const input = decorationInput(d);
    decorationInputs.set(
      d.id,
      decorationInScope(d)
        ? rebandDecorationLanes({
          input,
          method: d.method,
          markupGroupId: d.markup_group_id,
          setupMarkupGroupId: d.setup_markup_group_id,
        }, markupGroups)
        : input,
    );
  }

  // Then the quote is priced once, whole: every variant's sell, every line's quantity and unit
  // price, every decoration's charges and the totals. What differs from the rows is written.
  const lineInputs = new Map<string, LineInput>();
  for (const line of lines) {
    lineInputs.set(line.id, {
      lineType: line.line_type,
      quantity: line.quantity,
      unitPriceExGst: line.unit_price_ex_gst,
      valueType: line.value_type,
      percentage: line.percentage,
      discountValueType: line.discount_value_type,
      discountPercentage: line.discount_percentage,
      variants: (variantsByLine.get(line.id) ?? []).map((v) => variantInputs.get(v.id)!),
    });
  }
  const groupLines = groups.map((g) => lines.filter((l) => l.quote_group_id === g.id));
  const groupDecorations = groups.map((g) => decorations.filter((d) => d.quote_group_id === g.id));
  const groupInputs: GroupInput[] = groups.map((_, g) => ({
    lines: groupLines[g]!.map((l) => lineInputs.get(l.id)!),
    decorations: groupDecorations[g]!.map((d) => decorationInputs.get(d.id)!),
  }));
  const totals = quoteTotals(groupInputs, quote.taxRatePct);

  const variantUpdates: PricedVariant[] = [];
  const lineUpdates: PricedLine[] = [];
  const decorationUpdates: PricedDecoration[] = [];
  const writeBack = <R extends object>(updates: R[], row: R, derived: Partial<R>): void => {
    const written = changed(row, derived);
    if (written) updates.push(written);
  };
  groups.forEach((_, g) => {
    const priced = totals.groups[g]!;
    groupLines[g]!.forEach((line, i) => {
      const lineTotals = priced.lines[i]!;
      (variantsByLine.get(line.id) ?? []).forEach((v, k) => {
        const { markupType, markupValue } = variantInputs.get(v.id)!;
        writeBack(variantUpdates, v, {
          unit_price_ex_gst: lineTotals.variants[k]!.unitPriceExGst,
          markup_type: markupType,
          markup_value: markupValue,
        });
      });
      // A line with variants takes its quantity and unit price from them.
      const input = lineInputs.get(line.id)!;
      if (input.variants.length === 0 || !isGoodsLine(input)) return;
      writeBack(lineUpdates, line, {
        quantity: lineTotals.quantity,
        unit_price_ex_gst: lineTotals.unitPriceExGst,
      });
    });
    groupDecorations[g]!.forEach((d, j) => {
      const charges = priced.decorations[j]!;
      const input = decorationInputs.get(d.id)!;
      writeBack(decorationUpdates, d, {
        base_unit_cost: charges.baseUnitCost,
        base_setup_cost: charges.baseSetupCost,
        markup_type: input.markupType,
        markup_value: input.markupValue,
        setup_markup_type: input.setupMarkupType,
        setup_markup_value: input.setupMarkupValue,
      });
    });
  });
  if (Math.abs(Number(totals.totalIncGst)) >= MAX_QUOTE_TOTAL) {
    // The change is rolled back with the transaction; nothing is half-written.
    throw new ApiError(
      "validation_error",
      `This change would take the quote's total past ${MAX_QUOTE_TOTAL.toLocaleString("en")}`,
      [totalTooLarge()],
    );
  }

  const repriced: RepricedVariants = new Map(variantUpdates.map((v) => [v.id, v]));
  // Every write back in one statement: the rows that changed (data-modifying CTEs), then the
  // quote's totals.
  const rowWrites = [
    variantUpdates.length > 0 ? variantsWritten(tx, variantUpdates) : null,
    decorationUpdates.length > 0 ? decorationsWritten(tx, decorationUpdates) : null,
    lineUpdates.length > 0 ? linesWritten(tx, lineUpdates) : null,
  ].filter((w) => w !== null);
  const totalsWritten = tx`
    UPDATE quotes SET subtotal_ex_gst = ${totals.subtotalExGst},
      gst_amount = ${totals.gstAmount}, total_inc_gst = ${totals.totalIncGst}, updated_at = now()
    WHERE id = ${quote.id}`;
  // Nothing here needs the write's answer: it travels with the transaction's COMMIT.
  await sendBeforeCommit(
    tx,
    rowWrites.length === 0
      ? totalsWritten
      : tx`WITH ${rowWrites.reduce((acc, w) => tx`${acc}, ${w}`)} ${totalsWritten}`,
  );
  await options.alongside?.(repriced);
  return repriced;
}

function variantsWritten(tx: Queryable, rows: PricedVariant[]): Fragment {
  return tx`variants_written AS (
    UPDATE quote_variants AS v SET unit_price_ex_gst = u.unit, markup_type = u.markup_type,
      markup_value = u.markup_value, updated_at = now()
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${
    rows.map((r) => r.unit_price_ex_gst)
  }::numeric[],
      ${rows.map((r) => r.markup_type)}::text[], ${rows.map((r) => r.markup_value)}::numeric[])
      AS u(id, unit, markup_type, markup_value)
    WHERE v.id = u.id)`;
}

function decorationsWritten(tx: Queryable, rows: PricedDecoration[]): Fragment {
  return tx`decorations_written AS (
    UPDATE quote_decorations AS d SET base_unit_cost = u.base_unit, base_setup_cost = u.base_setup,
      markup_type = u.markup_type, markup_value = u.markup_value,
      setup_markup_type = u.setup_markup_type, setup_markup_value = u.setup_markup_value,
      updated_at = now()
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.base_unit_cost)}::numeric[],
      ${rows.map((r) => r.base_setup_cost)}::numeric[], ${rows.map((r) => r.markup_type)}::text[],
      ${rows.map((r) => r.markup_value)}::numeric[], ${
    rows.map((r) => r.setup_markup_type)
  }::text[],
      ${rows.map((r) => r.setup_markup_value)}::numeric[])
      AS u(id, base_unit, base_setup, markup_type, markup_value, setup_markup_type,
        setup_markup_value)
    WHERE d.id = u.id)`;
}

function linesWritten(tx: Queryable, rows: PricedLine[]): Fragment {
  return tx`lines_written AS (
    UPDATE quote_lines AS l SET quantity = u.quantity, unit_price_ex_gst = u.unit,
      updated_at = now()
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.quantity)}::int[],
      ${rows.map((r) => r.unit_price_ex_gst)}::numeric[]) AS u(id, quantity, unit)
    WHERE l.id = u.id)`;
}

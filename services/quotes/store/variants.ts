import { behind, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import {
  type CreateQuoteVariantBody,
  isAdjustment,
  type QuoteVariant,
  type UpdateQuoteVariantBody,
} from "@printshop/shared/contracts/quotes";
import { assertNoProblem, conflict } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { repriceOnCostChange, setManualSell, type VariantInput } from "../domain/pricing.ts";
import { noVariantsOn, variantPricingProblem, variantShapeProblem } from "../domain/rows.ts";
import { newVariant } from "../domain/new_rows.ts";
import { type RebandScope, recomputeQuote, type RepricedVariants } from "./aggregate.ts";
import { type LockedQuote, lockQuoteRow } from "./quote_locks.ts";
import { LINES, toVariant, type VariantRow, VARIANTS } from "./item_rows.ts";
import { LINE_VARIANTS } from "./sequences.ts";
import { assertDefaultGroup, assertGroupOfLane } from "./markup_groups.ts";

export async function createVariant(
  sql: Sql,
  organizationId: string,
  lineId: string,
  input: CreateQuoteVariantBody,
  costs: boolean,
): Promise<QuoteVariant> {
  return await transaction(sql, async (tx) => {
    const { row: line, quote } = await lockQuoteRow(tx, organizationId, LINES, lineId);
    if (isAdjustment(line.line_type)) throw conflict(noVariantsOn(line.line_type));
    const isCustomLine = input.isCustomLine ?? false;
    assertNoProblem(variantShapeProblem(isCustomLine, input.size ?? null, input.colour ?? null));
    assertNoProblem(variantPricingProblem(input));
    const priced = newVariant(input);
    const markupSource = priced.markupSource;
    await assertGroupOfLane(tx, organizationId, "markupGroupId", input.markupGroupId, "garment");
    if (markupSource === "group" && !input.markupGroupId) {
      await assertDefaultGroup(tx, organizationId, "markupSource", "garment");
    }
    const id = uuidv7();
    const inserting = tx<VariantRow[]>`
      INSERT INTO quote_variants (
        id, organization_id, quote_id, quote_line_id, size, colour, quantity, unit_price_ex_gst,
        buy_price, extra_cost, markup_type, markup_value, markup_source, markup_group_id,
        is_custom_line, show_on_documents, sort_order
      ) VALUES (
        ${id}, ${organizationId}, ${quote.id}, ${lineId}, ${input.size ?? null},
        ${input.colour ?? null}, ${input.quantity}, ${priced.unitPriceExGst}, ${priced.buyPrice},
        ${priced.extraCost}, ${priced.markupType}, ${priced.markupValue}, ${priced.markupSource},
        ${input.markupGroupId ?? null}, ${isCustomLine}, ${input.showOnDocuments ?? false},
        ${LINE_VARIANTS.numberForInsert(tx, lineId, input.sortOrder)}
      )
      RETURNING ${tx.unsafe(VARIANTS.select)}`;
    // The INSERT travels with what follows it (a placing, or the recomputation's reads). A new
    // variant changes its line's quantity: every group row of the line re-bands.
    const [, saved] = await behind(
      inserting,
      () =>
        writeVariant(tx, organizationId, quote, inserting, {
          id,
          lineId,
          sortOrder: input.sortOrder,
          scope: { lineIds: new Set([lineId]) },
          event: "quote_variant.created",
        }),
    );
    return toVariant(saved, costs);
  });
}

/**
 * After a variant's INSERT or UPDATE (`written`, its row): places it when asked to, recomputes
 * the quote and announces the variant as written (that row with what the recomputation
 * re-priced; re-read when placing moved its neighbours), its event sent with the
 * recomputation's writes.
 */
async function writeVariant(
  tx: TransactionSql,
  organizationId: string,
  quote: LockedQuote,
  written: PromiseLike<VariantRow[]>,
  change: {
    id: string;
    lineId: string;
    sortOrder: number | undefined;
    scope: RebandScope;
    event: "quote_variant.created" | "quote_variant.updated";
  },
): Promise<VariantRow> {
  const { id } = change;
  await LINE_VARIANTS.placeIfGiven(tx, change.lineId, { id, kind: "variant" }, change.sortOrder);
  let saved: VariantRow | undefined;
  await recomputeQuote(tx, organizationId, quote, change.scope, {
    alongside: async (repriced) => {
      const row = change.sortOrder !== undefined
        ? await VARIANTS.find(tx, organizationId, id)
        : (await written)[0];
      saved = { ...row!, ...repriced.get(id) };
      await Promise.all([
        writeEvent(tx, {
          organizationId,
          type: change.event,
          aggregateId: id,
          payload: toVariant(saved, true),
        }),
        announceRepriced(tx, organizationId, repriced, id),
      ]);
    },
  });
  return saved!;
}

/**
 * A `quote_variant.updated` for each variant the recomputation re-priced besides the one the
 * change is about: a change of a line's quantity re-bands its other `group` rows, whose sell
 * price and markup (and updatedAt) then change. Without these, an integrator keeping variants in
 * step from their events kept the old prices of every sibling (the changed variant's own event
 * says nothing of them). Read behind the recomputation's write-back, on the same connection, so
 * the rows are as written.
 */
async function announceRepriced(
  tx: TransactionSql,
  organizationId: string,
  repriced: RepricedVariants,
  changedId: string,
): Promise<void> {
  const siblings = [...repriced.keys()].filter((id) => id !== changedId);
  if (siblings.length === 0) return;
  const rows = await tx<VariantRow[]>`
    SELECT ${tx.unsafe(VARIANTS.select)} FROM quote_variants
    WHERE organization_id = ${organizationId} AND id = ANY(${siblings}::uuid[])
    ORDER BY sort_order, id`;
  await writeEvents(
    tx,
    rows.map((row) => ({
      organizationId,
      type: "quote_variant.updated" as const,
      aggregateId: row.id,
      payload: toVariant(row, true),
    })),
  );
}

export async function updateVariant(
  sql: Sql,
  organizationId: string,
  variantId: string,
  input: UpdateQuoteVariantBody,
  costs: boolean,
): Promise<QuoteVariant> {
  return await transaction(sql, async (tx) => {
    const { row: variant, quote } = await lockQuoteRow(tx, organizationId, VARIANTS, variantId);
    assertNoProblem(variantPricingProblem(input));
    const isCustomLine = input.isCustomLine ?? variant.is_custom_line;
    assertNoProblem(variantShapeProblem(
      isCustomLine,
      input.size !== undefined ? input.size : variant.size,
      input.colour !== undefined ? input.colour : variant.colour,
    ));
    let markupSource = input.markupSource ?? variant.markup_source;
    const markupGroupId = input.markupGroupId !== undefined
      ? input.markupGroupId
      : variant.markup_group_id;
    if (input.unitPriceExGst !== undefined) markupSource = "manual";
    await assertGroupOfLane(tx, organizationId, "markupGroupId", input.markupGroupId, "garment");
    // Asking for group pricing now (a new source, or its named group taken away) needs a group.
    const asksForGroup = input.markupSource === "group" || input.markupGroupId === null;
    if (markupSource === "group" && !markupGroupId && asksForGroup) {
      await assertDefaultGroup(tx, organizationId, "markupSource", "garment");
    }

    const current: VariantInput = {
      quantity: variant.quantity,
      buyPrice: variant.buy_price,
      extraCost: variant.extra_cost,
      markupType: variant.markup_type,
      markupValue: variant.markup_value,
      markupSource: variant.markup_source,
      unitPriceExGst: variant.unit_price_ex_gst,
      isCustomLine: variant.is_custom_line,
    };
    const nextCost = {
      buyPrice: input.buyPrice !== undefined ? String(input.buyPrice) : variant.buy_price,
      extraCost: input.extraCost !== undefined ? String(input.extraCost) : variant.extra_cost,
    };
    const costChanged = input.buyPrice !== undefined || input.extraCost !== undefined;
    let pricing: Pick<VariantInput, "markupType" | "markupValue" | "unitPriceExGst"> = {
      markupType: input.markupType !== undefined ? input.markupType : variant.markup_type,
      markupValue: input.markupValue !== undefined
        ? input.markupValue === null ? null : String(input.markupValue)
        : variant.markup_value,
      unitPriceExGst: variant.unit_price_ex_gst,
    };
    if (input.unitPriceExGst !== undefined) {
      // Writing the sell directly makes the row manual and derives its markup.
      pricing = setManualSell(
        { ...current, ...nextCost, ...pricing },
        String(input.unitPriceExGst),
      );
    } else if (
      costChanged && markupSource === "manual" && input.markupType === undefined &&
      input.markupValue === undefined
    ) {
      // A manual row keeps its sell price when its cost changes; its markup is re-derived.
      pricing = repriceOnCostChange({ ...current, markupSource: "manual" }, nextCost);
    }
    const changes: Record<string, unknown> = {
      buy_price: nextCost.buyPrice,
      extra_cost: nextCost.extraCost,
      markup_type: pricing.markupType,
      markup_value: pricing.markupValue,
      unit_price_ex_gst: pricing.unitPriceExGst,
      markup_source: markupSource,
      markup_group_id: markupGroupId,
      is_custom_line: isCustomLine,
    };
    if (input.size !== undefined) changes.size = input.size;
    if (input.colour !== undefined) changes.colour = input.colour;
    if (input.quantity !== undefined) changes.quantity = input.quantity;
    if (input.showOnDocuments !== undefined) changes.show_on_documents = input.showOnDocuments;
    const updating = tx<VariantRow[]>`
      UPDATE quote_variants SET ${tx(changes)}, updated_at = now() WHERE id = ${variantId}
      RETURNING ${tx.unsafe(VARIANTS.select)}`;
    const quantityChanged = input.quantity !== undefined && input.quantity !== variant.quantity ||
      isCustomLine !== variant.is_custom_line;
    const sourceBecameGroup = markupSource === "group" &&
      (variant.markup_source !== "group" || markupGroupId !== variant.markup_group_id);
    // The UPDATE travels with what follows it (placing, or the recomputation's reads).
    const [, saved] = await behind(
      updating,
      () =>
        writeVariant(tx, organizationId, quote, updating, {
          id: variantId,
          lineId: variant.quote_line_id,
          sortOrder: input.sortOrder,
          scope: {
            ...(quantityChanged ? { lineIds: new Set([variant.quote_line_id]) } : {}),
            ...(costChanged || sourceBecameGroup ? { variantIds: new Set([variantId]) } : {}),
          },
          event: "quote_variant.updated",
        }),
    );
    return toVariant(saved, costs);
  });
}

export async function deleteVariant(
  sql: Sql,
  organizationId: string,
  variantId: string,
): Promise<void> {
  await transaction(sql, async (tx) => {
    const { row: variant, quote } = await lockQuoteRow(tx, organizationId, VARIANTS, variantId);
    // The DELETE and the compaction go in one round trip, the event with the recomputation's
    // writes.
    await behind(
      tx`DELETE FROM quote_variants WHERE id = ${variantId}`,
      () => LINE_VARIANTS.compact(tx, variant.quote_line_id),
    );
    await recomputeQuote(tx, organizationId, quote, {
      lineIds: new Set([variant.quote_line_id]),
    }, {
      alongside: (repriced) =>
        Promise.all([
          writeEvent(tx, {
            organizationId,
            type: "quote_variant.deleted",
            aggregateId: variantId,
            payload: { id: variantId, quoteLineId: variant.quote_line_id },
          }),
          announceRepriced(tx, organizationId, repriced, variantId),
        ]),
    });
  });
}

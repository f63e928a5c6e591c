import { behind, type Sql, type TransactionSql } from "@printshop/shared/db";
import {
  type CreateQuoteVariantBody,
  isAdjustment,
  type QuoteVariant,
  type UpdateQuoteVariantBody,
} from "@printshop/shared/contracts/quotes";
import { assertNoProblem, conflict, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { repriceOnCostChange, setManualSell, type VariantInput } from "../domain/pricing.ts";
import { variantPricingProblem, variantShapeProblem } from "../domain/rows.ts";
import { type LockedQuote, lockQuoteOfRow, recomputeQuote } from "./aggregate.ts";
import { toVariant, VARIANT_COLUMNS, type VariantRow } from "./item_rows.ts";
import { lockLine } from "./lines.ts";
import { LINE_VARIANTS } from "./sequences.ts";
import { assertDefaultGroup, assertGroupOfLane } from "./markup_groups.ts";

/** A variant (known to exist) as the caller may see it, and whole for its event. */
async function readVariant(
  tx: TransactionSql,
  id: string,
  costs: boolean,
): Promise<{ shown: QuoteVariant; payload: QuoteVariant }> {
  const [row] = await tx<VariantRow[]>`
    SELECT ${tx.unsafe(VARIANT_COLUMNS)} FROM quote_variants WHERE id = ${id}`;
  return { shown: toVariant(row!, costs), payload: toVariant(row!, true) };
}

/**
 * Locks the variant's quote and reads the variant, in one round trip: the read is sent behind the
 * lock on the same connection, so it runs once the lock is held and sees the variant as it is
 * then (a variant deleted meanwhile is a 404).
 */
async function lockVariant(
  tx: TransactionSql,
  organizationId: string,
  variantId: string,
): Promise<{ variant: VariantRow; quote: LockedQuote }> {
  const [quote, [variant]] = await Promise.all([
    lockQuoteOfRow(tx, organizationId, "quote_variants", variantId, "Quote variant"),
    tx<VariantRow[]>`
      SELECT ${tx.unsafe(VARIANT_COLUMNS)} FROM quote_variants
      WHERE id = ${variantId} AND organization_id = ${organizationId}`,
  ]);
  if (!variant) throw notFound("Quote variant", variantId);
  return { variant, quote };
}

export async function createVariant(
  sql: Sql,
  organizationId: string,
  lineId: string,
  input: CreateQuoteVariantBody,
  costs: boolean,
): Promise<QuoteVariant> {
  return await sql.begin(async (tx) => {
    const { line, quote } = await lockLine(tx, organizationId, lineId);
    if (isAdjustment(line.line_type)) throw conflict(`A ${line.line_type} line has no variants`);
    const isCustomLine = input.isCustomLine ?? false;
    assertNoProblem(variantShapeProblem(isCustomLine, input.size ?? null, input.colour ?? null));
    assertNoProblem(variantPricingProblem(input));
    const markupSource = input.unitPriceExGst !== undefined
      ? "manual"
      : input.markupSource ?? "manual";
    await assertGroupOfLane(tx, organizationId, "markupGroupId", input.markupGroupId, "garment");
    if (markupSource === "group" && !input.markupGroupId) {
      await assertDefaultGroup(tx, organizationId, "markupSource", "garment");
    }
    const base: VariantInput = {
      quantity: input.quantity,
      buyPrice: String(input.buyPrice ?? 0),
      extraCost: String(input.extraCost ?? 0),
      markupType: input.markupType ?? null,
      markupValue: input.markupValue === undefined || input.markupValue === null
        ? null
        : String(input.markupValue),
      markupSource,
      unitPriceExGst: "0",
      isCustomLine,
    };
    const priced = input.unitPriceExGst !== undefined
      ? { ...base, ...setManualSell(base, String(input.unitPriceExGst)) }
      : base;
    const id = uuidv7();
    // The INSERT travels with the placing's read of the line's variants.
    await behind(
      tx`
      INSERT INTO quote_variants (
        id, organization_id, quote_id, quote_line_id, size, colour, quantity, unit_price_ex_gst,
        buy_price, extra_cost, markup_type, markup_value, markup_source, markup_group_id,
        is_custom_line, show_on_documents, sort_order
      ) VALUES (
        ${id}, ${organizationId}, ${quote.id}, ${lineId}, ${input.size ?? null},
        ${input.colour ?? null}, ${input.quantity}, ${priced.unitPriceExGst}, ${priced.buyPrice},
        ${priced.extraCost}, ${priced.markupType}, ${priced.markupValue}, ${priced.markupSource},
        ${input.markupGroupId ?? null}, ${isCustomLine}, ${input.showOnDocuments ?? false}, 100000
      )`,
      () => LINE_VARIANTS.place(tx, lineId, { id, kind: "variant" }, input.sortOrder),
    );
    // A new variant changes its line's quantity: every group row of the line re-bands.
    let variant: { shown: QuoteVariant; payload: QuoteVariant } | undefined;
    await recomputeQuote(tx, organizationId, quote, { lineIds: new Set([lineId]) }, {
      // Read behind the recomputation's writes, and announced with them.
      alongside: async () => {
        variant = await readVariant(tx, id, costs);
        await writeEvent(tx, {
          organizationId,
          type: "quote_variant.created",
          aggregateId: id,
          payload: variant.payload,
        });
      },
    });
    return variant!.shown;
  });
}

export async function updateVariant(
  sql: Sql,
  organizationId: string,
  variantId: string,
  input: UpdateQuoteVariantBody,
  costs: boolean,
): Promise<QuoteVariant> {
  return await sql.begin(async (tx) => {
    const { variant, quote } = await lockVariant(tx, organizationId, variantId);
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
      RETURNING ${tx.unsafe(VARIANT_COLUMNS)}`;
    const placed = input.sortOrder !== undefined;
    const quantityChanged = input.quantity !== undefined && input.quantity !== variant.quantity ||
      isCustomLine !== variant.is_custom_line;
    const sourceBecameGroup = markupSource === "group" &&
      (variant.markup_source !== "group" || markupGroupId !== variant.markup_group_id);
    let saved: VariantRow | undefined;
    // The UPDATE travels with what follows it (placing, or the recomputation's reads).
    await behind(updating, async () => {
      if (placed) {
        await LINE_VARIANTS.place(
          tx,
          variant.quote_line_id,
          { id: variantId, kind: "variant" },
          input.sortOrder!,
        );
      }
      await recomputeQuote(tx, organizationId, quote, {
        ...(quantityChanged ? { lineIds: new Set([variant.quote_line_id]) } : {}),
        ...(costChanged || sourceBecameGroup ? { variantIds: new Set([variantId]) } : {}),
      }, {
        // The variant as written: the UPDATE's row with what the recomputation re-priced
        // (placing it moved its neighbours, so then it is read again). Its event goes with
        // those writes.
        alongside: async (repriced) => {
          const [row] = placed
            ? await tx<VariantRow[]>`
              SELECT ${tx.unsafe(VARIANT_COLUMNS)} FROM quote_variants WHERE id = ${variantId}`
            : await updating;
          saved = { ...row!, ...repriced.get(variantId) };
          await writeEvent(tx, {
            organizationId,
            type: "quote_variant.updated",
            aggregateId: variantId,
            payload: toVariant(saved, true),
          });
        },
      });
    });
    return toVariant(saved!, costs);
  });
}

export async function deleteVariant(
  sql: Sql,
  organizationId: string,
  variantId: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const { variant, quote } = await lockVariant(tx, organizationId, variantId);
    await tx`DELETE FROM quote_variants WHERE id = ${variantId}`;
    await LINE_VARIANTS.compact(tx, variant.quote_line_id);
    await recomputeQuote(tx, organizationId, quote, {
      lineIds: new Set([variant.quote_line_id]),
    });
    await writeEvent(tx, {
      organizationId,
      type: "quote_variant.deleted",
      aggregateId: variantId,
      payload: { id: variantId, quoteLineId: variant.quote_line_id },
    });
  });
}

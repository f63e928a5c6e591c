import type { Sql, TransactionSql } from "@printshop/shared/db";
import type {
  CreateQuoteVariantBody,
  QuoteVariant,
  UpdateQuoteVariantBody,
} from "@printshop/shared/contracts";
import { ApiError, notFound, validationError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { repriceOnCostChange, setManualSell, type VariantInput } from "../domain/pricing.ts";
import { type LockedQuote, lockQuoteForEdit, recomputeQuote } from "./aggregate.ts";
import { toVariant, VARIANT_COLUMNS, type VariantRow } from "./item_rows.ts";
import { lockLine } from "./lines.ts";

const ADJUSTMENTS = new Set(["Discount", "Surcharge"]);

async function readVariant(
  tx: TransactionSql,
  id: string,
  costs: boolean,
): Promise<QuoteVariant> {
  const [row] = await tx<VariantRow[]>`
    SELECT ${tx.unsafe(VARIANT_COLUMNS)} FROM quote_variants WHERE id = ${id}`;
  return toVariant(row!, costs);
}

/** A `group` row must name a garment-lane group of this organisation, or none (the default). */
async function checkMarkupGroup(
  tx: TransactionSql,
  organizationId: string,
  markupGroupId: string | null | undefined,
): Promise<void> {
  if (!markupGroupId) return;
  const [group] = await tx<{ lane: string }[]>`
    SELECT lane FROM markup_groups
    WHERE organization_id = ${organizationId} AND id = ${markupGroupId}`;
  if (!group) throw validationError("markupGroupId", "No such markup group in this organisation");
  if (group.lane !== "garment") {
    throw validationError("markupGroupId", `Must be a garment markup group, not ${group.lane}`);
  }
}

/** Variants of a line keep their own 1..n order; a new one appends or is inserted and shifts. */
async function placeVariant(
  tx: TransactionSql,
  lineId: string,
  variantId: string,
  position: number | undefined,
): Promise<void> {
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM quote_variants WHERE quote_line_id = ${lineId} AND id <> ${variantId}
    ORDER BY sort_order, id`;
  const others = rows.map((r) => r.id);
  const index = position === undefined
    ? others.length
    : Math.min(Math.max(position, 1), others.length + 1) - 1;
  const ordered = [...others.slice(0, index), variantId, ...others.slice(index)];
  await tx`
    UPDATE quote_variants AS v SET sort_order = u.sort_order
    FROM unnest(${ordered}::uuid[], ${ordered.map((_, i) => i + 1)}::int[]) AS u(id, sort_order)
    WHERE v.id = u.id AND v.sort_order <> u.sort_order`;
}

function checkShape(
  isCustomLine: boolean,
  size: string | null,
  colour: string | null,
): void {
  if (isCustomLine && (size !== null || colour !== null)) {
    throw validationError(size !== null ? "size" : "colour", "A custom line has no size or colour");
  }
}

function checkPricingInput(input: {
  unitPriceExGst?: number | undefined;
  markupType?: string | null | undefined;
  markupValue?: number | null | undefined;
}): void {
  if (
    input.unitPriceExGst !== undefined &&
    (input.markupType !== undefined || input.markupValue !== undefined)
  ) {
    throw validationError(
      "unitPriceExGst",
      "Give either unitPriceExGst (the row becomes manual) or a markup, not both",
    );
  }
  const typeGiven = input.markupType !== undefined && input.markupType !== null;
  const valueGiven = input.markupValue !== undefined && input.markupValue !== null;
  if (
    typeGiven !== valueGiven && (input.markupType !== undefined || input.markupValue !== undefined)
  ) {
    throw validationError("markupValue", "markupType and markupValue are given together");
  }
}

async function lockVariant(
  tx: TransactionSql,
  organizationId: string,
  variantId: string,
): Promise<{ variant: VariantRow; quote: LockedQuote }> {
  const [found] = await tx<{ quote_id: string }[]>`
    SELECT quote_id FROM quote_variants WHERE organization_id = ${organizationId}
      AND id = ${variantId}`;
  if (!found) throw notFound("Quote variant", variantId);
  const quote = await lockQuoteForEdit(tx, organizationId, found.quote_id);
  const [variant] = await tx<VariantRow[]>`
    SELECT ${tx.unsafe(VARIANT_COLUMNS)} FROM quote_variants WHERE id = ${variantId}`;
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
    if (ADJUSTMENTS.has(line.line_type)) {
      throw new ApiError("conflict", `A ${line.line_type} line has no variants`);
    }
    const isCustomLine = input.isCustomLine ?? false;
    checkShape(isCustomLine, input.size ?? null, input.colour ?? null);
    checkPricingInput(input);
    const markupSource = input.unitPriceExGst !== undefined
      ? "manual"
      : input.markupSource ?? "manual";
    if (markupSource === "group") await checkMarkupGroup(tx, organizationId, input.markupGroupId);
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
    await tx`
      INSERT INTO quote_variants (
        id, organization_id, quote_id, quote_line_id, size, colour, quantity, unit_price_ex_gst,
        buy_price, extra_cost, markup_type, markup_value, markup_source, markup_group_id,
        is_custom_line, show_on_documents, sort_order
      ) VALUES (
        ${id}, ${organizationId}, ${quote.id}, ${lineId}, ${input.size ?? null},
        ${input.colour ?? null}, ${input.quantity}, ${priced.unitPriceExGst}, ${priced.buyPrice},
        ${priced.extraCost}, ${priced.markupType}, ${priced.markupValue}, ${priced.markupSource},
        ${input.markupGroupId ?? null}, ${isCustomLine}, ${input.showOnDocuments ?? false}, 100000
      )`;
    await placeVariant(tx, lineId, id, input.sortOrder);
    // A new variant changes its line's quantity: every group row of the line re-bands.
    await recomputeQuote(tx, organizationId, quote, { lineIds: new Set([lineId]) });
    const variant = await readVariant(tx, id, costs);
    await writeEvent(tx, {
      organizationId,
      type: "quote_variant.created",
      aggregateId: id,
      payload: await readVariant(tx, id, true),
    });
    return variant;
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
    checkPricingInput(input);
    const isCustomLine = input.isCustomLine ?? variant.is_custom_line;
    checkShape(
      isCustomLine,
      input.size !== undefined ? input.size : variant.size,
      input.colour !== undefined ? input.colour : variant.colour,
    );
    let markupSource = input.markupSource ?? variant.markup_source;
    const markupGroupId = input.markupGroupId !== undefined
      ? input.markupGroupId
      : variant.markup_group_id;
    if (input.unitPriceExGst !== undefined) markupSource = "manual";
    if (markupSource === "group") await checkMarkupGroup(tx, organizationId, markupGroupId);

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
    await tx`UPDATE quote_variants SET ${tx(changes)}, updated_at = now() WHERE id = ${variantId}`;
    if (input.sortOrder !== undefined) {
      await placeVariant(tx, variant.quote_line_id, variantId, input.sortOrder);
    }
    const quantityChanged = input.quantity !== undefined && input.quantity !== variant.quantity ||
      isCustomLine !== variant.is_custom_line;
    const sourceBecameGroup = markupSource === "group" &&
      (variant.markup_source !== "group" || markupGroupId !== variant.markup_group_id);
    await recomputeQuote(tx, organizationId, quote, {
      ...(quantityChanged ? { lineIds: new Set([variant.quote_line_id]) } : {}),
      ...(costChanged || sourceBecameGroup ? { variantIds: new Set([variantId]) } : {}),
    });
    const updated = await readVariant(tx, variantId, costs);
    await writeEvent(tx, {
      organizationId,
      type: "quote_variant.updated",
      aggregateId: variantId,
      payload: await readVariant(tx, variantId, true),
    });
    return updated;
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
    await tx`
      UPDATE quote_variants AS v SET sort_order = u.sort_order
      FROM (SELECT id, row_number() OVER (ORDER BY sort_order, id)::int AS sort_order
            FROM quote_variants WHERE quote_line_id = ${variant.quote_line_id}) u
      WHERE v.id = u.id AND v.sort_order <> u.sort_order`;
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

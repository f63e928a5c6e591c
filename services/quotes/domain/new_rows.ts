/**
 * How a create body becomes the row the pricing rules read: what a new line, variant or
 * decoration is priced from before the quote is recomputed. Pure. The stores write these rows
 * and the pricing preview prices them in memory, so both start from the same figures.
 */
import {
  type CreateQuoteDecorationBody,
  type CreateQuoteLineBody,
  type CreateQuoteVariantBody,
  isAdjustment,
} from "@printshop/shared/contracts/quotes";
import {
  type DecorationInput,
  type LineInput,
  priceVariant,
  setManualCharges,
  setManualSell,
  type VariantInput,
} from "./pricing.ts";
import type { LineShape } from "./rows.ts";

const decimal = (value: number | null | undefined): string | null =>
  value === undefined || value === null ? null : String(value);

/**
 * A new line: its fields as the shape rules check them (an adjustment is Flat unless told
 * otherwise), and as pricing reads them (no variants yet).
 */
export function newLine(input: CreateQuoteLineBody): { shape: LineShape; pricing: LineInput } {
  const shape: LineShape = {
    lineType: input.lineType,
    valueType: input.valueType ?? (isAdjustment(input.lineType) ? "Flat" : null),
    percentage: input.percentage ?? null,
    discountValueType: input.discountValueType ?? null,
    discountPercentage: input.discountPercentage ?? null,
  };
  return {
    shape,
    pricing: {
      lineType: input.lineType,
      quantity: input.quantity ?? 0,
      unitPriceExGst: String(input.unitPriceExGst ?? 0),
      valueType: shape.valueType as LineInput["valueType"],
      percentage: decimal(shape.percentage),
      discountValueType: shape.discountValueType as LineInput["discountValueType"],
      discountPercentage: decimal(shape.discountPercentage),
      variants: [],
    },
  };
}

/**
 * A new variant as written: `manual` unless it asks for `group` (a sell price given makes it
 * manual whatever it asks), with the sell its markup gives, or the sell given with the markup
 * derived back. A `group` row is re-banded by the recomputation that follows.
 */
export function newVariant(input: CreateQuoteVariantBody): VariantInput {
  const base: VariantInput = {
    quantity: input.quantity,
    buyPrice: String(input.buyPrice ?? 0),
    extraCost: String(input.extraCost ?? 0),
    markupType: input.markupType ?? null,
    markupValue: decimal(input.markupValue),
    markupSource: input.unitPriceExGst !== undefined ? "manual" : input.markupSource ?? "manual",
    unitPriceExGst: "0",
    isCustomLine: input.isCustomLine ?? false,
  };
  return input.unitPriceExGst !== undefined
    ? { ...base, ...setManualSell(base, String(input.unitPriceExGst)) }
    : { ...base, unitPriceExGst: priceVariant(base).unitPriceExGst };
}

/**
 * A new decoration as written: what the body leaves out takes the column's default
 * (0002_quote_items.sql: amounts 0, lanes `manual` without a markup, setup not charged); a charge
 * the body names makes its lane manual (setManualCharges).
 */
export function newDecoration(input: CreateQuoteDecorationBody): DecorationInput {
  const row: DecorationInput = {
    quantity: input.quantity,
    unitCost: String(input.unitCost ?? 0),
    markupType: input.markupType ?? null,
    markupValue: decimal(input.markupValue),
    markupSource: input.markupSource ?? "manual",
    baseUnitCost: String(input.baseUnitCost ?? 0),
    setupCost: String(input.setupCost ?? 0),
    setupMarkupType: input.setupMarkupType ?? null,
    setupMarkupValue: decimal(input.setupMarkupValue),
    setupMarkupSource: input.setupMarkupSource ?? "manual",
    baseSetupCost: String(input.baseSetupCost ?? 0),
    includeSetupCost: input.includeSetupCost ?? false,
    rollUp: input.rollUp ?? false,
    rollUpSetup: input.rollUpSetup ?? false,
    showOnDocuments: input.showOnDocuments ?? true,
  };
  if (input.baseUnitCost === undefined && input.baseSetupCost === undefined) return row;
  return {
    ...row,
    ...setManualCharges(row, {
      ...(input.baseUnitCost === undefined ? {} : { baseUnitCost: String(input.baseUnitCost) }),
      ...(input.baseSetupCost === undefined ? {} : { baseSetupCost: String(input.baseSetupCost) }),
    }),
  };
}

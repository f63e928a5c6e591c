/**
 * Quote pricing (docs "Quote pricing rules"; spec 2.2–2.6 for field names). Pure: rows in,
 * prices and totals out.
 *
 * Money in and out is a decimal string (`DecimalString`), computed with decimal.js
 * (`ExactDecimal`), never with JS numbers:
 * - unit amounts (sell prices, `baseUnitCost`, `baseSetupCost`, a line's derived
 *   `unitPriceExGst`) are rounded half away from zero and written with exactly 4 decimals;
 *   stored unit prices that are authoritative are normalised the same way before use;
 * - row, group and goods totals are exact and unrounded, written with at least 2 decimals;
 * - only the quote's `subtotalExGst`, `gstAmount` and `totalIncGst` are rounded to 2 decimals,
 *   half away from zero.
 * Quantities are JS integers.
 */
import {
  type AdjustmentLineType,
  isAdjustment,
  LINE_TYPES,
  type LineType,
  type MarkupSource,
  type ValueType,
} from "@printshop/shared/contracts/quotes";
import type { Decimal } from "decimal.js";
import type { ErrorDetail } from "@printshop/shared/http";
import {
  applyMarkup,
  bandFor,
  type DecimalString,
  deriveMarkup,
  divideRounded,
  exact,
  ExactDecimal,
  type MarkupBand,
  type MarkupGroup,
  type MarkupLane,
  type MarkupType,
  roundTo,
  toDecimal,
  TOTAL_DECIMALS,
  UNIT_DECIMALS,
} from "./markup.ts";

/** The line types of the API contract (spec 2.4): one list, owned by shared/contracts. */
export { LINE_TYPES };
export type { AdjustmentLineType, LineType, MarkupSource, ValueType };
/** Every line that is not an adjustment: part of the group's goods total. */
export type GoodsLineType = Exclude<LineType, AdjustmentLineType>;

export interface VariantInput {
  quantity: number;
  buyPrice: DecimalString;
  extraCost: DecimalString;
  markupType: MarkupType | null;
  markupValue: DecimalString | null;
  markupSource: MarkupSource;
  /** The stored sell price; authoritative only while the row has no markup (see priceVariant). */
  unitPriceExGst: DecimalString;
  /** Freight and other per-line costs: priced like any variant, not counted in quantities. */
  isCustomLine: boolean;
  /** Presentation only; never read. */
  showOnDocuments?: boolean;
}

export type ManualVariant = VariantInput & { markupSource: "manual" };
export type GroupVariant = VariantInput & { markupSource: "group" };

export interface LineInput<T extends LineType = LineType> {
  lineType: T;
  /** Used only when the line has no variants (otherwise derived). */
  quantity: number;
  /** Used only when the line has no variants (otherwise derived). */
  unitPriceExGst: DecimalString;
  /** Discount and Surcharge lines: Flat (quantity × unitPriceExGst) or Percentage. */
  valueType: ValueType | null;
  percentage: DecimalString | null;
  /** Per-line discount on a goods line; Flat holds the amount in `discountPercentage`. */
  discountValueType: ValueType | null;
  discountPercentage: DecimalString | null;
  variants: readonly VariantInput[];
}

export type GoodsLine = LineInput<GoodsLineType>;
export type AdjustmentLine = LineInput<AdjustmentLineType>;

export interface DecorationInput {
  quantity: number;
  unitCost: DecimalString;
  markupType: MarkupType | null;
  markupValue: DecimalString | null;
  markupSource: MarkupSource;
  /** Stored unit charge; authoritative only while the unit lane has no markup. */
  baseUnitCost: DecimalString;
  setupCost: DecimalString;
  setupMarkupType: MarkupType | null;
  setupMarkupValue: DecimalString | null;
  setupMarkupSource: MarkupSource;
  /** Stored setup charge; authoritative only while the setup lane has no markup. */
  baseSetupCost: DecimalString;
  includeSetupCost: boolean;
  /** Presentation only; never read. */
  rollUp: boolean;
  /** Presentation only; never read. */
  rollUpSetup: boolean;
  /** Presentation only; never read. */
  showOnDocuments: boolean;
}

export interface GroupInput {
  lines: readonly LineInput[];
  decorations: readonly DecorationInput[];
  /** Stored and returned, but feeds nothing. */
  rollUpDecoration?: boolean;
  /** Stored and returned, but feeds nothing. */
  rollUpSetup?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Variants

export interface PricedVariant {
  /** buyPrice + extraCost. */
  cost: DecimalString;
  /** 4 decimals. */
  unitPriceExGst: DecimalString;
  /** quantity × unitPriceExGst, exact. */
  total: DecimalString;
}

/** The markup fields and sell price a row should store after a pricing event. */
export interface VariantPricing<S extends MarkupSource = MarkupSource> {
  markupType: MarkupType | null;
  markupValue: DecimalString | null;
  markupSource: S;
  /** 4 decimals. */
  unitPriceExGst: DecimalString;
}

/** buyPrice + extraCost, exact. */
export function variantCost(variant: Pick<VariantInput, "buyPrice" | "extraCost">): DecimalString {
  return toDecimal(variant.buyPrice, "buyPrice").plus(toDecimal(variant.extraCost, "extraCost"))
    .toFixed();
}

/** Sell from `cost ⊕ markup`, or the stored sell (to 4 decimals) when the markup is incomplete. */
function sellFor(
  cost: DecimalString,
  type: MarkupType | null,
  value: DecimalString | null,
  stored: DecimalString,
): DecimalString {
  if (type !== null && value !== null) return applyMarkup(cost, type, value);
  return roundTo(toDecimal(stored, "unitPriceExGst"), UNIT_DECIMALS);
}

/**
 * The variant's sell price: `cost ⊕ (markupType, markupValue)`. When `markupType` (or
 * `markupValue`) is null (old rows) the stored `unitPriceExGst` is authoritative; where a
 * markup is needed, `deriveMarkup` gives it back from the cost and the sell. Totals need no
 * markup: a percentage is searched for over up to 10 divisions, and a recomputation prices each
 * of a quote's variants.
 * Use after writing markupType/markupValue, and for totals; a cost change on a `manual` row
 * goes through `repriceOnCostChange`, a quantity or cost change on a `group` row through
 * `rebandVariant` first.
 */
export function priceVariant(variant: VariantInput): PricedVariant {
  // A recomputation prices every variant of the quote for a change to one of them: the others
  // are priced as they were the last time, and many rows of a quote share their figures.
  const key = `${variant.quantity}|${variant.buyPrice}|${variant.extraCost}|` +
    `${variant.markupType}|${variant.markupValue}|${variant.unitPriceExGst}`;
  const known = pricedVariants.get(key);
  if (known !== undefined) return known;
  const priced = Object.freeze(pricedVariantNow(variant));
  if (pricedVariants.size >= PRICED_VARIANTS_MAX) pricedVariants.clear();
  pricedVariants.set(key, priced);
  return priced;
}

/**
 * Variants priced, by every input priceVariant reads (it is pure, and what it answers is
 * frozen, so one answer serves every caller). Bounded: emptied when full.
 */
const pricedVariants = new Map<string, Readonly<PricedVariant>>();
const PRICED_VARIANTS_MAX = 4096;

function pricedVariantNow(variant: VariantInput): PricedVariant {
  const cost = variantCost(variant);
  const unitPriceExGst = sellFor(
    cost,
    variant.markupType,
    variant.markupValue,
    variant.unitPriceExGst,
  );
  return { cost, unitPriceExGst, total: exact(toDecimal(unitPriceExGst).times(variant.quantity)) };
}

/**
 * A `manual` row whose cost changed (`next` = new buyPrice/extraCost): the saved sell price
 * (its stored `unitPriceExGst`) stays and `markupValue` is re-derived in the row's `markupType` (see `deriveMarkup`). A row
 * without a markup type keeps a null markup; a percentage row whose new cost is ≤ 0 gets a null
 * `markupValue` (no percentage reaches the sell), so its stored sell stays authoritative.
 */
export function repriceOnCostChange(
  variant: ManualVariant,
  next: Pick<VariantInput, "buyPrice" | "extraCost">,
): VariantPricing<"manual"> {
  const sell = roundTo(toDecimal(variant.unitPriceExGst, "unitPriceExGst"), UNIT_DECIMALS);
  const cost = variantCost(next);
  return {
    markupType: variant.markupType,
    markupValue: variant.markupType === null ? null : deriveMarkup(cost, sell, variant.markupType),
    markupSource: "manual",
    unitPriceExGst: sell,
  };
}

/**
 * The operator writes `unitPriceExGst` directly: the row becomes `manual` and its markup is
 * derived in its current type (a row without a type keeps none).
 */
export function setManualSell(
  variant: VariantInput,
  sell: DecimalString,
): VariantPricing<"manual"> {
  const unitPriceExGst = roundTo(toDecimal(sell, "unitPriceExGst"), UNIT_DECIMALS);
  const cost = variantCost(variant);
  return {
    markupType: variant.markupType,
    markupValue: variant.markupType === null
      ? null
      : deriveMarkup(cost, unitPriceExGst, variant.markupType),
    markupSource: "manual",
    unitPriceExGst,
  };
}

function requireLane(group: MarkupGroup, lane: MarkupLane, what: string): void {
  if (group.lane !== lane) {
    throw new RangeError(`${what} needs a ${lane} markup group, got a ${group.lane} one`);
  }
}

/**
 * A `group` row re-banded (on quantity or cost change, and on reopen): it takes the markup of
 * the garment group's band matching its LINE's quantity (`lineQty`: Σ non-custom variant
 * quantities of the line, see `lineQuantity`) and its sell is recomputed. When no band matches, the row
 * keeps its markup and is priced as `priceVariant` would; `band` is then null.
 */
export function rebandVariant(
  variant: GroupVariant,
  lineQty: number,
  group: MarkupGroup,
): VariantPricing<"group"> & { band: MarkupBand | null } {
  requireLane(group, "garment", "a variant");
  const band = bandFor(group.bands, lineQty);
  const markupType = band?.markupType ?? variant.markupType;
  const markupValue = band?.markupValue ?? variant.markupValue;
  return {
    markupType,
    markupValue,
    markupSource: "group",
    unitPriceExGst: sellFor(variantCost(variant), markupType, markupValue, variant.unitPriceExGst),
    band,
  };
}

// ---------------------------------------------------------------------------------------------
// Lines

export interface LineTotals {
  /** Σ non-custom variant quantities, or the line's own quantity when it has no variants. */
  quantity: number;
  /** Non-custom total ÷ quantity (0 when quantity is 0), or the line's own; 4 decimals. */
  unitPriceExGst: DecimalString;
  /** Before the per-line discount (for Discount/Surcharge lines: the signed amount). */
  grossTotal: DecimalString;
  /** The per-line discount taken off `grossTotal` (0 when none). */
  discountAmount: DecimalString;
  /** The row's contribution to the group total: negative for a Discount line. */
  total: DecimalString;
  /** Priced variants, in input order. */
  variants: PricedVariant[];
}

export function isAdjustmentLine(line: LineInput): line is AdjustmentLine {
  return isAdjustment(line.lineType);
}

export function isGoodsLine(line: LineInput): line is GoodsLine {
  return !isAdjustmentLine(line);
}

/** A line's quantity as garment bands see it: Σ quantity of its non-custom variants. */
export function lineQuantity(variants: readonly VariantInput[]): number {
  return variants.reduce((sum, v) => (v.isCustomLine ? sum : sum + v.quantity), 0);
}

function optional(value: DecimalString | null, field: string): Decimal {
  return value === null ? new ExactDecimal(0) : toDecimal(value, field);
}

/**
 * A goods line (anything but Discount/Surcharge). With variants: quantity = Σ non-custom
 * variant quantities, gross total = Σ all variants' quantity × unitPriceExGst, unitPriceExGst =
 * non-custom total ÷ quantity to 4 decimals (0.0000 when the quantity is 0). Without variants:
 * quantity × unitPriceExGst. Then the per-line discount: Percentage takes `discountPercentage` %
 * off, Flat takes the amount in `discountPercentage` off (neither is clamped).
 */
export function lineTotals(line: GoodsLine): LineTotals {
  if (isAdjustment(line.lineType)) {
    throw new RangeError(`${line.lineType} lines are priced by adjustmentTotal`);
  }
  let quantity: number;
  let unitPriceExGst: DecimalString;
  let gross: Decimal;
  const variants = line.variants.map(priceVariant);
  if (line.variants.length > 0) {
    quantity = lineQuantity(line.variants);
    let nonCustom = new ExactDecimal(0);
    gross = new ExactDecimal(0);
    line.variants.forEach((variant, i) => {
      const total = toDecimal(variants[i]!.total);
      gross = gross.plus(total);
      if (!variant.isCustomLine) nonCustom = nonCustom.plus(total);
    });
    unitPriceExGst = quantity === 0
      ? roundTo(new ExactDecimal(0), UNIT_DECIMALS)
      : divideRounded(nonCustom, new ExactDecimal(quantity), UNIT_DECIMALS).toFixed(UNIT_DECIMALS);
  } else {
    quantity = line.quantity;
    unitPriceExGst = roundTo(toDecimal(line.unitPriceExGst, "unitPriceExGst"), UNIT_DECIMALS);
    gross = toDecimal(unitPriceExGst).times(quantity);
  }

  let discount = new ExactDecimal(0);
  if (line.discountValueType === "Percentage") {
    discount = gross.times(optional(line.discountPercentage, "discountPercentage")).div(100);
  } else if (line.discountValueType === "Flat") {
    discount = optional(line.discountPercentage, "discountPercentage");
  }
  return {
    quantity,
    unitPriceExGst,
    grossTotal: exact(gross),
    discountAmount: exact(discount),
    total: exact(gross.minus(discount)),
    variants,
  };
}

/**
 * A Discount or Surcharge line's signed amount: Flat = quantity × unitPriceExGst; Percentage =
 * `percentage` % of the group's goods total (`goodsTotal`). Discounts are negative, surcharges
 * positive. A null valueType counts as Flat; a null percentage as 0.
 */
export function adjustmentTotal(line: AdjustmentLine, goodsTotal: DecimalString): DecimalString {
  let amount: Decimal;
  if (line.valueType === "Percentage") {
    amount = toDecimal(goodsTotal, "goodsTotal").times(optional(line.percentage, "percentage"))
      .div(100);
  } else {
    const unit = toDecimal(
      roundTo(toDecimal(line.unitPriceExGst, "unitPriceExGst"), UNIT_DECIMALS),
    );
    amount = unit.times(line.quantity);
  }
  return exact(line.lineType === "Discount" ? amount.neg() : amount);
}

/**
 * Whether a line adds nothing to any total: it has no variants, and it is a goods line whose
 * total (quantity × unitPriceExGst, less its discount) is zero, or an adjustment of zero (Flat
 * quantity × unitPriceExGst, or a Percentage of 0 % or none). A new such line changes no total
 * and no other row's price: garment bands count a line's own variants only.
 */
export function addsNothing(line: LineInput): boolean {
  if (line.variants.length > 0) return false;
  // A percentage of any goods total is zero only when the percentage is.
  const total = isGoodsLine(line)
    ? lineTotals(line).total
    : adjustmentTotal(line as AdjustmentLine, "1");
  return toDecimal(total).isZero();
}

// ---------------------------------------------------------------------------------------------
// Decorations

export interface DecorationTotals {
  /** 4 decimals. */
  baseUnitCost: DecimalString;
  /** 4 decimals; computed whatever includeSetupCost says, but only charged when it is true. */
  baseSetupCost: DecimalString;
  /** baseSetupCost when includeSetupCost, else 0. */
  setupCharge: DecimalString;
  /** quantity × baseUnitCost + setupCharge, exact. */
  total: DecimalString;
}

/**
 * Unit lane `baseUnitCost = unitCost ⊕ (markupType, markupValue)`, setup lane
 * `baseSetupCost = setupCost ⊕ (setupMarkupType, setupMarkupValue)` (each falls back to its
 * stored value when its markup is null); total = quantity × baseUnitCost + (includeSetupCost ?
 * baseSetupCost : 0). rollUp, rollUpSetup and showOnDocuments are not read.
 */
export function decorationTotals(decoration: DecorationInput): DecorationTotals {
  const baseUnitCost = sellFor(
    decoration.unitCost,
    decoration.markupType,
    decoration.markupValue,
    decoration.baseUnitCost,
  );
  const baseSetupCost = sellFor(
    decoration.setupCost,
    decoration.setupMarkupType,
    decoration.setupMarkupValue,
    decoration.baseSetupCost,
  );
  const setupCharge = decoration.includeSetupCost ? toDecimal(baseSetupCost) : new ExactDecimal(0);
  return {
    baseUnitCost,
    baseSetupCost,
    setupCharge: exact(setupCharge),
    total: exact(toDecimal(baseUnitCost).times(decoration.quantity).plus(setupCharge)),
  };
}

/** A decoration's lanes as a write that names a charge directly leaves them. */
export interface DecorationCharges {
  markupSource: MarkupSource;
  markupValue: DecimalString | null;
  baseUnitCost: DecimalString;
  setupMarkupSource: MarkupSource;
  setupMarkupValue: DecimalString | null;
  baseSetupCost: DecimalString;
}

/**
 * The operator writes a decoration's charge (`baseUnitCost`, `baseSetupCost`) directly, as a
 * caller without costs.read must: each lane written becomes `manual`, keeps the charge (to 4
 * decimals) and has its markup derived from its cost in its current type, so that
 * `cost ⊕ markup` gives the charge back (a lane without a type keeps none). Lanes not written
 * are returned as they are.
 */
export function setManualCharges(
  decoration: DecorationInput,
  written: { baseUnitCost?: DecimalString; baseSetupCost?: DecimalString },
): DecorationCharges {
  const lane = (
    cost: DecimalString,
    type: MarkupType | null,
    charge: DecimalString,
  ): { markupSource: "manual"; markupValue: DecimalString | null; charge: DecimalString } => {
    const rounded = roundTo(toDecimal(charge, "charge"), UNIT_DECIMALS);
    return {
      markupSource: "manual",
      markupValue: type === null ? null : deriveMarkup(cost, rounded, type),
      charge: rounded,
    };
  };
  const unit = written.baseUnitCost === undefined
    ? null
    : lane(decoration.unitCost, decoration.markupType, written.baseUnitCost);
  const setup = written.baseSetupCost === undefined
    ? null
    : lane(decoration.setupCost, decoration.setupMarkupType, written.baseSetupCost);
  return {
    markupSource: unit?.markupSource ?? decoration.markupSource,
    markupValue: unit ? unit.markupValue : decoration.markupValue,
    baseUnitCost: unit?.charge ?? decoration.baseUnitCost,
    setupMarkupSource: setup?.markupSource ?? decoration.setupMarkupSource,
    setupMarkupValue: setup ? setup.markupValue : decoration.setupMarkupValue,
    baseSetupCost: setup?.charge ?? decoration.baseSetupCost,
  };
}

export interface DecorationPricing {
  markupType: MarkupType | null;
  markupValue: DecimalString | null;
  baseUnitCost: DecimalString;
  /** The unit band used; null when the lane is manual, no group was given, or none matched. */
  unitBand: MarkupBand | null;
  setupMarkupType: MarkupType | null;
  setupMarkupValue: DecimalString | null;
  baseSetupCost: DecimalString;
  setupBand: MarkupBand | null;
}

/**
 * Re-bands the decoration's `group` lanes: the unit lane on the decoration quantity with a
 * `decoration` group, the setup lane on the setup cost with a `setup` group. `manual` lanes, lanes
 * without a group given, and lanes no band matches keep their markup. The setup lane is
 * re-banded even while includeSetupCost is false (it stays uncharged, so totals don't move).
 */
export function rebandDecoration(
  decoration: DecorationInput,
  groups: { unit?: MarkupGroup | null; setup?: MarkupGroup | null },
): DecorationPricing {
  const unitGroup = decoration.markupSource === "group" ? groups.unit ?? null : null;
  const setupGroup = decoration.setupMarkupSource === "group" ? groups.setup ?? null : null;
  if (unitGroup) requireLane(unitGroup, "decoration", "a decoration's unit lane");
  if (setupGroup) requireLane(setupGroup, "setup", "a decoration's setup lane");

  const unitBand = unitGroup ? bandFor(unitGroup.bands, decoration.quantity) : null;
  const setupBand = setupGroup
    ? bandFor(setupGroup.bands, toDecimal(decoration.setupCost, "setupCost").toFixed())
    : null;
  const markupType = unitBand?.markupType ?? decoration.markupType;
  const markupValue = unitBand?.markupValue ?? decoration.markupValue;
  const setupMarkupType = setupBand?.markupType ?? decoration.setupMarkupType;
  const setupMarkupValue = setupBand?.markupValue ?? decoration.setupMarkupValue;
  const priced = decorationTotals({
    ...decoration,
    markupType,
    markupValue,
    setupMarkupType,
    setupMarkupValue,
  });
  return {
    markupType,
    markupValue,
    baseUnitCost: priced.baseUnitCost,
    unitBand,
    setupMarkupType,
    setupMarkupValue,
    baseSetupCost: priced.baseSetupCost,
    setupBand,
  };
}

// ---------------------------------------------------------------------------------------------
// Groups and quote

export interface GroupTotals {
  /** Per line, in input order; a Discount/Surcharge line's `total` is its signed amount. */
  lines: LineTotals[];
  /** Per decoration, in input order. */
  decorations: DecorationTotals[];
  /** Σ totals of every row that is not a Discount or Surcharge line. */
  goodsTotal: DecimalString;
  /** Σ signed Discount/Surcharge amounts. */
  adjustmentsTotal: DecimalString;
  /** goodsTotal + adjustmentsTotal = Σ row totals, unrounded. */
  total: DecimalString;
  /** Σ quantity of the group's Garment lines. */
  totalQuantity: number;
}

function sum(values: readonly DecimalString[]): Decimal {
  return values.reduce((acc, v) => acc.plus(toDecimal(v)), new ExactDecimal(0));
}

/** A group's rows priced and summed; the group-level roll-up flags are not read. */
export function groupTotals(group: GroupInput): GroupTotals {
  const goods = group.lines.map((line) => (isGoodsLine(line) ? lineTotals(line) : null));
  const decorations = group.decorations.map(decorationTotals);
  const goodsTotal = sum(goods.flatMap((t) => (t ? [t.total] : []))).plus(
    sum(decorations.map((d) => d.total)),
  );
  const goodsTotalText = exact(goodsTotal);

  const lines = group.lines.map((line, i): LineTotals => {
    const priced = goods[i];
    if (priced) return priced;
    const amount = adjustmentTotal(line as AdjustmentLine, goodsTotalText);
    return {
      quantity: line.quantity,
      unitPriceExGst: roundTo(toDecimal(line.unitPriceExGst, "unitPriceExGst"), UNIT_DECIMALS),
      grossTotal: amount,
      discountAmount: exact(new ExactDecimal(0)),
      total: amount,
      variants: line.variants.map(priceVariant),
    };
  });
  const adjustments = sum(group.lines.flatMap((line, i) => (
    isAdjustmentLine(line) ? [lines[i]!.total] : []
  )));

  return {
    lines,
    decorations,
    goodsTotal: goodsTotalText,
    adjustmentsTotal: exact(adjustments),
    total: exact(goodsTotal.plus(adjustments)),
    totalQuantity: group.lines.reduce(
      (acc, line, i) => (line.lineType === "Garment" ? acc + lines[i]!.quantity : acc),
      0,
    ),
  };
}

/** Totals are stored as numeric(16, 2): everything below 10^14. */
export const MAX_QUOTE_TOTAL = 1e14;

/** The 400 detail of a change that would take a quote's total past what is stored. */
export function totalTooLarge(): ErrorDetail {
  return { path: "totalIncGst", message: `Must stay below ${MAX_QUOTE_TOTAL}` };
}

export interface QuoteTotals {
  groups: GroupTotals[];
  /** Σ group totals before rounding. */
  groupsTotal: DecimalString;
  /** round2(Σ group totals), half away from zero. */
  subtotalExGst: DecimalString;
  /** round2(subtotalExGst × taxRatePct / 100), half away from zero. */
  gstAmount: DecimalString;
  /** subtotalExGst + gstAmount. */
  totalIncGst: DecimalString;
}

/** The quote's totals from its groups and tax rate (e.g. `"10"` for GST 10 %). */
export function quoteTotals(groups: readonly GroupInput[], taxRatePct: DecimalString): QuoteTotals {
  const priced = groups.map(groupTotals);
  const groupsTotal = sum(priced.map((g) => g.total));
  const subtotal = toDecimal(roundTo(groupsTotal, TOTAL_DECIMALS));
  const gst = toDecimal(
    roundTo(subtotal.times(toDecimal(taxRatePct, "taxRatePct")).div(100), TOTAL_DECIMALS),
  );
  return {
    groups: priced,
    groupsTotal: exact(groupsTotal),
    subtotalExGst: subtotal.toFixed(TOTAL_DECIMALS),
    gstAmount: gst.toFixed(TOTAL_DECIMALS),
    totalIncGst: subtotal.plus(gst).toFixed(TOTAL_DECIMALS),
  };
}

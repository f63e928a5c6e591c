/**
 * Markups and markup groups (pricing rules: docs "Quote pricing rules", spec 2.5–2.6).
 *
 * Money is exchanged as decimal strings (`DecimalString`): Postgres `numeric` columns arrive as
 * strings and are stored from strings without loss, and the API edge turns them into JSON
 * numbers. All arithmetic runs on `ExactDecimal`, never on JS numbers.
 */
import { Decimal } from "decimal.js";

/** A finite decimal written in plain or exponent notation, e.g. `"5.50"`, `"-20.9"`, `"1e-4"`. */
export type DecimalString = string;

import type { MarkupLane, MarkupType } from "@printshop/shared/contracts/quotes";

export type { MarkupLane, MarkupType };

export interface MarkupBand {
  /** A quantity (garment, decoration lanes; a whole number) or a setup cost (setup lane). */
  from: DecimalString;
  markupType: MarkupType;
  markupValue: DecimalString;
}

export interface MarkupGroup {
  lane: MarkupLane;
  bands: readonly MarkupBand[];
}

/** Decimals kept by unit amounts (sell prices, base unit and setup costs, derived unit prices). */
export const UNIT_DECIMALS = 4;
/** Decimals kept by the rounded quote totals (subtotal, GST, total). */
export const TOTAL_DECIMALS = 2;
/** Most decimals a re-derived percentage markup is given (see `deriveMarkup`). */
export const MAX_PERCENTAGE_DECIMALS = 10;

/**
 * The decimal.js constructor every pricing computation uses: 200 significant digits (sums and
 * products of money never come near it, so they are exact) and ROUND_HALF_UP, which decimal.js
 * defines as half away from zero. A clone, so the global `Decimal` settings are left alone.
 */
export const ExactDecimal: Decimal.Constructor = Decimal.clone({
  precision: 200,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -1000,
  toExpPos: 1000,
});

/** Quotients are truncated at 200 digits, so a later half-away rounding to a few places is exact. */
const Quotient: Decimal.Constructor = Decimal.clone({
  precision: 200,
  rounding: Decimal.ROUND_DOWN,
});

const DECIMAL_PATTERN = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Decimals parsed from strings, by string. A recomputation parses the same few amounts hundreds
 * of times (every variant's costs, markups, sells and totals, many alike), and parsing is most
 * of the arithmetic's cost. Decimals are immutable, so one parsed value serves every caller.
 * Bounded: emptied when full.
 */
const parsed = new Map<string, Decimal>();
const PARSED_MAX = 4096;

/** Parses a finite decimal string; anything else (NaN, Infinity, hex, "") is a caller bug. */
export function toDecimal(value: DecimalString | number, field = "value"): Decimal {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError(`${field} is not a finite number: ${value}`);
    return new ExactDecimal(value);
  }
  const known = parsed.get(value);
  if (known !== undefined) return known;
  if (!DECIMAL_PATTERN.test(value.trim())) {
    throw new RangeError(`${field} is not a decimal: ${JSON.stringify(value)}`);
  }
  const decimal = new ExactDecimal(value.trim());
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(value, decimal);
  return decimal;
}

function isDecimalString(value: string): boolean {
  return DECIMAL_PATTERN.test(value.trim());
}

/** Rounds half away from zero to `decimals` places and writes exactly that many decimals. */
export function roundTo(value: Decimal, decimals: number): string {
  return value.toDecimalPlaces(decimals, Decimal.ROUND_HALF_UP).toFixed(decimals);
}

/** `a ÷ b` rounded half away from zero to `decimals` places (b ≠ 0). */
export function divideRounded(a: Decimal, b: Decimal, decimals: number): Decimal {
  const quotient = new Quotient(a.toString()).div(new Quotient(b.toString()));
  return new ExactDecimal(quotient.toString()).toDecimalPlaces(decimals, Decimal.ROUND_HALF_UP);
}

/** Exact, unrounded, in plain notation, with at least `minDecimals` decimals (`77` → `77.00`). */
export function exact(value: Decimal, minDecimals = TOTAL_DECIMALS): string {
  return value.toFixed(Math.max(minDecimals, value.decimalPlaces()));
}

/** `cost ⊕ markup` before rounding: percentage `cost + cost × value / 100`; fixed `cost + value`. */
function markedUp(cost: Decimal, type: MarkupType, value: Decimal): Decimal {
  return type === "percentage" ? cost.plus(cost.times(value).div(100)) : cost.plus(value);
}

/** The sell price `cost ⊕ (type, value)`, a unit amount: 4 decimals, half away from zero. */
export function applyMarkup(
  cost: DecimalString,
  type: MarkupType,
  value: DecimalString,
): DecimalString {
  const sell = markedUp(toDecimal(cost, "cost"), type, toDecimal(value, "markupValue"));
  return roundTo(sell, UNIT_DECIMALS);
}

/**
 * The markup that turns `cost` into `sell`, in the given type.
 *
 * - fixed: `sell − cost`, exact.
 * - percentage: `(sell − cost) / cost × 100` when cost > 0, else `null`. That quotient often
 *   repeats (8.25 on 6.50 is 26.923076…%), so it is rounded half away from zero to the fewest
 *   decimals (at most `MAX_PERCENTAGE_DECIMALS`) for which `applyMarkup(cost, "percentage", it)`
 *   gives back `sell` at 4 decimals. That keeps `sell = cost ⊕ markup` true for any cost below
 *   10^8, and an exact quotient is returned as is (5.50 → 8.25 gives `"50"`).
 *
 * Markup values are written in plain notation without trailing zeros.
 */
export function deriveMarkup(
  cost: DecimalString,
  sell: DecimalString,
  type: "fixed",
): DecimalString;
export function deriveMarkup(
  cost: DecimalString,
  sell: DecimalString,
  type: MarkupType,
): DecimalString | null;
export function deriveMarkup(
  cost: DecimalString,
  sell: DecimalString,
  type: MarkupType,
): DecimalString | null {
  const c = toDecimal(cost, "cost");
  const s = toDecimal(sell, "sell");
  if (type === "fixed") return s.minus(c).toFixed();
  if (c.lte(0)) return null;
  const target = s.toDecimalPlaces(UNIT_DECIMALS, Decimal.ROUND_HALF_UP);
  const margin = s.minus(c).times(100);
  for (let decimals = 0; decimals < MAX_PERCENTAGE_DECIMALS; decimals++) {
    const candidate = divideRounded(margin, c, decimals);
    const back = markedUp(c, "percentage", candidate);
    if (back.toDecimalPlaces(UNIT_DECIMALS, Decimal.ROUND_HALF_UP).eq(target)) {
      return candidate.toFixed();
    }
  }
  return divideRounded(margin, c, MAX_PERCENTAGE_DECIMALS).toFixed();
}

/** A reason a band list is refused; `message` is fit for a 400's details. */
export type BandProblem =
  | { code: "no_bands"; message: string }
  | { code: "invalid_number"; index: number; field: "from" | "markupValue"; message: string }
  | { code: "not_a_quantity"; index: number; message: string }
  | { code: "negative_from"; index: number; message: string }
  | { code: "duplicate_from"; from: DecimalString; indexes: number[]; message: string }
  | { code: "first_band_start"; from: DecimalString; allowed: DecimalString[]; message: string };

/** Whether the lane's bands start at a quantity (garment, decoration) or a cost (setup). */
export function bandsOnQuantity(lane: MarkupLane): boolean {
  return lane !== "setup";
}

/**
 * Problems with a markup group's bands, empty when they are valid: at least one band; every
 * `from` a non-negative decimal (a whole number on quantity lanes); `from` values unique; the
 * lowest `from` is 0 or 1 on quantity lanes and 0 on the setup (cost) lane. Band order in the
 * list does not matter. Negative markup values are not refused (nothing in the rules forbids a
 * band that sells below cost).
 */
export function validateBands(lane: MarkupLane, bands: readonly MarkupBand[]): BandProblem[] {
  const problems: BandProblem[] = [];
  if (bands.length === 0) {
    return [{ code: "no_bands", message: "a markup group needs at least one band" }];
  }
  const froms: { index: number; from: Decimal }[] = [];
  bands.forEach((band, index) => {
    if (!isDecimalString(band.markupValue)) {
      problems.push({
        code: "invalid_number",
        index,
        field: "markupValue",
        message: `bands[${index}].markupValue is not a number`,
      });
    }
    if (!isDecimalString(band.from)) {
      problems.push({
        code: "invalid_number",
        index,
        field: "from",
        message: `bands[${index}].from is not a number`,
      });
      return;
    }
    const from = toDecimal(band.from);
    if (from.isNeg() && !from.isZero()) {
      problems.push({
        code: "negative_from",
        index,
        message: `bands[${index}].from must not be negative`,
      });
    }
    if (bandsOnQuantity(lane) && !from.isInteger()) {
      problems.push({
        code: "not_a_quantity",
        index,
        message: `bands[${index}].from must be a whole quantity on the ${lane} lane`,
      });
    }
    froms.push({ index, from });
  });

  const seen = new Map<string, number[]>();
  for (const { index, from } of froms) {
    const key = from.toFixed();
    seen.set(key, [...(seen.get(key) ?? []), index]);
  }
  for (const [from, indexes] of seen) {
    if (indexes.length > 1) {
      problems.push({
        code: "duplicate_from",
        from,
        indexes,
        message: `bands ${indexes.join(", ")} share from ${from}`,
      });
    }
  }

  if (froms.length > 0) {
    const lowest = froms.reduce((a, b) => (b.from.lt(a.from) ? b : a)).from;
    const allowed = bandsOnQuantity(lane) ? ["0", "1"] : ["0"];
    if (!allowed.some((start) => lowest.eq(start))) {
      problems.push({
        code: "first_band_start",
        from: lowest.toFixed(),
        allowed,
        message: `the first band of the ${lane} lane must start at ${allowed.join(" or ")}`,
      });
    }
  }
  return problems;
}

/** The band with the greatest `from` ≤ `value` (a quantity or a setup cost), or null if none. */
export function bandFor(
  bands: readonly MarkupBand[],
  value: DecimalString | number,
): MarkupBand | null {
  // A quantity against whole-number bands (the garment and decoration lanes): a binary search
  // over the bands' starts, read once per list. A line's variants re-band on every write.
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    const starts = wholeStarts(bands);
    if (starts !== null) return startingAtOrBelow(starts, value);
  }
  const v = toDecimal(value, "value");
  let best: { band: MarkupBand; from: Decimal } | null = null;
  for (const band of bands) {
    const from = toDecimal(band.from, "from");
    if (from.lte(v) && (best === null || from.gt(best.from))) best = { band, from };
  }
  return best?.band ?? null;
}

/** A band list's starts as whole numbers, ascending (earlier band first among equal starts). */
interface WholeStarts {
  from: number[];
  band: MarkupBand[];
}

const wholeStartsOf = new WeakMap<readonly MarkupBand[], WholeStarts | null>();

/** The starts of `bands` when every one is a whole number, else null; kept per list. */
function wholeStarts(bands: readonly MarkupBand[]): WholeStarts | null {
  const known = wholeStartsOf.get(bands);
  if (known !== undefined) return known;
  const froms = bands.map((band) => Number(band.from));
  const whole = froms.every((from, i) =>
    Number.isSafeInteger(from) && toDecimal(bands[i]!.from, "from").eq(from)
  );
  const order = bands.map((_, i) => i).sort((a, b) => froms[a]! - froms[b]! || a - b);
  const starts = whole
    ? { from: order.map((i) => froms[i]!), band: order.map((i) => bands[i]!) }
    : null;
  wholeStartsOf.set(bands, starts);
  return starts;
}

/** The band with the greatest start ≤ value (the first listed among equal starts), or null. */
function startingAtOrBelow(starts: WholeStarts, value: number): MarkupBand | null {
  let lo = 0;
  let hi = starts.from.length; // the first index whose start is > value
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts.from[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return null;
  let at = lo - 1;
  while (at > 0 && starts.from[at - 1] === starts.from[at]) at--;
  return starts.band[at]!;
}

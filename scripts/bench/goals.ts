/**
 * Goals and ratios: a product figure against its floor (a ratio) or against an absolute bound,
 * judged met or not met and printed the same way by every part that has goals (the ratios part,
 * the edge part).
 */

export interface Goal {
  /** What is compared, e.g. "POST /v1/quotes req/s ÷ write floor req/s". */
  figure: string;
  product: number;
  /** The floor the product is divided by; null for an absolute goal (ms), judged on `product`. */
  floor: number | null;
  /** product ÷ floor; null for an absolute goal. */
  ratio: number | null;
  /** The unit of an absolute goal's product and target ("ms"); absent for a ratio. */
  unit?: string;
  comparator: "≥" | "≤";
  target: number;
  met: boolean;
}

/** product ÷ floor against the goal; a ratio that cannot be computed is never met. */
export function goal(
  figure: string,
  product: number,
  floor: number,
  comparator: "≥" | "≤",
  target: number,
): Goal {
  const ratio = product / floor;
  return {
    figure,
    product,
    floor,
    ratio,
    comparator,
    target,
    met: compare(ratio, comparator, target),
  };
}

/** An absolute figure (ms) against the bound; one that was not measured is never met. */
export function absoluteGoal(
  figure: string,
  product: number,
  unit: string,
  comparator: "≥" | "≤",
  target: number,
): Goal {
  return {
    figure,
    product,
    floor: null,
    ratio: null,
    unit,
    comparator,
    target,
    met: compare(product, comparator, target),
  };
}

function compare(value: number, comparator: "≥" | "≤", target: number): boolean {
  return Number.isFinite(value) && (comparator === "≥" ? value >= target : value <= target);
}

/** A ratio printed beside the goals without one of its own (the issue sets none for it). */
export interface Ratio {
  figure: string;
  product: number;
  floor: number;
  ratio: number;
}

export function ratio(figure: string, product: number, floor: number): Ratio {
  return { figure, product, floor, ratio: product / floor };
}

/** What a goal is judged on: the ratio, or an absolute goal's own figure. */
export const goalValue = (g: Pick<Goal, "ratio" | "product">): number => g.ratio ?? g.product;

/** A limit on an absolute figure (RSS, CPU): met when the value is within it. */
export function withinLimit(value: number | null, limit: number): boolean {
  return value !== null && Number.isFinite(value) && value <= limit;
}

export const metText = (met: boolean): string => met ? "met" : "not met";

export function formatGoal(g: Pick<Goal, "comparator" | "target" | "unit">): string {
  return g.unit
    ? `${g.comparator} ${g.target} ${g.unit}`
    : `${g.comparator} ${g.target.toFixed(2)}`;
}

/** A goal's value as printed: a ratio to two decimals, an absolute figure with its unit. */
export function formatGoalValue(g: Pick<Goal, "ratio" | "product" | "unit">): string {
  const v = goalValue(g);
  if (!Number.isFinite(v)) return "–";
  return g.unit ? `${v.toFixed(v < 100 ? 1 : 0)} ${g.unit}` : v.toFixed(2);
}

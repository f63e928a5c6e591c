/** Value types and enums every quotes resource uses; each list is written here only. */
import { z } from "zod";
import { Text } from "../common.ts";

/** Whole number of units, 0 allowed (a size nobody ordered yet). */
export const Quantity = z.int().min(0, "Must not be negative").max(
  10_000_000,
  "Must be at most 10000000",
);

const decimalsOf = (value: number): number => {
  const text = String(value);
  if (text.includes("e-")) return Number(text.split("e-")[1]);
  return text.split(".")[1]?.length ?? 0;
};

/** A money or rate amount sent as a JSON number, with at most `decimals` decimals. */
export const Amount = (
  decimals = 4,
  { min = 0, max = 1_000_000_000 }: { min?: number; max?: number } = {},
): z.ZodType<number> =>
  // Bounds as min/max (not a refinement) so the published schema states them too.
  z.number().min(min, min === 0 ? "Must not be negative" : `Must be ≥ ${min}`)
    .max(max, `Must be at most ${max}`)
    .refine((v) => decimalsOf(v) <= decimals, `Must have at most ${decimals} decimals`);

/** A markup value: percentages may be negative (a discount below cost) and finely derived. */
export const MarkupValue = z.number().min(-1_000_000).max(1_000_000)
  .refine((v) => decimalsOf(v) <= 10, "Must have at most 10 decimals");

/** Centimetres: 0 is a measurement, null is absence, negative is refused. */
export const Centimetres = z.number().min(0, "Must not be negative").max(100_000)
  .refine((v) => decimalsOf(v) <= 2, "Must have at most 2 decimals");

export const OptionalText = (max: number): z.ZodNullable<z.ZodType<string>> => Text(max).nullable();

export const Url = z.url({ protocol: /^https?$/, error: "Must be an http(s) URL" }).max(
  2000,
  "Must be at most 2000 characters",
);

/** An https address only: what a customer's browser loads (images) or a file link. */
export const HttpsUrl = z.url({ protocol: /^https$/, error: "Must be an https URL" }).max(
  2000,
  "Must be at most 2000 characters",
);

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, error: string) =>
  z.enum(values, { error });

export const LINE_TYPES = [
  "Garment",
  "Decoration",
  "Service",
  "Cost",
  "Discount",
  "Surcharge",
  "Other",
] as const;
export const LineType = oneOf(LINE_TYPES, `Must be one of ${LINE_TYPES.join(", ")}`);
export type LineType = typeof LINE_TYPES[number];

/** Lines whose amount depends on the rest of the group; they have no variants. */
export const ADJUSTMENT_LINE_TYPES = [
  "Discount",
  "Surcharge",
] as const satisfies readonly LineType[];
export type AdjustmentLineType = typeof ADJUSTMENT_LINE_TYPES[number];

export function isAdjustment(lineType: string): lineType is AdjustmentLineType {
  return (ADJUSTMENT_LINE_TYPES as readonly string[]).includes(lineType);
}

export const VALUE_TYPES = ["Flat", "Percentage"] as const;
export const ValueType = oneOf(VALUE_TYPES, "Must be Flat or Percentage");
export type ValueType = typeof VALUE_TYPES[number];

export const MARKUP_TYPES = ["percentage", "fixed"] as const;
export const MarkupType = oneOf(MARKUP_TYPES, "Must be percentage or fixed");
export type MarkupType = typeof MARKUP_TYPES[number];

export const MARKUP_SOURCES = ["group", "manual"] as const;
export const MarkupSource = oneOf(MARKUP_SOURCES, "Must be group or manual");
export type MarkupSource = typeof MARKUP_SOURCES[number];

export const MARKUP_LANES = ["garment", "decoration", "setup"] as const;
export const MarkupLane = oneOf(MARKUP_LANES, "Must be garment, decoration or setup");
/** Garment and decoration lanes band on a quantity; the setup lane bands on a setup cost. */
export type MarkupLane = typeof MARKUP_LANES[number];

/** Decoration techniques; the same set as a job's decoration method. */
export const DECORATION_METHODS = [
  "ScreenPrinting",
  "Embroidery",
  "DirectToGarment",
  "DirectToFilm",
  "HeatTransfer",
  "Sublimation",
  "PadPrinting",
  "LaserEngraving",
  "Other",
] as const;
export const DecorationMethod = oneOf(
  DECORATION_METHODS,
  `Must be one of ${DECORATION_METHODS.join(", ")}`,
);
export type DecorationMethod = typeof DECORATION_METHODS[number];

export const SortOrder = z.int().min(1, "Must be at least 1").max(100_000);

export const Flag = z.boolean();

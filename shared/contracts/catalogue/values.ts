/** Value types and enums of the catalogue; each list is written here only. */
import { z } from "zod";
import { Text } from "../common.ts";
import { Url } from "../quotes/values.ts";

/** Where a catalogue row came from: keyed in by hand, a supplier's feed, a file import, the API. */
export const GARMENT_SOURCES = ["manual", "supplier_feed", "import", "api"] as const;
export const GarmentSource = z.enum(GARMENT_SOURCES, {
  error: `Must be one of ${GARMENT_SOURCES.join(", ")}`,
});
export type GarmentSource = typeof GARMENT_SOURCES[number];

/** Why stock changed; `opening` is the figure a variant was created with. */
export const STOCK_REASONS = [
  "opening",
  "received",
  "shipped",
  "used_in_production",
  "damaged",
  "returned",
  "stocktake",
  "transfer",
  "correction",
  "other",
] as const;
export const StockReason = z.enum(STOCK_REASONS, {
  error: `Must be one of ${STOCK_REASONS.join(", ")}`,
});
export type StockReason = typeof STOCK_REASONS[number];

/**
 * The size order an organisation starts with: youth, then adult, then talls, then one-size.
 * Sizes are data: any label is accepted, and labels not in the order sort after it.
 */
export const DEFAULT_SIZE_ORDER = [
  "YXS",
  "YS",
  "YM",
  "YL",
  "YXL",
  "XXS",
  "XS",
  "S",
  "M",
  "L",
  "XL",
  "2XL",
  "XXL",
  "3XL",
  "XXXL",
  "4XL",
  "5XL",
  "6XL",
  "LT",
  "XLT",
  "2XLT",
  "3XLT",
  "4XLT",
  "OSFA",
] as const;

/** Most units a stock figure or adjustment may hold, either way. */
export const STOCK_MAX = 100_000_000;

/** A stock figure that cannot be negative (reserved, supplier stock, a location's count). */
export const StockCount = z.int().min(0, "Must not be negative").max(
  STOCK_MAX,
  `Must be at most ${STOCK_MAX}`,
);

/** A size or colour label as the shop or its supplier spells it. */
export const Label = Text(100);

export const ColorHex = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "Must be a colour as #RRGGBB");

export const ImageUrls = z.array(Url).max(50, "At most 50 images");

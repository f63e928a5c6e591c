/**
 * The quotes the benches make: how many the quotes part seeds, the full quote's shape (seeded by
 * the quotes part, built through the API by the ratios part), and the garment markup bands
 * their `group` variants are priced by.
 */

/** `BENCH_QUOTES` seeds fewer (or more) quotes, e.g. for a quick try of the script. */
export const QUOTES_SEEDED = Number(Deno.env.get("BENCH_QUOTES") ?? 10_000);
if (!Number.isInteger(QUOTES_SEEDED) || QUOTES_SEEDED < 1) {
  throw new Error(`BENCH_QUOTES must be a whole number ≥ 1, not ${Deno.env.get("BENCH_QUOTES")}`);
}
/**
 * The full quote of the quotes issue: 3 groups × 4 Garment lines × 5 variants (the quotes part's
 * seed adds 2 decorations per group). scripts/bench_ratios.ts builds its full quotes through the
 * API in the same shape.
 */
export const FULL_QUOTE_SHAPE = { groups: 3, linesPerGroup: 4, variantsPerLine: 5 } as const;

/** The default garment markup group: percentage by line quantity. */
export const GARMENT_BANDS = [
  { from: 1, markupType: "percentage", markupValue: 60 },
  { from: 24, markupType: "percentage", markupValue: 50 },
  { from: 48, markupType: "percentage", markupValue: 42 },
  { from: 72, markupType: "percentage", markupValue: 36 },
  { from: 144, markupType: "percentage", markupValue: 30 },
] as const;

/** The markup % of the band a line quantity falls in. */
export function bandFor(quantity: number): number {
  let pct: number = GARMENT_BANDS[0].markupValue;
  for (const band of GARMENT_BANDS) if (band.from <= quantity) pct = band.markupValue;
  return pct;
}

/** `CASE` over the band list, highest `from` first: the band whose from ≤ the quantity. */
export function bandCaseSql(column: string): string {
  const arms = [...GARMENT_BANDS].reverse()
    .map((b) => `WHEN ${column} >= ${b.from} THEN ${b.markupValue}`).join(" ");
  return `CASE ${arms} END`;
}

/** The quotes part's report: the shape of bench-results/quotes.json and its table. */
import type { GARMENT_BANDS } from "./quotes_shape.ts";
import type { LatencyFigures } from "./stats.ts";

export interface QuotesReport {
  date: string;
  machine: { cpus: number; deno: string };
  seed: {
    organizationId: string;
    quotes: number;
    perQuote: {
      groups: number;
      garmentLinesPerGroup: number;
      variantsPerLine: number;
      decorationsPerGroup: number;
    };
    note: string;
    rows: Record<string, number>;
    groupSourceVariants: number;
    garmentBands: typeof GARMENT_BANDS;
    seedSeconds: number;
    vacuumAnalyzeSeconds: number;
    pricingCheckedOnQuotes: number;
  };
  list: {
    request: string;
    itemsPerPage: number;
    variantsPerPage: number;
    responseBytes: { min: number; median: number; max: number };
    /** Every page once, in order, before the figures below: each quote's first API read. */
    firstPass: LatencyFigures & { pages: number; seconds: number };
    /** Sequential, after the first pass: the goal's figure. */
    sequential: LatencyFigures;
    load: {
      connections: number;
      durationS: number;
      requestsPerSecond: number;
      /** Response bytes per second under the load (autocannon's throughput: heads and bodies). */
      bytesPerSecond: number;
      non2xx: number;
    };
    /** The same request at smaller `limit`s, sequential, for context. */
    smallerPages: ({ limit: number } & LatencyFigures)[];
    goalP50MsAtMost: number;
  };
  reband: {
    request: string;
    quoteId: string;
    variantId: string;
    quantities: [number, number];
    lineQuantities: [number, number];
    markupPct: [number, number];
    unitPriceExGst: [number, number];
    sequential: LatencyFigures;
    goalP50MsAtMost: number;
  };
}

/** The second table of `deno task bench`. */
export function formatQuotesReport(report: QuotesReport, writtenTo: string): string {
  const { seed, list, reband } = report;
  const r = seed.rows;
  const num = (n: number | undefined, digits = 2): string =>
    (n === undefined ? "–" : n.toFixed(digits)).padStart(9);
  const row = (
    label: string,
    rps: number | undefined,
    figures: LatencyFigures,
    goal?: number,
  ): string =>
    `${label.padEnd(46)}${num(rps, 1)}${num(figures.p50Ms)}${num(figures.p99Ms)}` +
    (goal === undefined ? "" : `   p50 ≤ ${goal} ms: ${figures.p50Ms <= goal ? "met" : "NOT met"}`);
  const mb = (bytes: number): string => `${(bytes / 1_000_000).toFixed(2)} MB`;
  const [q0, q1] = reband.quantities;
  const [l0, l1] = reband.lineQuantities;
  const [m0, m1] = reband.markupPct;
  const [u0, u1] = reband.unitPriceExGst;
  return [
    "",
    `Quotes at scale: ${seed.quotes} quotes of one organisation, each ${seed.perQuote.groups} groups × ` +
    `(${seed.perQuote.garmentLinesPerGroup} Garment lines × ${seed.perQuote.variantsPerLine} variants + ` +
    `${seed.perQuote.decorationsPerGroup} decorations)`,
    `  "+ 2 decorations each" is read as 2 decorations per group (6 per quote)`,
    `  rows: ${r.quotes} quotes, ${r.groups} groups, ${r.lines} lines, ${r.variants} variants ` +
    `(${seed.groupSourceVariants} banded by the default garment group), ${r.decorations} decorations`,
    `  seeded with set-based SQL in ${seed.seedSeconds.toFixed(1)} s, VACUUM ANALYZE ` +
    `${
      seed.vacuumAnalyzeSeconds.toFixed(1)
    } s; pricing of ${seed.pricingCheckedOnQuotes} sampled ` +
    `quotes re-checked with services/quotes/domain/pricing.ts`,
    "",
    `${"through the gateway".padEnd(46)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${
      "p99 ms".padStart(9)
    }   goal`,
    row(
      `GET /v1/quotes?limit=${list.itemsPerPage} (offset cycling)`,
      list.load.requestsPerSecond,
      list.sequential,
      list.goalP50MsAtMost,
    ),
    ...list.smallerPages.map((p) => row(`  same, limit=${p.limit}`, undefined, p)),
    row(
      "PATCH /v1/quote-variants/{id} (re-band)",
      undefined,
      reband.sequential,
      reband.goalP50MsAtMost,
    ),
    "",
    `list: first, every page once in order (each quote's first read through the API; the seed ` +
    `wrote rows only): ${list.firstPass.pages} pages in ${list.firstPass.seconds.toFixed(1)} s, ` +
    `p50 ${list.firstPass.p50Ms.toFixed(1)} ms, p99 ${list.firstPass.p99Ms.toFixed(1)} ms`,
    `list: then latency over ${list.sequential.samples} sequential requests after warm-up; req/s from ` +
    `autocannon, ${list.load.durationS} s at ${list.load.connections} connections ` +
    `(${list.load.non2xx} non-2xx), ${mb(list.load.bytesPerSecond)}/s answered`,
    `list page: ${list.itemsPerPage} quotes with ${list.variantsPerPage} variants, ` +
    `${mb(list.responseBytes.median)} (min ${mb(list.responseBytes.min)}, max ` +
    `${mb(list.responseBytes.max)})`,
    `re-band: ${reband.sequential.samples} sequential PATCHes after warm-up, quantity ${q0} ↔ ${q1}` +
    ` → line ${l0} ↔ ${l1} units → markup ${m0} % ↔ ${m1} %, unitPriceExGst ${u0} ↔ ${u1} ` +
    `(checked in the answers)`,
    `Figures written to ${writtenTo}`,
  ].join("\n");
}

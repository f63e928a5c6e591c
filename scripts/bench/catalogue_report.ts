/** The catalogue part's report: the shape of bench-results/catalogue.json and its table. */
import { ENDS, PAGE } from "./catalogue_paging.ts";
import type { BulkCallFigures, LatencyFigures } from "./stats.ts";

export interface WalkFigures extends LatencyFigures {
  pages: number;
  rows: number;
  distinctIds: number;
  totalSeconds: number;
  firstPagesMedianMs: number;
  lastPagesMedianMs: number;
  lastOverFirst: number;
  /** Median page time in each tenth of the walk, shallowest first: where the cost goes. */
  tenthsMedianMs: number[];
}

export interface WritersFigures {
  writers: number;
  durationS: number;
  adjustments: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers other than 201 (API) or failed transactions (floor), by status or error. */
  refused: Record<string, number>;
  openingStock: number;
  finalStock: number;
  ledgerRows: number;
}

export interface CatalogueReport {
  date: string;
  machine: { cpus: number; deno: string };
  organizationId: string;
  limits: { pageSizeMax: number; bulkMaxRows: number; maxBodyBytes: number };
  database: string;
  bulkCreate: BulkCallFigures & {
    withStock: LatencyFigures;
    withoutStock: LatencyFigures;
    floor: LatencyFigures & { statement: string };
    apiOverFloorP50: { withStock: number; withoutStock: number };
    note: string;
  };
  paging: {
    reading: string;
    request: string;
    seed: { items: number; seedSeconds: number; vacuumAnalyzeSeconds: number };
    responseBytes: { median: number; max: number };
    api: WalkFigures;
    floor: WalkFigures & { statement: string };
    apiOverFloorP50: number;
    note: string;
  };
  stock: {
    request: string;
    api: WritersFigures & { variantId: string };
    floor: WritersFigures & { variantId: string; statements: string };
    apiOverFloor: { throughput: number; p50: number };
    note: string;
  };
}

/** The catalogue table of `deno task bench`. */
export function formatCatalogueReport(report: CatalogueReport, writtenTo: string): string {
  const { bulkCreate: b, paging: p, stock: s } = report;
  const num = (n: number | undefined, digits = 2, width = 10): string =>
    (n === undefined ? "–" : n.toFixed(digits)).padStart(width);
  const ratio = (n: number): string => `${n.toFixed(2)}×`.padStart(10);
  const row = (
    label: string,
    api: { p50Ms: number; p99Ms: number },
    floorP50: number | undefined,
    apiOverFloor: number | undefined,
  ): string =>
    `${label.padEnd(50)}${num(api.p50Ms)}${num(api.p99Ms)}${num(floorP50)}` +
    (apiOverFloor === undefined ? "–".padStart(10) : ratio(apiOverFloor));
  const kb = (bytes: number): string => `${(bytes / 1000).toFixed(0)} kB`;
  const refused = (r: Record<string, number>): string =>
    Object.keys(r).length === 0
      ? "none refused"
      : Object.entries(r).map(([k, n]) => `${n} × ${k}`).join(", ");
  return [
    "",
    `Catalogue: one organisation, through the gateway; floors are bare postgres.js on the ` +
    `same database (${report.database})`,
    `  paging: ${p.reading}`,
    `  seeded ${p.seed.items} items with SQL in ${p.seed.seedSeconds.toFixed(1)} s, VACUUM ` +
    `ANALYZE ${p.seed.vacuumAnalyzeSeconds.toFixed(1)} s`,
    "",
    `${"".padEnd(50)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"floor p50".padStart(10)}${
      "API÷floor".padStart(10)
    }`,
    row(
      `bulk create ${b.rowsPerCall} rows with stockOnHand`,
      b.withStock,
      b.floor.p50Ms,
      b.apiOverFloorP50.withStock,
    ),
    row(
      `  same, without stockOnHand (no ledger rows)`,
      b.withoutStock,
      b.floor.p50Ms,
      b.apiOverFloorP50.withoutStock,
    ),
    row(`GET /v1/catalogue?limit=${PAGE}, per page`, p.api, p.floor.p50Ms, p.apiOverFloorP50),
    row(
      `stock +1, ${s.api.writers} writers on one variant`,
      s.api,
      s.floor.p50Ms,
      s.apiOverFloor.p50,
    ),
    "",
    `bulk create: ${b.calls} calls after ${b.warmupCalls} warm-up, each on a fresh item; ` +
    `request ${kb(b.requestBytes)}, answer ${kb(b.responseBytes)}; floor: one INSERT … ` +
    `unnest of the same rows in one transaction`,
    `paging: ${p.api.pages} pages, ${p.api.rows} rows, ${p.api.distinctIds} distinct ids ` +
    `(every row once), ${p.api.totalSeconds.toFixed(1)} s for the walk; page ` +
    `${kb(p.responseBytes.median)}`,
    `  first ${ENDS} pages median ${p.api.firstPagesMedianMs.toFixed(2)} ms, last ${ENDS} ` +
    `${p.api.lastPagesMedianMs.toFixed(2)} ms: last ÷ first ${p.api.lastOverFirst.toFixed(2)} ` +
    `(floor ${p.floor.firstPagesMedianMs.toFixed(2)} → ${p.floor.lastPagesMedianMs.toFixed(2)} ` +
    `ms, ${p.floor.lastOverFirst.toFixed(2)})`,
    `  median ms by tenth of the walk: API ${
      p.api.tenthsMedianMs.map((t) => t.toFixed(1)).join(" ")
    }`,
    `                                floor ${
      p.floor.tenthsMedianMs.map((t) => t.toFixed(1)).join(" ")
    }`,
    `stock: API ${s.api.perSecond.toFixed(0)} adjustments/s (${s.api.adjustments} in ` +
    `${s.api.durationS.toFixed(1)} s, ${refused(s.api.refused)}), floor ` +
    `${s.floor.perSecond.toFixed(0)}/s: API ÷ floor throughput ` +
    `${(s.apiOverFloor.throughput * 100).toFixed(1)} %`,
    `  stockOnHand ${s.api.openingStock} + ${s.api.adjustments} = ${s.api.finalStock} ` +
    `(checked, ledger +${s.api.ledgerRows}); floor ${s.floor.openingStock} + ` +
    `${s.floor.adjustments} = ${s.floor.finalStock}`,
    `Figures written to ${writtenTo}`,
  ].join("\n");
}

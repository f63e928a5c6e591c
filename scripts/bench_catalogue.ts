/**
 * The catalogue part of `deno task bench` (imported by scripts/bench.ts, run on its stack; or
 * alone, on a stack of its own booted by scripts/bench/stack.ts, with
 * `deno run -A scripts/bench_catalogue.ts`). Every API figure is taken through the gateway with
 * one organisation's key (ALL_SCOPES, rate limit lifted) and stands beside a floor measured in
 * the same run: the same database work done bare through postgres.js on the `catalogue` schema.
 *
 * 1. Bulk create: `POST /v1/garment-variants/bulk/create` with BULK_MAX_ROWS rows (read from
 *    GET /v1/reference/limits), each call on a fresh catalogue item; rows with `stockOnHand`
 *    (the service also writes an opening ledger row per variant) and, for context, without it.
 *    Floor: the same rows in one bare `INSERT … SELECT FROM unnest(…)` in one transaction.
 * 2. Paging: `BENCH_CATALOGUE_ITEMS` (100,000) catalogue items seeded by SQL (generate_series;
 *    pairs share created_at so the id tie-break is exercised), then every page of
 *    `GET /v1/catalogue?limit=200` following `nextCursor` to the end. "A catalogue of 100,000
 *    variants" is read as 100,000 catalogue items, since this cursor list pages items; no
 *    variant rows are seeded under them. Per-page p50/p99, the first 10 pages' median against
 *    the last 10's; floor: the same keyset query, `(created_at, id) > ($2, $3)`, bare. Both walks
 *    must return every row exactly once, or the run stops.
 * 3. Stock: 16 concurrent loops posting +1 `received` adjustments to one variant for
 *    BENCH_DURATION_S; the variant's final `stockOnHand` must be the opening figure plus the
 *    201 answers (and the ledger must hold that many rows), or the run stops. Floor: 16
 *    postgres.js connections each looping `BEGIN; SELECT … FOR UPDATE; UPDATE; INSERT ledger
 *    row; COMMIT` on one other variant, checked the same way.
 *
 * Nothing is asserted about speed; the ratios API ÷ floor are reported.
 *
 * This file runs the part; its pieces are in scripts/bench/: paging (catalogue_paging.ts), the
 * bulk create and the stock writers (catalogue_writes.ts), the report (catalogue_report.ts).
 */
import { connect } from "@printshop/shared/db";
import { PAGE, pagingBench } from "./bench/catalogue_paging.ts";
import { type CatalogueReport, formatCatalogueReport } from "./bench/catalogue_report.ts";
import { bulkBench, stockBench, WRITERS } from "./bench/catalogue_writes.ts";
import { writeResults } from "./bench/results.ts";
import {
  api,
  BENCH_DURATION_S,
  benchOrganization,
  type StackAccess,
  stackAccess,
  startBenchStack,
} from "./bench/stack.ts";

export interface CatalogueBenchOptions extends StackAccess {
  durationS: number;
}

/** Runs the whole catalogue bench on a running stack and returns its figures. */
export async function runCatalogueBench(options: CatalogueBenchOptions): Promise<CatalogueReport> {
  const { organizationId, apiKey } = await benchOrganization(options, "Catalogue Bench Shop");
  const headers = { "x-api-key": apiKey };
  const limits = await api<{ pageSizeMax: number; bulkMaxRows: number; maxBodyBytes: number }>(
    `${options.gatewayUrl}/v1/reference/limits`,
    { headers },
  );
  if (limits.pageSizeMax < PAGE) {
    throw new Error(`PAGE_SIZE_MAX is ${limits.pageSizeMax}; this bench pages by ${PAGE}`);
  }

  const sql = connect(options.databaseUrl, {
    schema: "catalogue",
    max: 2,
    applicationName: "bench-catalogue",
  });
  const writersSql = connect(options.databaseUrl, {
    schema: "catalogue",
    max: WRITERS,
    applicationName: "bench-catalogue-writers",
  });
  try {
    const shop = { sql, gatewayUrl: options.gatewayUrl, headers, organizationId };
    const paging = await pagingBench(shop);
    const bulkCreate = await bulkBench(shop, limits.bulkMaxRows);
    const stock = await stockBench(shop, writersSql, options.durationS);
    const [{ version }] = await sql<[{ version: string }]>`SELECT version()`;
    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      organizationId: organizationId,
      limits,
      database: `${version.split(" on ")[0]} (embedded, fsync=off, synchronous_commit=off)`,
      bulkCreate,
      paging,
      stock,
    };
  } finally {
    await sql.end();
    await writersSql.end();
  }
}

if (import.meta.main) {
  const bench = await startBenchStack("printshop-bench-catalogue-");
  try {
    const report = await runCatalogueBench({ ...stackAccess(bench), durationS: BENCH_DURATION_S });
    await writeResults("bench-results/catalogue.json", report);
    console.log(formatCatalogueReport(report, "bench-results/catalogue.json"));
  } finally {
    await bench.stop();
  }
}

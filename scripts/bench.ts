/**
 * `deno task bench`: measures the gateway's cost on this machine, in one run.
 *
 * Boots the real stack on a throwaway embedded PostgreSQL, seeds one organisation, then sends
 * `GET /v1/quotes?limit=20` through the gateway and straight to the quotes service (with a
 * valid signed internal context). Throughput comes from autocannon (10 connections, 10 s each);
 * latency from a closed loop of single requests timed with performance.now(), since autocannon
 * reports whole milliseconds and the overhead under study is smaller than that.
 *
 * It also times an idempotent replay (the same keyed POST again) and a 429 refusal.
 *
 * Prints a table and writes the figures to bench-results/gateway.json. Nothing is asserted:
 * the goals (gateway p50 overhead ≤ 1 ms, throughput ≥ 60 % of direct) are reported.
 *
 * Then, on the same stack, the ratios part (scripts/bench_ratios.ts, issue 15): floors started
 * in the same run on the same PostgreSQL (scripts/bench_floors.ts: a naive proxy in front of a
 * bare JSON handler, a one-transaction write, a 20-rows-and-count read, a single-row read) and
 * the product beside each (`POST /v1/quotes`, lines of 5 variants and variant PATCHes on quotes
 * of 3 × 4 × 5, `GET /v1/quotes?limit=20`, `GET /v1/quotes/{id}`, `GET /v1/me`,
 * `GET /v1/reference/limits`), 16 connections each, printed as ratios with the goals;
 * event → signed webhook delivery under the create load's rate; and the footprint: RSS of each
 * process idle (taken right after boot, before any part loads the stack, with the idle CPU over
 * `BENCH_IDLE_S`, 60 s unless set), after that part and after the last part on this stack. Its
 * table is printed last, once the quotes part below has added the 200-quote list over 10,000
 * quotes and every part has run, with the last three runs' goals side by side
 * (bench-results/ratios-history.jsonl) and the whole run's wall time. Figures in
 * bench-results/ratios.json; run it alone with `deno run -A scripts/bench_ratios.ts`.
 *
 * Then, on the same stack, the quotes-at-scale part (scripts/bench_quotes.ts): a second
 * organisation seeded with 10,000 full quotes by SQL, the 200-quote list page and a re-banding
 * variant PATCH through the gateway; a second table, figures in bench-results/quotes.json.
 *
 * Then the catalogue part (scripts/bench_catalogue.ts), on the same stack and each figure beside
 * a bare-SQL floor from the same run: bulk create of BULK_MAX_ROWS variants per call, a cursor
 * walk of 100,000 catalogue items seeded by SQL (`GET /v1/catalogue?limit=200`, first pages
 * against last), and 16 concurrent writers adjusting one variant's stock, its final figure
 * checked; another table, figures in bench-results/catalogue.json. Run it alone with
 * `deno run -A scripts/bench_catalogue.ts` (scripts/bench/stack.ts boots the stack for both).
 *
 * Then the CRM part (scripts/bench_crm.ts), on the same stack, whose CRM process alone runs with
 * BULK_MAX_ROWS=10000: `POST /v1/customers/bulk/tier` over 10,000 customers seeded by SQL (by a
 * tier filter; goal ≤ 2 s per call, reported) and over 1,000 by ids, each call checked (every row
 * affected, one outbox event each), beside a bare UPDATE and a bare UPDATE + outbox INSERT; a
 * table, figures in bench-results/crm.json. Run it alone with `deno run -A scripts/bench_crm.ts`.
 *
 * Then the proofs part (scripts/bench_proofs.ts), on the same stack, whose proofs process sends
 * through a real SMTP server in this process: 200 sends timed from the request to the message
 * accepted by that server (p50, p99), and the approval page's render beside the proof's JSON;
 * figures in bench-results/proofs.json. Run it alone with `deno run -A scripts/bench_proofs.ts`.
 *
 * Then, last on this stack, the edge part (scripts/bench_edge.ts): a connection flood from
 * 127.0.0.2–127.0.0.20 (10,000 idle connections, 500 slowloris heads, 500 slow bodies, held by
 * a Worker of this process) while 1,000 `GET /v1/me` from 127.0.0.1, each on a fresh connection,
 * are measured against the same with no attack (goals: all answered 200, p99 ≤ 3× the
 * baseline's), 200 from the attackers' own addresses (goal ≥ 95 % answered) and the gateway's
 * RSS during (≤ 250 MB) and 10 s after (within 20 % of before); figures in
 * bench-results/edge.json. It runs after the footprint above is taken, since it leaves the
 * gateway as no other part does; a failure of it is reported at the end, after the events part.
 * `BENCH_EDGE_IDLE` and the other `BENCH_EDGE_*` variables shrink it; run it alone with
 * `deno run -A scripts/bench_edge.ts`.
 *
 * Last, the events part (scripts/bench_events.ts), after this stack is stopped: change → signed
 * webhook delivery, for the embedded transport and then Kafka on Mokapi (a test broker, not
 * Kafka), each on a stack of its own and a fresh database on the same cluster. Latency at a
 * steady 100 events/s (goal: p99 ≤ 1 s on the embedded transport) and throughput of a 2,000-change
 * backlog; a third table, figures in bench-results/events.json. `BENCH_DURATION_S` sets its
 * steady phase too (15 s unless set), `BENCH_EVENTS_BACKLOG` the backlog; run it alone with
 * `deno run -A scripts/bench_events.ts`.
 */
import { BENCH_DURATION_S, stackAccess, startBenchStack } from "./bench/stack.ts";
import { runQuotesBench } from "./bench_quotes.ts";
import { runCatalogueBench } from "./bench_catalogue.ts";
import { CRM_BENCH_PROCESS_ENV, formatCrmReport, runCrmBench } from "./bench_crm.ts";
import { runEventsBench } from "./bench_events.ts";
import { runEdgeBench } from "./bench_edge.ts";
import {
  formatProofsReport,
  proofsBenchProcessEnv,
  runProofsBench,
  startBenchSmtp,
} from "./bench_proofs.ts";
import { runRatiosBench } from "./bench_ratios.ts";
import { formatCatalogueReport } from "./bench/catalogue_report.ts";
import { formatEdgeReport } from "./bench/edge_report.ts";
import { assertEventsRan, writeEventsReport } from "./bench/events_report.ts";
import { footprintAfterAllParts, measureIdle } from "./bench/footprint.ts";
import { formatGatewayReport, runGatewayBench } from "./bench/gateway.ts";
import { appendHistory, codeVersion, formatHistory, historyEntry } from "./bench/history.ts";
import { formatQuotesReport } from "./bench/quotes_report.ts";
import { formatRatiosReport, RATIOS_RESULTS, withListAtScale } from "./bench/ratios_report.ts";
import { writeResults } from "./bench/results.ts";

const DURATION_S = BENCH_DURATION_S;

/** Writes a part's figures to `path` and prints its table (which names the file). */
async function reportPart<T>(
  path: string,
  figures: T,
  format: (figures: T, writtenTo: string) => string,
): Promise<void> {
  await writeResults(path, figures);
  console.log(format(figures, path));
}

const started = performance.now();
// Only the CRM process gets its larger BULK_MAX_ROWS: the other parts measure as before. The
// proofs process sends its mail to a real SMTP server in this process.
const smtp = await startBenchSmtp();
const bench = await startBenchStack(undefined, {
  processEnv: { ...CRM_BENCH_PROCESS_ENV, ...proofsBenchProcessEnv(smtp.port) },
});
const { pg, stack } = bench;

try {
  // The idle footprint of the ratios part is the freshly booted stack's, before any load.
  const idle = await measureIdle(bench);
  const gateway = await runGatewayBench(bench, DURATION_S);
  await reportPart("bench-results/gateway.json", gateway, formatGatewayReport);

  // Issue 15's ratios, on the same stack: floors in this run, the product beside each.
  // Its table comes last, with the list at scale from the quotes part and the footprint after
  // every part.
  let ratiosReport = await runRatiosBench(bench, { durationS: DURATION_S, idle });
  await writeResults(RATIOS_RESULTS, ratiosReport);
  console.error("[bench] ratios measured: their table comes at the end, with every goal");

  // Quotes at scale, on the same stack: a new organisation seeded with 10,000 full quotes.
  const quotesReport = await runQuotesBench({ ...stackAccess(bench), durationS: DURATION_S });
  await reportPart("bench-results/quotes.json", quotesReport, formatQuotesReport);
  ratiosReport = withListAtScale(ratiosReport, quotesReport);

  // The catalogue, on the same stack: bulk create, a 100,000-item cursor walk, stock writers.
  const catalogueReport = await runCatalogueBench({
    ...stackAccess(bench),
    durationS: DURATION_S,
  });
  await reportPart("bench-results/catalogue.json", catalogueReport, formatCatalogueReport);

  // The CRM, on the same stack: bulk tier over 10,000 customers by filter, 1,000 by ids.
  const crmReport = await runCrmBench(stackAccess(bench));
  await reportPart("bench-results/crm.json", crmReport, formatCrmReport);

  // Proofs, on the same stack: send → accepted by the SMTP server, and the approval page.
  const proofsReport = await runProofsBench({ ...stackAccess(bench), smtp });
  await reportPart("bench-results/proofs.json", proofsReport, formatProofsReport);

  // The footprint after every part that ran on this stack but the edge flood below, beside the
  // ratios part's figures.
  ratiosReport.footprint.afterAllParts = await footprintAfterAllParts(bench);
  await writeResults(RATIOS_RESULTS, ratiosReport);

  // The connection flood, last on this stack. Its failure (a deadline, too few descriptors for
  // the attack) is thrown once the events part has run, so that part's figures are not lost.
  let edgeFailure: unknown = null;
  try {
    await reportPart("bench-results/edge.json", await runEdgeBench(bench), formatEdgeReport);
  } catch (error) {
    edgeFailure = error;
    console.error(`[bench] the edge part failed: ${error}`);
  }

  // Events → webhook deliveries, on stacks of their own: this one stops so it leaves the cores.
  await stack.stop();
  const eventsReport = await runEventsBench({ postgresUrl: pg.url });
  console.log(await writeEventsReport(eventsReport, "bench-results/events.json"));

  // Issue 15: every goal of this run, then the last three runs side by side.
  const totalSeconds = (performance.now() - started) / 1000;
  const entry = historyEntry(ratiosReport, "deno task bench", totalSeconds, await codeVersion());
  const history = formatHistory(await appendHistory(entry), entry);
  console.log(formatRatiosReport(ratiosReport, RATIOS_RESULTS, history));
  console.log(
    `\ndeno task bench: ${(totalSeconds / 60).toFixed(1)} min from start to this line ` +
      `(BENCH_DURATION_S=${DURATION_S}, BENCH_IDLE_S=${idle.cpu.seconds.toFixed(0)})`,
  );
  assertEventsRan(eventsReport);
  if (edgeFailure !== null) throw edgeFailure;
} finally {
  // With the seeded quotes it holds hundreds of MB; stopping removes it.
  await bench.stop();
  await smtp.close();
}

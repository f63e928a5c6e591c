/**
 * The ratios part of `deno task bench` (issue 15): every product figure beside a floor measured
 * in the same run, on the same PostgreSQL server (scripts/bench_floors.ts), printed as a ratio
 * with the goal and met / not met. Imported by scripts/bench.ts and run on its stack
 * after the gateway part; or alone, on a stack of its own, with
 * `deno run -A scripts/bench_ratios.ts` (which then runs the quotes part too, for the 200-quote
 * list over 10,000 quotes).
 *
 * Load: 16 connections in a closed loop each (one request, wait for its answer, the next), for
 * BENCH_DURATION_S per target after a 1 s warm-up, every request timed with performance.now().
 * Not autocannon: it records latencies in whole milliseconds, and the proxy floor and the
 * gateway-served reads answer in about one, so their p50 and p99 would read 0, 1 or 2. Nor is
 * throughput lost: side by side on the proxy floor here, autocannon (16 connections) made
 * 5,300–8,400 req/s and this loop 6,400–6,700, within the machine's noise. One
 * generator for every target, floors and product alike, so its own cost (it shares the 2 cores)
 * weighs on both sides of each ratio; its CPU is reported beside each run.
 *
 * Measured, each product figure beside its floor so that the machine's other load hits both
 * alike. This machine's speed drifts by tens of per cent within a minute, so a product figure and
 * its floor are not taken one after the other but in ALTERNATING_SLICES slices each, alternating
 * in ABBA order (floor, product, product, floor, …): a steady drift, and whichever side runs first
 * in a slice, then weigh on both. Latencies are pooled over the slices and req/s is every answer
 * over every measured second. Every write load has the write floor beside it, measured again.
 * - proxy floor, `GET /v1/me` and `GET /v1/reference/limits` through the gateway, alternating;
 * - write floor and `POST /v1/quotes` `{ "reference": "…" }` (16 writers, one organisation),
 *   alternating, with a wait after every slice until the quotes outbox is published (the
 *   longest is reported), so the relay's backlog never runs under the next slice;
 * - write floor and lines of 5 variants, alternating, with the same wait: each of the 16
 *   connections, in turn, adds a Garment line to a group of its quote
 *   (`POST /v1/quote-groups/{id}/lines`), its 5 variants (`POST /v1/quote-lines/{id}/variants`,
 *   one by one, as the API takes them: a line is created without variants) and deletes the line
 *   again (`DELETE /v1/quote-lines/{id}`), the groups taken in rotation. A turn begun before its
 *   slice ends runs to its end (and its time counts); the next slice goes on from there. The
 *   line POST and the variant POSTs each get the issue's p99 goal; the delete is reported, not
 *   judged;
 * - write floor and `PATCH /v1/quote-variants/{id}` `{ "quantity": … }`, alternating, with the
 *   same wait: each connection walks the 60 variants of its quote, each PATCH changing the
 *   quantity (base + 1, then back), so the line's quantity and the quote's totals are recomputed
 *   every time;
 * - read floor over a copy of the organisation's quotes rows as they are now, and
 *   `GET /v1/quotes?limit=20` (the same rows), alternating;
 * - single-row floor (the full quote's own answer stored as one row), and `GET /v1/quotes/{id}`
 *   of a full quote (3 groups × 4 lines × 5 variants, built through the API), alternating.
 *
 * How the writers of lines and PATCHes spread: all 16 in ONE organisation (the issue's), each
 * connection on a quote of its own, every one of the shape 3 groups × 4 Garment lines × 5
 * variants, built through the API before the loads. A quote is locked while its rows change (by
 * design: its totals are recomputed in the same transaction), so 16 writers on one quote would
 * measure that queue, one after the other, not the cost of a write. No limit bounds a group's
 * lines (shared/limits.ts has none, and sortOrder goes to 100,000), so the line writers delete
 * each line they add: every quote stays between 60 and 65 variants, and a longer run measures
 * the same thing as a shorter one.
 *
 * Ratios and goals (issue 15): quote create req/s ≥ 0.5 × write floor and p99 ≤ 4 × write floor
 * p99; the line POST, its variant POSTs and the variant PATCH each p99 ≤ 4 × their write floor's
 * p99 (their req/s ÷ the floor is printed too, without a goal: the issue sets ≥ 0.5 for the
 * quote create only); list ≥ 0.8 × read floor; get-by-id ≥ 0.8 × single-row floor; /v1/me and
 * /v1/reference/limits ≥ 1.0 × proxy floor. Two absolute goals: `GET /v1/quotes?limit=200` over
 * 10,000 quotes of the quotes issue's shape p50 ≤ 50 ms, taken from the quotes part
 * (scripts/bench_quotes.ts seeds them and measures it; its answered bytes per second beside), and
 * event → signed delivery p99 ≤ 1 s under the write load (below).
 *
 * Events under the write load (item 6): a second organisation subscribes once to every event
 * type the API lists (`GET /v1/reference/events`), each subscription to its own path of a
 * loopback receiver in this process that verifies every delivery's Standard Webhooks signature
 * with that subscription's secret (scripts/bench/receiver.ts, the events part's too; the bench
 * stack lets the webhooks service deliver to loopback). Then `POST /v1/quotes`, open loop at the rate the
 * 16-writer create load reached in this run, for BENCH_DURATION_S (at most 64 unanswered; a
 * request held back by that leaves late, shown as the schedule slip), on the embedded transport.
 * Latency = receipt − the event's occurredAt (the outbox row's time; one machine clock). Met
 * when p99 ≤ 1 s and every created quote's event arrived, signed.
 *
 * Footprint (item 5), from /proc: VmRSS of the gateway and each service process idle before load
 * and after this part's loads (goals ≤ 80 MB and ≤ 120 MB); CPU (utime + stime) of the idle
 * stack over BENCH_IDLE_S seconds (60 unless set), its PostgreSQL backends included, goal ≤ 1 %
 * of one core. CPU of every process (stack, floors, PostgreSQL by application, the load
 * generator) is also taken around each load. The pids come from the launcher
 * (`RunningStack.processes[].child.pid`: it runs `deno run` itself, so that is the service's own
 * process); the PostgreSQL processes are the postmaster's children, named by pg_stat_activity.
 * The idle figures are the freshly booted stack's: taken first when run alone, and by
 * scripts/bench.ts before its first part.
 *
 * Diagnostics, after the timed runs and outside them: statements per request of each product
 * request by application (PostgreSQL's statement log, switched on for the sample only), and
 * what the stack's backends wait on (pg_stat_activity sampled) under each 16-writer write load
 * (the quote create, the line turns, the variant PATCHes).
 *
 * Figures go to bench-results/ratios.json. Each run also appends its goals (and the footprint's)
 * to bench-results/ratios-history.jsonl (git-ignored, as bench-results/ is), and the report
 * ends with the last three runs side by side, so a closing note can quote a run with the two
 * before it. Nothing is asserted: a goal not met is printed as such and the run goes on.
 *
 * This file runs the part; its pieces are in scripts/bench/: the loads (load.ts) and their
 * alternating slices (alternating.ts), the full quotes and their writers (full_quotes.ts), CPU
 * and footprint from /proc (stack_cpu.ts, footprint.ts), the diagnostics
 * (ratios_diagnostics.ts), events under the write load (events_under_load.ts), the goals
 * (goals.ts), the report and its table (ratios_report.ts) and the last runs (history.ts).
 */
import { connect } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { type FloorProcess, type Floors, startFloors } from "./bench_floors.ts";
import { runQuotesBench } from "./bench_quotes.ts";
import {
  ALTERNATING_SLICES,
  alternatingSlices,
  measuredOf,
  outboxDrains,
  SLICE_WARMUP_S,
  type TurnsMeasured,
} from "./bench/alternating.ts";
import { eventsGoal, eventsUnderWriteLoad } from "./bench/events_under_load.ts";
import { footprint, type IdleFigures, measureIdle, RSS_AFTER_GOAL_MB } from "./bench/footprint.ts";
import {
  buildFullQuote,
  GROUPS,
  lineBody,
  LINES_PER_GROUP,
  lineWriter,
  variantPatcher,
  VARIANTS_PER_LINE,
  waitOutboxDrained,
} from "./bench/full_quotes.ts";
import { goal, ratio } from "./bench/goals.ts";
import { appendHistory, codeVersion, formatHistory, historyEntry } from "./bench/history.ts";
import {
  CONNECTIONS,
  noFigures,
  sameRequest,
  type Target,
  type Turn,
  WARMUP_S,
} from "./bench/load.ts";
import { stackProcesses, type Watched } from "./bench/proc.ts";
import { formatQuotesReport } from "./bench/quotes_report.ts";
import {
  STATEMENT_SAMPLE,
  statementsPerRequest,
  type Waits,
  waitsUnderLoad,
} from "./bench/ratios_diagnostics.ts";
import {
  formatRatiosReport,
  type Measured,
  RATIOS_RESULTS,
  type RatiosReport,
  withListAtScale,
} from "./bench/ratios_report.ts";
import { writeResults } from "./bench/results.ts";
import {
  BENCH_DURATION_S,
  benchOrganization,
  type BenchStack,
  stackAccess,
  startBenchStack,
} from "./bench/stack.ts";
import { postmasterPid } from "./bench/stack_cpu.ts";

export interface RatiosOptions {
  durationS?: number;
  /** The idle figures, when the caller took them before loading the stack. */
  idle?: IdleFigures;
  /**
   * The organisation to measure in, when the caller has one with data (the scale bench's shop
   * at ×10); by default a new, empty one.
   */
  organization?: { organizationId: string; apiKey: string };
}

/** Runs the ratios part on a running bench stack; the floors are started and stopped here. */
export async function runRatiosBench(
  bench: BenchStack,
  options: RatiosOptions = {},
): Promise<RatiosReport> {
  const durationS = options.durationS ?? BENCH_DURATION_S;
  const idle = options.idle ?? await measureIdle(bench);
  const gatewayUrl = bench.stack.gatewayUrl;
  const sql = connect(bench.databaseUrl, { schema: "public", max: 2, applicationName: "bench" });
  let floors: Floors | undefined;
  try {
    const postmaster = await postmasterPid(sql);
    const { organizationId, apiKey } = options.organization ?? await benchOrganization(
      { adminUrl: bench.stack.adminUrl, adminToken: bench.adminToken },
      "Ratios Shop",
    );
    const key = { "x-api-key": apiKey };
    const jsonKey = { ...key, "content-type": "application/json" };
    floors = await startFloors({ databaseUrl: bench.databaseUrl });
    const floorWatched = floors.processes.map((p: FloorProcess) => ({
      name: p.name,
      pid: p.pid,
      stack: false,
    }));
    console.error(
      `[ratios] building a full quote, and one for each of the ${CONNECTIONS} writers, ` +
        `through the API…`,
    );
    const full = await buildFullQuote(gatewayUrl, jsonKey);
    const writerQuotes = await Promise.all(
      Array.from(
        { length: CONNECTIONS },
        (_, i) => buildFullQuote(gatewayUrl, jsonKey, `Ratios writer ${i + 1}`),
      ),
    );
    await waitOutboxDrained(sql);
    const documentId = await floors.storeDocument(organizationId, full.json);

    const watched = (): Watched[] => [
      ...stackProcesses(bench),
      ...floorWatched,
      { name: "bench (load generator)", pid: Deno.pid, stack: false },
    ];
    const { measureAlternatingTurns, measureAlternating } = alternatingSlices({
      sql,
      postmaster,
      durationS,
      watched,
    });

    let n = 0;
    const reference = (): string => JSON.stringify({ reference: `Ratio ${++n}` });
    const patched = writerQuotes[0]!.variants[0]!;
    let patches = 0;
    const targets = {
      me: { url: `${gatewayUrl}/v1/me`, headers: key, expectStatus: 200 },
      limits: { url: `${gatewayUrl}/v1/reference/limits`, headers: key, expectStatus: 200 },
      createQuote: {
        url: `${gatewayUrl}/v1/quotes`,
        method: "POST",
        headers: jsonKey,
        body: reference,
        expectStatus: 201,
      },
      // For the statement counts only (the timed loads are the turns below): a line without its
      // variants into the first writer quote's first group, and a PATCH of its first variant
      // between two quantities it never had, so each one changes it.
      createLine: {
        url: `${gatewayUrl}/v1/quote-groups/${writerQuotes[0]!.groupIds[0]}/lines`,
        method: "POST",
        headers: jsonKey,
        body: () => JSON.stringify(lineBody(1, LINES_PER_GROUP + 1)),
        expectStatus: 201,
      },
      patchVariant: {
        url: `${gatewayUrl}/v1/quote-variants/${patched.id}`,
        method: "PATCH",
        headers: jsonKey,
        body: () => JSON.stringify({ quantity: patched.quantity + 2 + (patches++ % 2) }),
        expectStatus: 200,
      },
      listQuotes: { url: `${gatewayUrl}/v1/quotes?limit=20`, headers: key, expectStatus: 200 },
      getQuote: { url: `${gatewayUrl}/v1/quotes/${full.id}`, headers: key, expectStatus: 200 },
    } satisfies Record<string, Target>;
    // One turn function per writer, kept for the waits sampled later: each PATCH writer then
    // goes on from where it stopped, so every PATCH still changes its variant.
    const writer = { gatewayUrl, headers: jsonKey };
    const lineTurns = writerQuotes.map((q) => lineWriter(writer, q));
    const patchTurns = writerQuotes.map((q) => variantPatcher(writer, q));
    const writeFloorTarget: Target = {
      url: floors.urls.write(organizationId),
      method: "POST",
      headers: { "content-type": "application/json" },
      body: reference,
      expectStatus: 201,
    };

    const [proxyFloor, me, limits] = await measureAlternating([
      {
        request: "naive proxy → GET fixed JSON",
        target: { url: floors.urls.json, expectStatus: 200 },
      },
      { request: "GET /v1/me", target: targets.me },
      { request: "GET /v1/reference/limits", target: targets.limits },
    ]) as [Measured, Measured, Measured];

    // The relay's backlog is published after every slice, outside the timed runs: the longest
    // such wait is reported.
    const createDrains = outboxDrains(sql);
    const [writeFloor, createQuote, writeFloorFirst] = await measureAlternating([
      { request: "naive proxy → POST one transaction", target: writeFloorTarget },
      { request: "POST /v1/quotes", target: targets.createQuote },
      {
        request: "naive proxy → POST one transaction, table as first defined",
        target: { ...writeFloorTarget, url: floors.urls.writeFirst(organizationId) },
      },
    ], createDrains.between) as [Measured, Measured, Measured];
    const outboxDrainSeconds = createDrains.longestS();

    const linesDrains = outboxDrains(sql);
    const besideLines = "naive proxy → POST one transaction (beside the lines)";
    const [writeBesideLinesTurns, lines] = await measureAlternatingTurns([
      { request: besideLines, turns: sameRequest(writeFloorTarget) },
      {
        request:
          `POST …/lines + ${VARIANTS_PER_LINE} × POST …/variants + DELETE, a quote per writer`,
        turns: lineTurns,
        perRequestOf: "line",
      },
    ], linesDrains.between) as [TurnsMeasured, TurnsMeasured];
    const writeBesideLines = measuredOf(besideLines, writeBesideLinesTurns);
    const linesDrainSeconds = linesDrains.longestS();

    const patchDrains = outboxDrains(sql);
    const besidePatch = "naive proxy → POST one transaction (beside the PATCHes)";
    const [writeBesidePatchTurns, patch] = await measureAlternatingTurns([
      { request: besidePatch, turns: sameRequest(writeFloorTarget) },
      { request: "PATCH /v1/quote-variants/{id}, a quote per writer", turns: patchTurns },
    ], patchDrains.between) as [TurnsMeasured, TurnsMeasured];
    const writeBesidePatch = measuredOf(besidePatch, writeBesidePatchTurns);
    const patchDrainSeconds = patchDrains.longestS();

    const rows = await floors.syncReadFloor(organizationId);
    const [readFloor, listQuotes, readFloorFirst] = await measureAlternating([
      {
        request: `naive proxy → GET 20 rows + count(*) of ${rows}`,
        target: { url: floors.urls.read(organizationId), expectStatus: 200 },
      },
      { request: "GET /v1/quotes?limit=20", target: targets.listQuotes },
      {
        request: `naive proxy → GET 20 rows + count(*) of ${rows}, table as first defined`,
        target: { url: floors.urls.readFirst(organizationId), expectStatus: 200 },
      },
    ]) as [Measured, Measured, Measured];

    const [singleRowFloor, getQuote] = await measureAlternating([
      {
        request: "naive proxy → GET one stored document",
        target: { url: floors.urls.one(documentId), expectStatus: 200 },
      },
      { request: "GET /v1/quotes/{id}", target: targets.getQuote },
    ]) as [Measured, Measured];

    const writers = `${CONNECTIONS} connections in one organisation, each on a quote of its own ` +
      `(${GROUPS} groups × ${LINES_PER_GROUP} Garment lines × ${VARIANTS_PER_LINE} variants, ` +
      `built through the API): a quote is locked while its rows change`;
    const createLine: RatiosReport["product"]["createLine"] = {
      request: "POST /v1/quote-groups/{id}/lines",
      ...(lines.byLabel.line ?? noFigures(CONNECTIONS)),
      cpu: lines.cpu,
      cpuMsPerRequest: lines.cpuMs,
      variants: lines.byLabel.variant ?? noFigures(CONNECTIONS),
      deletes: lines.byLabel.delete ?? noFigures(CONNECTIONS),
      outboxDrainSeconds: linesDrainSeconds,
      writers: `${writers}. Each turn adds a line to the next group, its ${VARIANTS_PER_LINE} ` +
        `variants one by one, and deletes it, so the quote keeps its shape; CPU is per turn`,
    };
    const patchVariant: RatiosReport["product"]["patchVariant"] = {
      request: "PATCH /v1/quote-variants/{id} {quantity}",
      ...(patch.byLabel.patch ?? noFigures(CONNECTIONS)),
      cpu: patch.cpu,
      cpuMsPerRequest: patch.cpuMs,
      outboxDrainSeconds: patchDrainSeconds,
      writers: `${writers}. Each walks its quote's variants, changing each one's quantity`,
    };

    const goals = [
      goal(
        "POST /v1/quotes req/s ÷ write floor",
        createQuote.requestsPerSecond,
        writeFloor.requestsPerSecond,
        "≥",
        0.5,
      ),
      goal("POST /v1/quotes p99 ÷ write floor p99", createQuote.p99Ms, writeFloor.p99Ms, "≤", 4),
      goal(
        "POST …/lines p99 ÷ write floor p99",
        createLine.p99Ms,
        writeBesideLines.p99Ms,
        "≤",
        4,
      ),
      goal(
        "  its 5 × POST …/variants p99 ÷ write floor p99",
        createLine.variants.p99Ms,
        writeBesideLines.p99Ms,
        "≤",
        4,
      ),
      goal(
        "PATCH /v1/quote-variants/{id} p99 ÷ write floor p99",
        patchVariant.p99Ms,
        writeBesidePatch.p99Ms,
        "≤",
        4,
      ),
      goal(
        "GET /v1/quotes?limit=20 req/s ÷ read floor",
        listQuotes.requestsPerSecond,
        readFloor.requestsPerSecond,
        "≥",
        0.8,
      ),
      goal(
        "GET /v1/quotes/{id} req/s ÷ single-row floor",
        getQuote.requestsPerSecond,
        singleRowFloor.requestsPerSecond,
        "≥",
        0.8,
      ),
      goal(
        "GET /v1/me req/s ÷ proxy floor",
        me.requestsPerSecond,
        proxyFloor.requestsPerSecond,
        "≥",
        1,
      ),
      goal(
        "GET /v1/reference/limits req/s ÷ proxy floor",
        limits.requestsPerSecond,
        proxyFloor.requestsPerSecond,
        "≥",
        1,
      ),
    ];
    const otherRatios = [
      // Issue 32: against the floors as issue 15 first defined them (primary key and one index),
      // so what the product's other indexes cost a write, or give a read, stays in view.
      ratio(
        "POST /v1/quotes req/s ÷ write floor as first defined",
        createQuote.requestsPerSecond,
        writeFloorFirst.requestsPerSecond,
      ),
      ratio(
        "GET /v1/quotes?limit=20 req/s ÷ read floor as first defined",
        listQuotes.requestsPerSecond,
        readFloorFirst.requestsPerSecond,
      ),
      ratio(
        "POST …/lines req/s ÷ write floor",
        createLine.requestsPerSecond,
        writeBesideLines.requestsPerSecond,
      ),
      ratio(
        "  its POST …/variants req/s ÷ write floor",
        createLine.variants.requestsPerSecond,
        writeBesideLines.requestsPerSecond,
      ),
      ratio(
        "PATCH /v1/quote-variants/{id} req/s ÷ write floor",
        patchVariant.requestsPerSecond,
        writeBesidePatch.requestsPerSecond,
      ),
    ];

    console.error(`[ratios] diagnostics: waits under the write loads, statements per request…`);
    // Diagnostics only: one that fails is reported and the figures above still stand.
    const waitsOf = (name: string, turns: Turn[], label: string): Promise<Waits | null> =>
      waitsUnderLoad(sql, turns, label, Math.min(durationS, 5)).catch((error) => {
        console.error(`[ratios] waits under the ${name} load not sampled: ${error}`);
        return null;
      });
    const waits = {
      createQuote: await waitsOf("create", sameRequest(targets.createQuote), ""),
      createLine: await waitsOf(
        "lines",
        lineTurns,
        "line",
      ),
      patchVariant: await waitsOf(
        "PATCH",
        patchTurns,
        "patch",
      ),
    };
    // After the waits: the statement count adds lines to the first writer's quote.
    const statements = await statementsPerRequest(bench, sql, targets, STATEMENT_SAMPLE)
      .catch((error) => {
        console.error(`[ratios] statements per request not counted: ${error}`);
        return {};
      });
    await waitOutboxDrained(sql);

    // Events under the write load: a failure is reported (the goal then not met), the rest stands.
    const eventsUnderLoad = await eventsUnderWriteLoad(
      bench,
      createQuote.requestsPerSecond,
      durationS,
    ).catch((error) => {
      console.error(`[ratios] events under the write load not measured: ${error}`);
      return null;
    });
    goals.push(eventsGoal(eventsUnderLoad));
    await waitOutboxDrained(sql);
    await sleep(1000);
    const afterThisPart = await footprint(bench, RSS_AFTER_GOAL_MB);

    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      method: `${CONNECTIONS} connections, each a closed loop (next request when the answer ` +
        `is read), ${WARMUP_S} s warm-up then ${durationS} s measured per target; the quote ` +
        `create, the list of 20, the quote by id, /v1/me and /v1/reference/limits each in ` +
        `${ALTERNATING_SLICES} slices alternating with their floor's (ABBA order, ` +
        `${SLICE_WARMUP_S} s warm-up before each later slice); latency by performance.now() in ` +
        `the bench process; req/s = answers ÷ measured wall time`,
      organizationId,
      floors: {
        where: "two child processes on loopback: the naive proxy (Deno.serve + fetch) in " +
          "front of the floor service (Deno.serve + postgres.js, 10 connections), on the " +
          "stack's PostgreSQL server and database, schema bench_floors (scripts/bench_floors.ts)",
        proxy: proxyFloor,
        write: writeFloor,
        writeBesideLines,
        writeBesidePatch,
        read: { ...readFloor, rows },
        writeFirst: writeFloorFirst,
        readFirst: { ...readFloorFirst, rows },
        singleRow: { ...singleRowFloor, documentBytes: new TextEncoder().encode(full.json).length },
      },
      product: {
        createQuote: { ...createQuote, outboxDrainSeconds },
        createLine,
        patchVariant,
        listQuotes: { ...listQuotes, rows },
        getQuote: {
          ...getQuote,
          responseBytes: new TextEncoder().encode(full.json).length,
          shape: `${GROUPS} groups × ${LINES_PER_GROUP} Garment lines × ${VARIANTS_PER_LINE} ` +
            `variants, no decorations`,
        },
        me,
        limits,
      },
      eventsUnderLoad,
      goals,
      otherRatios,
      footprint: { idle: idle.footprint, afterThisPart },
      idle,
      diagnostics: { statementsPerRequest: statements, waitsUnderLoad: waits },
    };
  } finally {
    await floors?.stop();
    await sql.end();
  }
}

if (import.meta.main) {
  const started = performance.now();
  const bench = await startBenchStack("printshop-bench-ratios-");
  try {
    let report = await runRatiosBench(bench);
    await writeResults(RATIOS_RESULTS, report);
    // The 200-quote list over 10,000 quotes is the quotes part's: it runs here on this stack.
    const quotes = await runQuotesBench({ ...stackAccess(bench), durationS: BENCH_DURATION_S });
    console.log(formatQuotesReport(quotes, "(not written: run alone)"));
    report = withListAtScale(report, quotes);
    await writeResults(RATIOS_RESULTS, report);
    const entry = historyEntry(
      report,
      "scripts/bench_ratios.ts",
      (performance.now() - started) / 1000,
      await codeVersion(),
    );
    const history = formatHistory(await appendHistory(entry), entry);
    console.log(formatRatiosReport(report, RATIOS_RESULTS, history));
  } finally {
    await bench.stop();
  }
}

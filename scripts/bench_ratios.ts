/**
 * The ratios part of `deno task bench` (issue 15): every product figure beside a floor measured
 * in the same run, on the same PostgreSQL server (scripts/bench_floors.ts), printed as a ratio
 * with the issue's goal and met / not met. Imported by scripts/bench.ts and run on its stack
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
 * with that subscription's secret (scripts/bench_events.ts's receiver; the bench stack lets the
 * webhooks service deliver to loopback). Then `POST /v1/quotes`, open loop at the rate the
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
 */
import { type LatencyFigures, latencyFigures, percentile } from "./bench_stats.ts";
import { dirname, join } from "node:path";
import { connect, type Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import {
  api,
  BENCH_DURATION_S,
  benchOrganization,
  type BenchStack,
  startBenchStack,
} from "./bench_stack.ts";
import { type FloorProcess, type Floors, startFloors } from "./bench_floors.ts";
import {
  formatQuotesReport,
  FULL_QUOTE_SHAPE,
  type QuotesReport,
  runQuotesBench,
} from "./bench_quotes.ts";
import { openLoop, type Receiver, startReceiver } from "./bench_events.ts";

/** Seconds the idle stack's CPU is measured over (`BENCH_IDLE_S`), 60 unless set. */
export const BENCH_IDLE_S = Number(Deno.env.get("BENCH_IDLE_S") ?? 60);
const CONNECTIONS = 16;
const WARMUP_S = 1;
/** A product figure and its floor are measured in this many alternating slices each. */
const ALTERNATING_SLICES = 4;
/** The warm-up of every slice after a side's first (its connections are open and warm by then). */
const SLICE_WARMUP_S = 0.25;
/** Pause after boot before the idle figures, so start-up work is not counted as idle. */
const SETTLE_S = 3;
const RSS_IDLE_GOAL_MB = 80;
const RSS_AFTER_GOAL_MB = 120;
const IDLE_CPU_GOAL_PCT = 1;
const GROUPS = FULL_QUOTE_SHAPE.groups;
const LINES_PER_GROUP = FULL_QUOTE_SHAPE.linesPerGroup;
const VARIANTS_PER_LINE = FULL_QUOTE_SHAPE.variantsPerLine;
/** Goal of the 200-quote list over 10,000 quotes (the quotes issue's), p50 in ms. */
const LIST_AT_SCALE_GOAL_P50_MS = 50;
/** Goal of event → signed delivery under the write load, p99 in ms. */
const EVENTS_GOAL_P99_MS = 1000;
/** Quotes created (each waited for, delivered) before the events load, to warm the path. */
const EVENTS_WARMUP = 10;
/** The open loop of the events load holds back a request past this many unanswered. */
const EVENTS_MAX_IN_FLIGHT = 64;
/** Waiting for the events load's deliveries gives up when none arrived for this long… */
const EVENTS_STALL_MS = 20_000;
/** …or this long after the last write. */
const EVENTS_DRAIN_CAP_MS = 60_000;
/** Sequential requests per product request while PostgreSQL logs statements. */
const STATEMENT_SAMPLE = 20;
/** After a statement sample, so the relay, the bus and consumers finish what it set off. */
const AFTER_SAMPLE_MS = 1500;
const IDLE_BASELINE_MS = 3000;
const WAIT_SAMPLE_EVERY_MS = 10;
const OUTBOX_DRAIN_TIMEOUT_MS = 120_000;
const RESULTS = "bench-results/ratios.json";
const HISTORY = "bench-results/ratios-history.jsonl";
/** Runs side by side at the end of the report: this one and the two before it. */
const HISTORY_RUNS = 3;

// ---------------------------------------------------------------- pure helpers (tested)

export { percentile };

export interface LoadFigures {
  connections: number;
  durationS: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers other than the expected status, by status or error; not in the latencies. */
  failures: Record<string, number>;
}

/** Figures of one closed-loop run from its latencies (ms) and its wall time (s). */
export function loadFigures(
  latenciesMs: number[],
  durationS: number,
  connections: number,
  failures: Record<string, number> = {},
): LoadFigures {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    connections,
    durationS,
    requests: sorted.length,
    requestsPerSecond: durationS > 0 ? sorted.length / durationS : NaN,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN,
    failures,
  };
}

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

/** An absolute figure (ms) against the issue's bound; one that was not measured is never met. */
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

/** `/proc/<pid>/stat`: utime + stime, cutime + cstime (clock ticks) and the parent's pid. */
export function parseProcStat(
  text: string,
): { ppid: number; ticks: number; childTicks: number } {
  // The command name (field 2) is in parentheses and may hold spaces; fields after it are fixed.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  const field = (n: number): number => Number(rest[n - 3]);
  return { ppid: field(4), ticks: field(14) + field(15), childTicks: field(16) + field(17) };
}

/** `/proc/<pid>/status`: VmRSS in MB, or null when absent (a kernel thread, a zombie). */
export function parseVmRssMb(text: string): number | null {
  const match = text.match(/^VmRSS:\s+(\d+)\s+kB$/m);
  return match ? Number(match[1]) / 1024 : null;
}

/**
 * Statements per application in a slice of PostgreSQL's log written with the prefix
 * `ratios|<application>|` and `log_statement = all`: one `statement:` or `execute …:` line per
 * statement run; answers, per application, the count of each first keyword (BEGIN, SELECT, …).
 */
export function countLoggedStatements(log: string): Record<string, Record<string, number>> {
  const counts: Record<string, Record<string, number>> = {};
  const line = /^ratios\|([^|]*)\|[^\n]*?LOG:\s+(?:statement|execute [^:]*):\s*([A-Za-z]*)/gm;
  for (const match of log.matchAll(line)) {
    const app = match[1] || "(none)";
    const keyword = (match[2] ?? "").toUpperCase() || "(other)";
    const byKeyword = counts[app] ??= {};
    byKeyword[keyword] = (byKeyword[keyword] ?? 0) + 1;
  }
  return counts;
}

/**
 * Statements per request, by application and keyword (plus `total`), net of what the same
 * application runs anyway (its idle rate in `baseline` over `baselineS`, scaled to `windowS`),
 * never below zero, to two decimals.
 */
export function netPerRequest(
  counts: Record<string, Record<string, number>>,
  baseline: Record<string, Record<string, number>>,
  baselineS: number,
  windowS: number,
  requests: number,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [app, byKeyword] of Object.entries(counts)) {
    const net: Record<string, number> = {};
    let total = 0;
    for (const [keyword, n] of Object.entries(byKeyword)) {
      const expected = (baseline[app]?.[keyword] ?? 0) * windowS / baselineS;
      const v = Math.max(0, n - expected) / requests;
      net[keyword] = Math.round(v * 100) / 100;
      total += v;
    }
    if (total >= 0.005) out[app] = { total: Math.round(total * 100) / 100, ...net };
  }
  return out;
}

// ---------------------------------------------------------------- /proc

let clockTicks: number | undefined;
async function ticksPerSecond(): Promise<number> {
  if (clockTicks === undefined) {
    try {
      const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" })
        .output();
      clockTicks = Number(new TextDecoder().decode(out.stdout).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

async function procStat(pid: number): Promise<ReturnType<typeof parseProcStat> | null> {
  try {
    return parseProcStat(await Deno.readTextFile(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

async function rssMb(pid: number): Promise<number | null> {
  try {
    return parseVmRssMb(await Deno.readTextFile(`/proc/${pid}/status`));
  } catch {
    return null;
  }
}

async function childrenOf(parent: number): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await procStat(Number(entry.name));
    if (stat?.ppid === parent) pids.push(Number(entry.name));
  }
  return pids;
}

/** The processes whose CPU is followed: the stack's, the floors', the bench's own. */
interface Watched {
  name: string;
  pid: number;
  /** Part of the product stack (counted in its idle CPU and footprint). */
  stack: boolean;
}

/**
 * The gateway and service processes, from the launcher's `RunningStack.processes` (each holds
 * its `Deno.ChildProcess`, whose pid is the service's own: the launcher runs `deno run` itself).
 */
function stackProcesses(bench: BenchStack): Watched[] {
  return bench.stack.processes
    .filter((p) => !p.exited)
    .map((p) => ({ name: p.name, pid: p.child.pid, stack: true }));
}

interface CpuSnapshot {
  at: number;
  ticks: Map<number, number>;
  labels: Map<number, string>;
  /** Every process of the PostgreSQL cluster: the postmaster with what it reaped, its children. */
  clusterTicks: number;
  /** Cluster children, by pid, with their pg_stat_activity label (application or kind). */
  backends: Map<number, { label: string; stack: boolean; ticks: number }>;
}

/** Labels of the cluster's processes, and which serve the stack's database. */
async function backendLabels(
  sql: Sql,
): Promise<Map<number, { label: string; stack: boolean }>> {
  const rows = await sql<
    { pid: number; application_name: string; backend_type: string; stack_db: boolean }[]
  >`
    SELECT pid, application_name, backend_type,
           coalesce(datname = current_database(), false) AS stack_db
    FROM pg_stat_activity WHERE pid <> pg_backend_pid()`;
  const own = new Set(["bench", "bench_ratios", "bench_floors"]);
  return new Map(rows.map((r) => {
    const client = r.backend_type === "client backend";
    const label = client ? `pg:${r.application_name || "?"}` : `pg:${r.backend_type}`;
    return [r.pid, {
      label,
      stack: client && r.stack_db && !own.has(r.application_name),
    }];
  }));
}

async function cpuSnapshot(sql: Sql, watched: Watched[], postmaster: number): Promise<CpuSnapshot> {
  const labels = await backendLabels(sql);
  const ticks = new Map<number, number>();
  const names = new Map<number, string>();
  for (const w of watched) {
    const stat = await procStat(w.pid);
    if (stat) {
      ticks.set(w.pid, stat.ticks);
      names.set(w.pid, w.name);
    }
  }
  const master = await procStat(postmaster);
  let clusterTicks = master ? master.ticks + master.childTicks : 0;
  const backends = new Map<number, { label: string; stack: boolean; ticks: number }>();
  for (const pid of await childrenOf(postmaster)) {
    const stat = await procStat(pid);
    if (!stat) continue;
    clusterTicks += stat.ticks;
    const label = labels.get(pid) ?? { label: "pg:other", stack: false };
    backends.set(pid, { ...label, ticks: stat.ticks });
  }
  return { at: performance.now(), ticks, labels: names, clusterTicks, backends };
}

export interface CpuFigures {
  seconds: number;
  /** CPU seconds by process (stack and floor processes, the load generator) and by PostgreSQL
   * application or background process (`pg:…`). */
  byProcess: Record<string, number>;
  /** The stack's own processes plus the backends serving its database, % of one core. */
  stackPctOfCore: number;
  /** The whole PostgreSQL cluster, background processes and exited backends included. */
  clusterSeconds: number;
}

async function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, watched: Watched[]): Promise<CpuFigures> {
  const hz = await ticksPerSecond();
  const wall = (b.at - a.at) / 1000;
  const byProcess: Record<string, number> = {};
  const add = (name: string, ticks: number): void => {
    byProcess[name] = (byProcess[name] ?? 0) + ticks / hz;
  };
  let stackTicks = 0;
  for (const w of watched) {
    const end = b.ticks.get(w.pid);
    if (end === undefined) continue;
    const delta = end - (a.ticks.get(w.pid) ?? 0);
    add(w.name, delta);
    if (w.stack) stackTicks += delta;
  }
  let backendTicks = 0;
  for (const [pid, end] of b.backends) {
    const delta = end.ticks - (a.backends.get(pid)?.ticks ?? 0);
    backendTicks += delta;
    add(end.label, delta);
    if (end.stack) stackTicks += delta;
  }
  const clusterTicks = b.clusterTicks - a.clusterTicks;
  add("pg:exited backends and postmaster", Math.max(0, clusterTicks - backendTicks));
  for (const [k, v] of Object.entries(byProcess)) byProcess[k] = Math.round(v * 100) / 100;
  return {
    seconds: wall,
    byProcess,
    stackPctOfCore: (stackTicks / hz) / wall * 100,
    clusterSeconds: clusterTicks / hz,
  };
}

/** The CPU of a load taken in slices: seconds added, the stack's share over all of them. */
export function sumCpu(parts: readonly CpuFigures[]): CpuFigures {
  const byProcess: Record<string, number> = {};
  let seconds = 0;
  let stackSeconds = 0;
  let clusterSeconds = 0;
  for (const part of parts) {
    seconds += part.seconds;
    stackSeconds += part.stackPctOfCore / 100 * part.seconds;
    clusterSeconds += part.clusterSeconds;
    for (const [name, s] of Object.entries(part.byProcess)) {
      byProcess[name] = (byProcess[name] ?? 0) + s;
    }
  }
  for (const [k, v] of Object.entries(byProcess)) byProcess[k] = Math.round(v * 100) / 100;
  return {
    seconds,
    byProcess,
    stackPctOfCore: seconds > 0 ? stackSeconds / seconds * 100 : NaN,
    clusterSeconds,
  };
}

async function postmasterPid(sql: Sql): Promise<number> {
  const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const stat = await procStat(row!.pid);
  if (!stat) throw new Error("Cannot read the PostgreSQL backend's /proc entry");
  return stat.ppid;
}

export interface Footprint {
  /** VmRSS in MB by process (gateway, each service). */
  rssMb: Record<string, number | null>;
  goalMbAtMost: number;
  met: Record<string, boolean>;
}

async function footprint(bench: BenchStack, goalMb: number): Promise<Footprint> {
  const rss: Record<string, number | null> = {};
  for (const p of stackProcesses(bench)) rss[p.name] = await rssMb(p.pid);
  const met = Object.fromEntries(
    Object.entries(rss).map(([name, mb]) => [name, withinLimit(mb, goalMb)]),
  );
  return { rssMb: rss, goalMbAtMost: goalMb, met };
}

export interface IdleFigures {
  footprint: Footprint;
  cpu: CpuFigures & { goalPctOfCoreAtMost: number; met: boolean };
  note: string;
}

/**
 * The idle stack: RSS of each process, then CPU over `idleS` seconds with no request sent.
 * scripts/bench.ts calls it right after boot, before any part loads the stack.
 */
export async function measureIdle(bench: BenchStack, idleS = BENCH_IDLE_S): Promise<IdleFigures> {
  const sql = connect(bench.databaseUrl, { schema: "public", max: 1, applicationName: "bench" });
  try {
    console.error(`[ratios] idle stack: ${SETTLE_S} s to settle, then ${idleS} s of CPU…`);
    await sleep(SETTLE_S * 1000);
    const fp = await footprint(bench, RSS_IDLE_GOAL_MB);
    const watched = stackProcesses(bench);
    const postmaster = await postmasterPid(sql);
    const before = await cpuSnapshot(sql, watched, postmaster);
    await sleep(idleS * 1000);
    const after = await cpuSnapshot(sql, watched, postmaster);
    const cpu = await cpuBetween(before, after, watched);
    return {
      footprint: fp,
      cpu: {
        ...cpu,
        goalPctOfCoreAtMost: IDLE_CPU_GOAL_PCT,
        met: withinLimit(cpu.stackPctOfCore, IDLE_CPU_GOAL_PCT),
      },
      note: `after boot and ${SETTLE_S} s of settling, no request sent; stack CPU is the ` +
        `gateway, the services and the PostgreSQL backends serving the stack's database ` +
        `(those alive at the end of the window; backends that closed meanwhile are in ` +
        `"pg:exited backends and postmaster" with the server's own processes)`,
    };
  } finally {
    await sql.end();
  }
}

// ---------------------------------------------------------------- load

type Method = "GET" | "POST" | "PATCH" | "DELETE";

interface Target {
  url: string;
  method?: Method;
  headers?: Record<string, string>;
  /** A fresh body per request. */
  body?: () => string;
  expectStatus: number;
}

/** One request of a turn. */
interface Call {
  url: string;
  method?: Method;
  headers?: Record<string, string>;
  body?: string;
  expectStatus: number;
  /** Read the answer as text and hand it back (else its bytes are read and dropped). */
  read?: boolean;
}

/**
 * Sends one request, timed under `label`; answers the body's text when the status is the
 * expected one and `read` was asked, "" when not asked, and null when the status is another.
 */
type Send = (label: string, call: Call) => Promise<string | null>;

/** What one connection does per turn (one request, or a sequence such as a line and its variants). */
type Turn = (send: Send) => Promise<void>;

/** What one measured run of turn loops recorded, by label: latencies, failures, and its wall time. */
export interface LoadSample {
  latenciesMs: Record<string, number[]>;
  failures: Record<string, Record<string, number>>;
  elapsedS: number;
}

/**
 * Figures by label of the samples of one load taken in slices: latencies pooled, failures added,
 * wall times added (so req/s is every answer over every measured second).
 */
export function figuresOfSamples(
  samples: readonly LoadSample[],
  connections: number,
): Record<string, LoadFigures> {
  const elapsedS = samples.reduce((total, s) => total + s.elapsedS, 0);
  const labels = new Set(samples.flatMap((s) => Object.keys(s.latenciesMs)));
  return Object.fromEntries([...labels].map((label) => {
    const failures: Record<string, number> = {};
    for (const s of samples) {
      for (const [outcome, n] of Object.entries(s.failures[label] ?? {})) {
        failures[outcome] = (failures[outcome] ?? 0) + n;
      }
    }
    const latencies = samples.flatMap((s) => s.latenciesMs[label] ?? []);
    return [label, loadFigures(latencies, elapsedS, connections, failures)];
  }));
}

/**
 * The order of the sides in each slice of alternating loads: forward, then backward, and so on
 * (ABBA), so that a machine getting steadily faster or slower, and whichever side runs first
 * in a slice, weigh on every side alike.
 */
export function alternatingOrder(sides: number, slices: number): number[][] {
  const forward = Array.from({ length: sides }, (_, i) => i);
  return Array.from(
    { length: slices },
    (_, slice) => slice % 2 === 0 ? forward : [...forward].reverse(),
  );
}

/**
 * One loop per turn function (a connection each), each starting its next turn once the last one
 * ended: a warm-up of `warmupS`, then `durationS` measured. A turn begun before the end runs to its
 * end, and its requests count (the wall time includes them). `measured` runs its `before` and
 * `after` right around the measured phase (the CPU snapshots, so the warm-up is not counted).
 * Answers what each label sent recorded.
 */
async function turnLoop(
  turns: Turn[],
  durationS: number,
  measured?: { before(): Promise<void>; after(): Promise<void> },
  warmupS: number = WARMUP_S,
): Promise<LoadSample> {
  const latencies: Record<string, number[]> = {};
  const failures: Record<string, Record<string, number>> = {};
  let record = false;
  const send: Send = async (label, call) => {
    const started = performance.now();
    let outcome: string;
    let text: string | null = null;
    try {
      const res = await fetch(call.url, {
        method: call.method ?? "GET",
        headers: call.headers,
        body: call.body,
      });
      const body = call.read ? await res.text() : (await res.arrayBuffer(), "");
      outcome = res.status === call.expectStatus ? "" : String(res.status);
      if (!outcome) text = body;
    } catch (error) {
      outcome = error instanceof Error ? error.name : "error";
    }
    if (!record) return text;
    latencies[label] ??= [];
    if (outcome) {
      const byOutcome = failures[label] ??= {};
      byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    } else latencies[label].push(performance.now() - started);
    return text;
  };
  const run = async (seconds: number): Promise<number> => {
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(turns.map(async (turn) => {
      while (performance.now() < until) await turn(send);
    }));
    return (performance.now() - started) / 1000;
  };
  await run(warmupS);
  await measured?.before();
  record = true;
  const elapsedS = await run(durationS);
  record = false;
  await measured?.after();
  return { latenciesMs: latencies, failures, elapsedS };
}

/** CONNECTIONS connections, each sending `target` again once its last answer is read. */
function sameRequest(target: Target): Turn[] {
  const turn: Turn = async (send) =>
    void await send("", {
      url: target.url,
      method: target.method,
      headers: target.headers,
      body: target.body?.(),
      expectStatus: target.expectStatus,
    });
  return Array.from({ length: CONNECTIONS }, () => turn);
}

const noFigures = (connections: number): LoadFigures => loadFigures([], NaN, connections);

export interface Measured extends LoadFigures {
  request: string;
  /** CPU of every process during the measured phase (warm-up excluded). */
  cpu: CpuFigures;
  /** The same per request answered, in ms, by process; `postgres` sums the cluster. */
  cpuMsPerRequest: Record<string, number>;
}

/** CPU ms per request by process, the cluster's processes summed as `postgres`. */
export function cpuMsPerRequest(
  byProcessSeconds: Record<string, number>,
  clusterSeconds: number,
  requests: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  const perRequest = (s: number): number => Math.round(s * 1000 / requests * 1000) / 1000;
  for (const [name, seconds] of Object.entries(byProcessSeconds)) {
    if (!name.startsWith("pg:")) out[name] = perRequest(seconds);
  }
  out["postgres"] = perRequest(clusterSeconds);
  return out;
}

// ---------------------------------------------------------------- the report

/** pg_stat_activity of the stack's backends, sampled during a load. */
export interface Waits {
  samples: number;
  failedSamples: Record<string, number>;
  everyMs: number;
  /** Share of samples in which a stack backend was in each state, by application. */
  states: {
    application: string;
    state: string;
    wait: string;
    /** For lock waits: the waiting statement ← the blocker's state and statement. */
    detail?: string;
    meanBackends: number;
  }[];
  figures: LoadFigures;
}

export interface RatiosReport {
  date: string;
  machine: { cpus: number; deno: string };
  method: string;
  organizationId: string;
  floors: {
    where: string;
    proxy: Measured;
    /** Alternating with the quote create. */
    write: Measured;
    /** The same write floor again, alternating with the line writers. */
    writeBesideLines: Measured;
    /** …and alternating with the variant PATCHes. */
    writeBesidePatch: Measured;
    read: Measured & { rows: number };
    singleRow: Measured & { documentBytes: number };
  };
  product: {
    createQuote: Measured & { outboxDrainSeconds: number | null };
    /**
     * The line POSTs of the line writers; `cpu` and `cpuMsPerRequest` are per line of 5
     * variants (its 7 requests: the line, 5 variants, the delete).
     */
    createLine: Measured & {
      variants: LoadFigures;
      deletes: LoadFigures;
      outboxDrainSeconds: number | null;
      writers: string;
    };
    patchVariant: Measured & { outboxDrainSeconds: number | null; writers: string };
    listQuotes: Measured & { rows: number };
    getQuote: Measured & { responseBytes: number; shape: string };
    me: Measured;
    limits: Measured;
  };
  /** From the quotes part (scripts/bench_quotes.ts), when it ran on this stack. */
  listAtScale?: ListAtScale;
  eventsUnderLoad: EventsUnderLoad | null;
  goals: Goal[];
  /** Ratios printed beside the goals, without a goal of their own. */
  otherRatios: Ratio[];
  footprint: {
    idle: Footprint;
    afterThisPart: Footprint;
    /** Filled by scripts/bench.ts after its last part on this stack. */
    afterAllParts?: Footprint;
  };
  idle: IdleFigures;
  diagnostics: {
    statementsPerRequest: Record<string, {
      requests: number;
      byApplication: Record<string, Record<string, number>>;
      note: string;
    }>;
    /** What the stack's backends wait on under each 16-writer load, sampled. */
    waitsUnderLoad: Record<"createQuote" | "createLine" | "patchVariant", Waits | null>;
  };
}

/** The body of the l-th Garment line of group g, as the full quotes are built and the writers add. */
function lineBody(g: number, l: number): Record<string, unknown> {
  return {
    lineType: "Garment",
    productName: `Heavy cotton tee ${g}.${l}`,
    productSku: `G500${l}`,
    title: "Staff tee",
    description: "Black, unisex fit",
  };
}

/** The v-th variant (from 0) of a line: sizes S to 2XL, quantity 6 + v, a manual 40 % markup. */
function variantBody(v: number): Record<string, unknown> {
  return {
    size: ["S", "M", "L", "XL", "2XL"][v % 5],
    colour: "Black",
    quantity: 6 + v,
    buyPrice: 6.25,
    extraCost: 0.5,
    markupType: "percentage",
    markupValue: 40,
  };
}

interface FullQuote {
  id: string;
  /** The quote as GET /v1/quotes/{id} answered it, right after it was built. */
  json: string;
  groupIds: string[];
  variants: { id: string; quantity: number }[];
}

/** A quote of GROUPS groups × LINES_PER_GROUP Garment lines × VARIANTS_PER_LINE variants. */
async function buildFullQuote(
  gatewayUrl: string,
  headers: Record<string, string>,
  reference = "Ratios full quote",
): Promise<FullQuote> {
  const quote = await api<{ id: string }>(`${gatewayUrl}/v1/quotes`, {
    method: "POST",
    headers,
    body: { reference, salesRepEmail: "rep@bench.test" },
  });
  const groupIds: string[] = [];
  const variants: FullQuote["variants"] = [];
  for (let g = 1; g <= GROUPS; g++) {
    const group = await api<{ id: string }>(`${gatewayUrl}/v1/quotes/${quote.id}/groups`, {
      method: "POST",
      headers,
      body: { name: `Group ${g}` },
    });
    groupIds.push(group.id);
    for (let l = 1; l <= LINES_PER_GROUP; l++) {
      const line = await api<{ id: string }>(`${gatewayUrl}/v1/quote-groups/${group.id}/lines`, {
        method: "POST",
        headers,
        body: lineBody(g, l),
      });
      for (let v = 0; v < VARIANTS_PER_LINE; v++) {
        const body = variantBody(v);
        const variant = await api<{ id: string }>(
          `${gatewayUrl}/v1/quote-lines/${line.id}/variants`,
          { method: "POST", headers, body },
        );
        variants.push({ id: variant.id, quantity: body.quantity as number });
      }
    }
  }
  const res = await fetch(`${gatewayUrl}/v1/quotes/${quote.id}`, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /v1/quotes/${quote.id} answered ${res.status}: ${text}`);
  const json = JSON.stringify((JSON.parse(text) as { data: unknown }).data);
  return { id: quote.id, json, groupIds, variants };
}

/**
 * The line writers' turn on their own quote: a line into the next group (in rotation), its
 * VARIANTS_PER_LINE variants one by one, then the line deleted, so the quote keeps its shape.
 */
function lineWriter(gatewayUrl: string, headers: Record<string, string>, quote: FullQuote): Turn {
  let turn = 0;
  return async (send) => {
    const g = turn++ % quote.groupIds.length;
    const created = await send("line", {
      url: `${gatewayUrl}/v1/quote-groups/${quote.groupIds[g]}/lines`,
      method: "POST",
      headers,
      body: JSON.stringify(lineBody(g + 1, LINES_PER_GROUP + 1)),
      expectStatus: 201,
      read: true,
    });
    if (created === null) return;
    const lineId = (JSON.parse(created) as { data: { id: string } }).data.id;
    for (let v = 0; v < VARIANTS_PER_LINE; v++) {
      await send("variant", {
        url: `${gatewayUrl}/v1/quote-lines/${lineId}/variants`,
        method: "POST",
        headers,
        body: JSON.stringify(variantBody(v)),
        expectStatus: 201,
      });
    }
    await send("delete", {
      url: `${gatewayUrl}/v1/quote-lines/${lineId}`,
      method: "DELETE",
      headers,
      expectStatus: 200,
    });
  };
}

/**
 * The PATCH writers' turn on their own quote: the next of its variants (in order, round after
 * round) to its built quantity + 1 on even rounds and back on odd ones, so every PATCH changes it.
 */
function variantPatcher(
  gatewayUrl: string,
  headers: Record<string, string>,
  quote: FullQuote,
): Turn {
  let turn = 0;
  return async (send) => {
    const k = turn % quote.variants.length;
    const round = Math.floor(turn / quote.variants.length);
    turn++;
    const variant = quote.variants[k]!;
    await send("patch", {
      url: `${gatewayUrl}/v1/quote-variants/${variant.id}`,
      method: "PATCH",
      headers,
      body: JSON.stringify({ quantity: variant.quantity + (round % 2 === 0 ? 1 : 0) }),
      expectStatus: 200,
    });
  };
}

async function waitOutboxDrained(sql: Sql): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < OUTBOX_DRAIN_TIMEOUT_MS) {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM quotes.outbox
      WHERE published_at IS NULL AND quarantined_at IS NULL`;
    if (row!.n === 0) return (performance.now() - started) / 1000;
    await sleep(250);
  }
  return null;
}

/** Where the cluster's log is: startEmbeddedPostgres puts it beside the data directory. */
function postgresLogPath(bench: BenchStack): string {
  return join(dirname(bench.pg.dataDir), "postgres.log");
}

async function fileSize(path: string): Promise<number> {
  return (await Deno.stat(path)).size;
}

async function readFrom(path: string, offset: number): Promise<string> {
  return new TextDecoder().decode((await Deno.readFile(path)).subarray(offset));
}

/**
 * Runs `requests` sequential calls of each target with `log_statement = all` on the cluster
 * (ALTER SYSTEM + reload, reset after), and counts the statements each application ran per
 * request, from the log. The relays' and consumers' statements an event causes are counted too:
 * a pause after each sample lets them finish.
 */
async function statementsPerRequest(
  bench: BenchStack,
  sql: Sql,
  targets: Record<string, Target>,
  requests: number,
): Promise<RatiosReport["diagnostics"]["statementsPerRequest"]> {
  const log = postgresLogPath(bench);
  const out: RatiosReport["diagnostics"]["statementsPerRequest"] = {};
  try {
    await fileSize(log);
  } catch {
    console.error(`[ratios] no PostgreSQL log at ${log}: statements per request not counted`);
    return out;
  }
  await sql.unsafe(`ALTER SYSTEM SET log_statement = 'all'`);
  await sql.unsafe(`ALTER SYSTEM SET log_line_prefix = 'ratios|%a|'`);
  await sql`SELECT pg_reload_conf()`;
  await sleep(500);
  /** Statements logged while `work` runs and for a pause after it (what an event sets off). */
  const logged = async (
    work: () => Promise<void>,
  ): Promise<{ counts: Record<string, Record<string, number>>; seconds: number }> => {
    const from = await fileSize(log);
    const started = performance.now();
    await work();
    await sleep(AFTER_SAMPLE_MS);
    const counts = countLoggedStatements(await readFrom(log, from));
    delete counts["bench"];
    return { counts, seconds: (performance.now() - started) / 1000 };
  };
  try {
    const idle = await logged(() => sleep(IDLE_BASELINE_MS));
    for (const [name, target] of Object.entries(targets)) {
      const sample = await logged(async () => {
        for (let i = 0; i < requests; i++) {
          const res = await fetch(target.url, {
            method: target.method ?? "GET",
            headers: target.headers,
            body: target.body?.(),
          });
          await res.arrayBuffer();
        }
      });
      out[name] = {
        requests,
        byApplication: netPerRequest(
          sample.counts,
          idle.counts,
          idle.seconds,
          sample.seconds,
          requests,
        ),
        note: `statements per request by application_name and first keyword, over ${requests} ` +
          `sequential requests and ${AFTER_SAMPLE_MS} ms after them (the relay, bus and ` +
          `consumers' work an event sets off included), net of each application's idle rate ` +
          `measured over ${idle.seconds.toFixed(1)} s just before`,
      };
    }
  } finally {
    await sql.unsafe(`ALTER SYSTEM RESET log_statement`);
    await sql.unsafe(`ALTER SYSTEM RESET log_line_prefix`);
    await sql`SELECT pg_reload_conf()`;
  }
  return out;
}

interface ActivityRow {
  application_name: string;
  state: string;
  wait: string;
  detail: string | null;
}

/** What the stack's backends are doing, sampled from pg_stat_activity during a load. */
async function waitsUnderLoad(
  sql: Sql,
  turns: Turn[],
  label: string,
  durationS: number,
): Promise<Waits> {
  let samples = 0;
  const failedSamples: Record<string, number> = {};
  const seen = new Map<string, number>();
  let loading = true;
  // For a backend waiting on a lock: the statement that waits, and what the first backend
  // blocking it is doing (its state and statement), i.e. who holds the lock meanwhile.
  const sampler = (async () => {
    while (loading) {
      let rows: ActivityRow[];
      try {
        rows = await sql<ActivityRow[]>`
        SELECT a.application_name, coalesce(a.state, '?') AS state,
               coalesce(a.wait_event_type || ':' || a.wait_event, 'on CPU') AS wait,
               CASE WHEN a.wait_event_type = 'Lock' THEN
                 left(regexp_replace(a.query, '[[:space:]]+', ' ', 'g'), 60) || ' ← held by ' ||
                 coalesce((
                   SELECT b.application_name || ' ' || b.state || ' after ' ||
                          left(regexp_replace(b.query, '[[:space:]]+', ' ', 'g'), 60)
                   FROM pg_stat_activity b WHERE b.pid = (pg_blocking_pids(a.pid))[1]
                   LIMIT 1
                 ), '?')
               END AS detail
        FROM pg_stat_activity a
        WHERE a.datname = current_database() AND a.backend_type = 'client backend'
          AND a.pid <> pg_backend_pid() AND a.application_name NOT LIKE 'bench%'
          AND a.state <> 'idle'`;
      } catch (error) {
        // A sample that fails is counted and skipped; the load goes on.
        const message = error instanceof Error ? error.message : String(error);
        failedSamples[message] = (failedSamples[message] ?? 0) + 1;
        await sleep(WAIT_SAMPLE_EVERY_MS);
        continue;
      }
      samples++;
      for (const r of rows) {
        const key = [r.application_name, r.state, r.wait, r.detail ?? ""].join("\u0000");
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      await sleep(WAIT_SAMPLE_EVERY_MS);
    }
  })();
  const figures = figuresOfSamples([await turnLoop(turns, durationS)], turns.length)[label] ??
    noFigures(turns.length);
  loading = false;
  await sampler;
  const states = [...seen].map(([key, n]) => {
    const [application, state, wait, detail] = key.split("\u0000") as [
      string,
      string,
      string,
      string,
    ];
    return {
      application,
      state,
      wait,
      ...(detail ? { detail } : {}),
      meanBackends: Math.round(n / samples * 100) / 100,
    };
  }).sort((a, b) => b.meanBackends - a.meanBackends);
  return { samples, failedSamples, everyMs: WAIT_SAMPLE_EVERY_MS, states, figures };
}

export interface RatiosOptions {
  durationS?: number;
  /** The idle figures, when the caller took them before loading the stack. */
  idle?: IdleFigures;
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
    const { organizationId, apiKey } = await benchOrganization(
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
    /** CPU ms per request answered, or per turn when `perRequestOf` names the label that starts one. */
    const perRequest = (
      byLabel: Record<string, LoadFigures>,
      cpu: CpuFigures,
      connections: number,
      perRequestOf?: string,
    ): Record<string, number> => {
      const answered = (f: LoadFigures): number =>
        f.requests + Object.values(f.failures).reduce((a, b) => a + b, 0);
      const count = perRequestOf === undefined
        ? Object.values(byLabel).reduce((n, f) => n + answered(f), 0)
        : answered(byLabel[perRequestOf] ?? noFigures(connections));
      return cpuMsPerRequest(cpu.byProcess, cpu.clusterSeconds, count);
    };
    /** One measured run of `turns` (after its warm-up), with the CPU of every process around it. */
    const sampleTurns = async (
      turns: Turn[],
      seconds: number,
      warmupS: number,
    ): Promise<{ sample: LoadSample; cpu: CpuFigures }> => {
      const processes = watched();
      let before: CpuSnapshot | undefined;
      let after: CpuSnapshot | undefined;
      const sample = await turnLoop(turns, seconds, {
        before: async () => void (before = await cpuSnapshot(sql, processes, postmaster)),
        after: async () => void (after = await cpuSnapshot(sql, processes, postmaster)),
      }, warmupS);
      return { sample, cpu: await cpuBetween(before!, after!, processes) };
    };
    /** Figures by label of turns measured in slices, with the CPU around them. */
    interface TurnsMeasured {
      byLabel: Record<string, LoadFigures>;
      cpu: CpuFigures;
      cpuMs: Record<string, number>;
    }
    /** A side's figures as one request's (the label "" that sameRequest's turns record). */
    const measuredOf = (request: string, m: TurnsMeasured): Measured => ({
      request,
      ...(m.byLabel[""] ?? noFigures(CONNECTIONS)),
      cpu: m.cpu,
      cpuMsPerRequest: m.cpuMs,
    });
    /**
     * Loads (each a set of turns, one per connection) and their floors measured in
     * ALTERNATING_SLICES alternating slices of durationS ÷ ALTERNATING_SLICES each, in ABBA order,
     * rather than one after the other: this machine's speed drifts by tens of per cent within a
     * minute, and two runs in a row put that drift straight into their ratio. A turn function
     * keeps its state from one slice to the next (a line writer goes on with its next group).
     * `between` runs after every slice (untimed), so that work a load leaves behind (an outbox
     * to publish) does not run under the next one. CPU is per request, or per turn of the label
     * `perRequestOf` names.
     */
    const measureAlternatingTurns = async (
      sides: readonly { request: string; turns: Turn[]; perRequestOf?: string }[],
      between?: () => Promise<unknown>,
    ): Promise<TurnsMeasured[]> => {
      const sliceS = durationS / ALTERNATING_SLICES;
      console.error(
        `[ratios] ${sides.map((s) => s.request).join(" ⇄ ")}: ${durationS} s each, in ` +
          `${ALTERNATING_SLICES} alternating slices, ${CONNECTIONS} connections…`,
      );
      const taken = sides.map(() => ({ samples: [] as LoadSample[], cpu: [] as CpuFigures[] }));
      const warmed = new Set<number>();
      for (const order of alternatingOrder(sides.length, ALTERNATING_SLICES)) {
        for (const i of order) {
          const warmupS = warmed.has(i) ? SLICE_WARMUP_S : WARMUP_S;
          warmed.add(i);
          const { sample, cpu } = await sampleTurns(sides[i]!.turns, sliceS, warmupS);
          taken[i]!.samples.push(sample);
          taken[i]!.cpu.push(cpu);
          await between?.();
        }
      }
      return sides.map((side, i) => {
        const byLabel = figuresOfSamples(taken[i]!.samples, side.turns.length);
        const cpu = sumCpu(taken[i]!.cpu);
        return {
          byLabel,
          cpu,
          cpuMs: perRequest(byLabel, cpu, side.turns.length, side.perRequestOf),
        };
      });
    };
    /** measureAlternatingTurns of one request per side, each sent again once answered. */
    const measureAlternating = async (
      sides: readonly { request: string; target: Target }[],
      between?: () => Promise<unknown>,
    ): Promise<Measured[]> => {
      const measured = await measureAlternatingTurns(
        sides.map((side) => ({ request: side.request, turns: sameRequest(side.target) })),
        between,
      );
      return sides.map((side, i) => measuredOf(side.request, measured[i]!));
    };
    /**
     * A `between` for loads that write: waits after each slice until the quotes outbox is
     * published, keeping the longest wait (null once one timed out).
     */
    const outboxDrains = (): { between: () => Promise<void>; longestS: () => number | null } => {
      let longest: number | null = 0;
      return {
        between: async () => {
          const drained = await waitOutboxDrained(sql);
          longest = drained === null || longest === null ? null : Math.max(longest, drained);
        },
        longestS: () => longest,
      };
    };

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
    const lineTurns = writerQuotes.map((q) => lineWriter(gatewayUrl, jsonKey, q));
    const patchTurns = writerQuotes.map((q) => variantPatcher(gatewayUrl, jsonKey, q));
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
    const createDrains = outboxDrains();
    const [writeFloor, createQuote] = await measureAlternating([
      { request: "naive proxy → POST one transaction", target: writeFloorTarget },
      { request: "POST /v1/quotes", target: targets.createQuote },
    ], createDrains.between) as [Measured, Measured];
    const outboxDrainSeconds = createDrains.longestS();

    const linesDrains = outboxDrains();
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

    const patchDrains = outboxDrains();
    const besidePatch = "naive proxy → POST one transaction (beside the PATCHes)";
    const [writeBesidePatchTurns, patch] = await measureAlternatingTurns([
      { request: besidePatch, turns: sameRequest(writeFloorTarget) },
      { request: "PATCH /v1/quote-variants/{id}, a quote per writer", turns: patchTurns },
    ], patchDrains.between) as [TurnsMeasured, TurnsMeasured];
    const writeBesidePatch = measuredOf(besidePatch, writeBesidePatchTurns);
    const patchDrainSeconds = patchDrains.longestS();

    const rows = await floors.syncReadFloor(organizationId);
    const [readFloor, listQuotes] = await measureAlternating([
      {
        request: `naive proxy → GET 20 rows + count(*) of ${rows}`,
        target: { url: floors.urls.read(organizationId), expectStatus: 200 },
      },
      { request: "GET /v1/quotes?limit=20", target: targets.listQuotes },
    ]) as [Measured, Measured];

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

// ---------------------------------------------------------------- events under the write load

export interface EventsUnderLoad {
  organizationId: string;
  /** One subscription per event type the API lists, each to a path of its own. */
  subscriptions: number;
  transport: string;
  /** The write rate the 16-writer quote create reached in this run. */
  targetRatePerSecond: number;
  durationS: number;
  writes: {
    request: string;
    sent: number;
    succeeded: number;
    failed: number;
    /** Requests sent ÷ the time between the first and the last one leaving. */
    offeredRatePerSecond: number;
    maxScheduleSlipMs: number;
    maxInFlight: number;
    responseMs: LatencyFigures;
  };
  /** quote.created events expected: one per quote created by the load. */
  expected: number;
  /** Of those, how many arrived, signed and verified. */
  delivered: number;
  allArrived: boolean;
  /** Deliveries (to any subscription) whose signature did not verify: answered 401. */
  refused: number;
  duplicates: number;
  /** Deliveries to the other subscriptions (none expected: the load only creates), by event. */
  otherDeliveries: Record<string, number>;
  /** Receipt − the event's occurredAt, over the delivered events. */
  latency: LatencyFigures;
  /** Last delivery − last write answered, in seconds. */
  drainAfterLastWriteS: number;
  note: string;
}

/** The events goal: p99 within the bound, and every event arrived, signed. */
export function eventsGoal(events: EventsUnderLoad | null): Goal {
  const g = absoluteGoal(
    "event → signed delivery p99 under the create load",
    events?.latency.p99Ms ?? NaN,
    "ms",
    "≤",
    EVENTS_GOAL_P99_MS,
  );
  return { ...g, met: g.met && events !== null && events.allArrived && events.refused === 0 };
}

/**
 * quote.created deliveries of `quoteIds`, by quote id, waiting until every one has arrived at
 * `path` or none has for EVENTS_STALL_MS (or `capMs` passed).
 */
async function awaitCreatedDeliveries(
  receiver: Receiver,
  path: string,
  quoteIds: ReadonlySet<string>,
  capMs: number,
): Promise<Map<string, { receivedAt: number; occurredAt: number }>> {
  const deadline = Date.now() + capMs;
  let seen = -1;
  let progressAt = Date.now();
  const arrivedOf = () => {
    const out = new Map<string, { receivedAt: number; occurredAt: number }>();
    for (const a of receiver.arrivals(path).values()) {
      if (a.dataId !== null && quoteIds.has(a.dataId)) out.set(a.dataId, a);
    }
    return out;
  };
  let arrived = arrivedOf();
  while (
    arrived.size < quoteIds.size && Date.now() < deadline &&
    Date.now() - progressAt < EVENTS_STALL_MS
  ) {
    if (arrived.size !== seen) {
      seen = arrived.size;
      progressAt = Date.now();
    }
    await sleep(50);
    arrived = arrivedOf();
  }
  return arrived;
}

/**
 * Item 6: a second organisation subscribes to every event type, each subscription to its own
 * path of a verifying receiver; then `POST /v1/quotes` open loop at `ratePerS` for `durationS`.
 */
async function eventsUnderWriteLoad(
  bench: BenchStack,
  ratePerS: number,
  durationS: number,
): Promise<EventsUnderLoad> {
  if (!(ratePerS > 0)) throw new Error(`no write rate to run at (${ratePerS} req/s)`);
  const gatewayUrl = bench.stack.gatewayUrl;
  const { organizationId, apiKey } = await benchOrganization(
    { adminUrl: bench.stack.adminUrl, adminToken: bench.adminToken },
    "Ratios Events Shop",
  );
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const { events } = await api<{ events: string[] }>(`${gatewayUrl}/v1/reference/events`, {
    headers,
  });
  const receiver = startReceiver();
  try {
    const pathOf = (event: string): string => `/events/${event}`;
    for (const event of events) {
      const subscription = await api<{ secret: string }>(`${gatewayUrl}/v1/webhooks`, {
        method: "POST",
        headers,
        body: { url: `${receiver.url}${pathOf(event)}`, event },
      });
      receiver.verifyWith(pathOf(event), subscription.secret);
    }
    const created = pathOf("quote.created");
    const create = async (i: number): Promise<{ quoteId: string | null; ms: number }> => {
      const started = performance.now();
      try {
        const res = await fetch(`${gatewayUrl}/v1/quotes`, {
          method: "POST",
          headers,
          body: JSON.stringify({ reference: `Events under load ${i}` }),
        });
        const text = await res.text();
        const quoteId = res.status === 201
          ? (JSON.parse(text) as { data: { id: string } }).data.id
          : null;
        return { quoteId, ms: performance.now() - started };
      } catch {
        return { quoteId: null, ms: performance.now() - started };
      }
    };

    console.error(`[ratios] events under load: ${events.length} subscriptions, warming up…`);
    const warm = new Set<string>();
    for (let i = 0; i < EVENTS_WARMUP; i++) {
      const { quoteId } = await create(-1 - i);
      if (quoteId === null) throw new Error("a warm-up quote was refused");
      warm.add(quoteId);
      const arrived = await awaitCreatedDeliveries(receiver, created, new Set([quoteId]), 30_000);
      if (!arrived.has(quoteId)) throw new Error("a warm-up event was not delivered within 30 s");
    }

    const total = Math.max(1, Math.round(ratePerS * durationS));
    console.error(
      `[ratios] events under load: POST /v1/quotes at ${ratePerS.toFixed(0)}/s for ` +
        `${durationS} s, open loop…`,
    );
    const driven = await openLoop(total, ratePerS, create, { maxInFlight: EVENTS_MAX_IN_FLIGHT });
    const lastWriteAt = Date.now();
    const quoteIds = new Set(driven.results.flatMap((r) => r.quoteId === null ? [] : [r.quoteId]));
    const arrived = await awaitCreatedDeliveries(receiver, created, quoteIds, EVENTS_DRAIN_CAP_MS);
    const arrivals = [...arrived.values()];
    const lastDelivery = arrivals.length > 0 ? Math.max(...arrivals.map((a) => a.receivedAt)) : NaN;
    let refused = 0;
    let duplicates = 0;
    const otherDeliveries: Record<string, number> = {};
    for (const event of events) {
      refused += receiver.refused(pathOf(event));
      duplicates += receiver.duplicates(pathOf(event));
    }
    for (const [path, count] of receiver.paths()) {
      if (path !== created) otherDeliveries[path.slice(pathOf("").length)] = count;
    }
    return {
      organizationId,
      subscriptions: events.length,
      transport: "embedded (the eventbus schema of the stack's PostgreSQL)",
      targetRatePerSecond: ratePerS,
      durationS,
      writes: {
        request: "POST /v1/quotes { reference }",
        sent: total,
        succeeded: quoteIds.size,
        failed: total - quoteIds.size,
        offeredRatePerSecond: driven.offeredRatePerSecond,
        maxScheduleSlipMs: driven.maxScheduleSlipMs,
        maxInFlight: EVENTS_MAX_IN_FLIGHT,
        responseMs: latencyFigures(driven.results.map((r) => r.ms)),
      },
      expected: quoteIds.size,
      delivered: arrived.size,
      allArrived: quoteIds.size > 0 && arrived.size === quoteIds.size,
      refused,
      duplicates,
      otherDeliveries,
      latency: latencyFigures(arrivals.map((a) => a.receivedAt - a.occurredAt)),
      drainAfterLastWriteS: (lastDelivery - lastWriteAt) / 1000,
      note: `one subscription per event type of GET /v1/reference/events, each to its own ` +
        `path of a loopback receiver in the bench process that verifies the Standard Webhooks ` +
        `signature with that subscription's secret; ${EVENTS_WARMUP} quotes created and ` +
        `delivered first (not counted); latency = receipt − the event's occurredAt (the ` +
        `outbox row's time), one machine clock`,
    };
  } finally {
    await receiver.stop();
  }
}

// ---------------------------------------------------------------- the list at scale

export interface ListAtScale {
  request: string;
  quotes: number;
  shape: string;
  itemsPerPage: number;
  /** Every page once first (each quote's first read through the API), for context. */
  firstPass: LatencyFigures;
  /** Sequential requests after it (the quotes part's): p50 is the goal's figure. */
  sequential: LatencyFigures;
  responseBytesMedian: number;
  /** Under the quotes part's load: requests and response bytes per second, and connections. */
  load: { connections: number; requestsPerSecond: number; bytesPerSecond: number };
  /** One request after another: the median page's bytes ÷ the p50. */
  sequentialBytesPerSecond: number;
  from: string;
}

/**
 * The ratios report with the quotes part's 200-quote list (p50 against the absolute goal, its
 * bytes per second beside), so one table holds every goal of the issue.
 */
export function withListAtScale(report: RatiosReport, quotes: QuotesReport): RatiosReport {
  const { list, seed } = quotes;
  const p = seed.perQuote;
  const listAtScale: ListAtScale = {
    request: list.request,
    quotes: seed.quotes,
    shape: `${p.groups} groups × (${p.garmentLinesPerGroup} Garment lines × ` +
      `${p.variantsPerLine} variants + ${p.decorationsPerGroup} decorations)`,
    itemsPerPage: list.itemsPerPage,
    firstPass: list.firstPass,
    sequential: list.sequential,
    responseBytesMedian: list.responseBytes.median,
    load: {
      connections: list.load.connections,
      requestsPerSecond: list.load.requestsPerSecond,
      bytesPerSecond: list.load.bytesPerSecond,
    },
    sequentialBytesPerSecond: list.responseBytes.median / (list.sequential.p50Ms / 1000),
    from: "the quotes part (scripts/bench_quotes.ts) on the same stack, its own organisation",
  };
  const listGoal = absoluteGoal(
    `GET /v1/quotes?limit=200 over ${seed.quotes.toLocaleString("en")} quotes p50`,
    list.sequential.p50Ms,
    "ms",
    "≤",
    LIST_AT_SCALE_GOAL_P50_MS,
  );
  const goals = report.goals.filter((g) => !g.figure.startsWith("GET /v1/quotes?limit=200 "));
  // Beside the other reads, before the gateway-served ones.
  const at = goals.findIndex((g) => g.figure.startsWith("GET /v1/me "));
  goals.splice(at < 0 ? goals.length : at, 0, listGoal);
  return { ...report, listAtScale, goals };
}

// ---------------------------------------------------------------- the last runs side by side

/** One run's line of bench-results/ratios-history.jsonl. */
export interface HistoryEntry {
  date: string;
  /** What ran: `deno task bench` or `scripts/bench_ratios.ts` alone. */
  command: string;
  durationS: number;
  /** The whole command's wall time, when known. */
  totalSeconds?: number;
  /**
   * The code measured: HEAD's short hash, `*` after it when tracked files had changes not
   * committed (several people work in one tree, so a run may measure others' work in progress).
   */
  commit?: string;
  /** Every goal: its value (a ratio, or ms), the bound, met. */
  goals: {
    figure: string;
    value: number;
    unit?: string;
    comparator: "≥" | "≤";
    target: number;
    met: boolean;
  }[];
  ratios: { figure: string; value: number }[];
}

/** The history line of a report: its goals, the ratios without one, and the footprint's. */
export function historyEntry(
  report: RatiosReport,
  command: string,
  totalSeconds?: number,
  commit?: string,
): HistoryEntry {
  const goals: HistoryEntry["goals"] = report.goals.map((g) => ({
    figure: g.figure,
    value: goalValue(g),
    ...(g.unit ? { unit: g.unit } : {}),
    comparator: g.comparator,
    target: g.target,
    met: g.met,
  }));
  const maxRss = (fp: Footprint | undefined): number | null => {
    const values = Object.values(fp?.rssMb ?? {});
    if (values.length === 0) return null;
    return values.some((v) => v === null) ? NaN : Math.max(...values as number[]);
  };
  const allWithin = (fp: Footprint): boolean =>
    Object.values(fp.rssMb).every((mb) => withinLimit(mb, fp.goalMbAtMost));
  const idleRss = maxRss(report.footprint.idle);
  const after = report.footprint.afterAllParts ?? report.footprint.afterThisPart;
  const afterRss = maxRss(after);
  if (idleRss !== null) {
    goals.push({
      figure: "largest process RSS, idle",
      value: idleRss,
      unit: "MB",
      comparator: "≤",
      target: report.footprint.idle.goalMbAtMost,
      met: allWithin(report.footprint.idle),
    });
  }
  if (afterRss !== null) {
    goals.push({
      // After every part under deno task bench, after this part's loads alone.
      figure: "largest process RSS, after the bench",
      value: afterRss,
      unit: "MB",
      comparator: "≤",
      target: after.goalMbAtMost,
      met: allWithin(after),
    });
  }
  goals.push({
    figure: "idle stack CPU, % of one core",
    value: report.idle.cpu.stackPctOfCore,
    unit: "%",
    comparator: "≤",
    target: report.idle.cpu.goalPctOfCoreAtMost,
    met: report.idle.cpu.met,
  });
  return {
    date: report.date,
    command,
    durationS: report.floors.proxy.durationS,
    ...(totalSeconds === undefined ? {} : { totalSeconds }),
    ...(commit === undefined ? {} : { commit }),
    goals,
    ratios: report.otherRatios.map((r) => ({ figure: r.figure, value: r.ratio })),
  };
}

/** HEAD's short hash, with `*` when tracked files differ from it; undefined without git. */
export async function codeVersion(): Promise<string | undefined> {
  const git = async (...args: string[]): Promise<string | undefined> => {
    try {
      const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" })
        .output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
    } catch {
      return undefined;
    }
  };
  const head = await git("rev-parse", "--short", "HEAD");
  if (head === undefined) return undefined;
  const changes = await git("status", "--porcelain", "--untracked-files=no");
  return changes ? `${head}*` : head;
}

/** The entries of a history file, oldest first; a line that is not one is skipped. */
export function parseHistory(text: string): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as HistoryEntry;
      if (typeof entry.date === "string" && Array.isArray(entry.goals)) entries.push(entry);
    } catch {
      // A line cut short (a run stopped while writing) or edited by hand.
    }
  }
  return entries;
}

/** Appends the entry to the history file; answers every entry in it, this one last. */
export async function appendHistory(entry: HistoryEntry, path = HISTORY): Promise<HistoryEntry[]> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(entry) + "\n", { append: true });
  return parseHistory(await Deno.readTextFile(path));
}

/**
 * `current` and the runs of the same command before it (`runs` in all), side by side, oldest on
 * the left: each goal's value with met (✓) or not (✗), then the ratios without a goal. Without
 * `current`, the last `runs` entries. Several people run benches in this working tree, alone
 * (shorter loads) or whole, so only runs of the same command are compared. Rows follow the
 * newest run's figures; a figure an older run did not have shows "–".
 */
export function formatHistory(
  entries: readonly HistoryEntry[],
  current?: HistoryEntry,
  runs = HISTORY_RUNS,
): string {
  let last = entries.slice(-runs);
  if (current) {
    const same = entries.filter((e) => e.command === current.command);
    const at = same.findLastIndex((e) => e.date === current.date);
    last = at < 0
      ? [...same.slice(-(runs - 1)), current]
      : same.slice(Math.max(0, at - runs + 1), at + 1);
  }
  if (last.length === 0) return "";
  const newest = last[last.length - 1]!;
  const width = 21;
  const figureWidth = 52;
  const value = (v: number, unit?: string): string =>
    !Number.isFinite(v)
      ? "–"
      : unit === "%"
      ? `${v.toFixed(2)} %`
      : unit
      ? `${v.toFixed(v < 100 ? 1 : 0)} ${unit}`
      : v.toFixed(2);
  const head = (e: HistoryEntry): string => `${e.date.slice(5, 16).replace("T", " ")}`;
  const lines = [
    `The last ${last.length} run${last.length === 1 ? "" : "s"}${
      current ? ` of ${current.command}` : ""
    } (${HISTORY}), oldest first; under each: task or alone, seconds per load, commit (* = ` +
    `with changes not committed)`,
    `${"".padEnd(figureWidth)}${last.map((e) => head(e).padStart(width)).join("")}   goal`,
    `${"".padEnd(figureWidth)}${
      last.map((e) =>
        `${e.command === "deno task bench" ? "task" : "alone"} ${e.durationS.toFixed(0)}s${
          e.commit ? ` ${e.commit}` : ""
        }`.padStart(width)
      ).join("")
    }`,
  ];
  for (const g of newest.goals) {
    const cells = last.map((e) => {
      const same = e.goals.find((x) => x.figure === g.figure);
      return (same ? `${value(same.value, same.unit)} ${same.met ? "✓" : "✗"}` : "–")
        .padStart(width);
    });
    const bound = g.unit
      ? `${g.comparator} ${g.target} ${g.unit}`
      : `${g.comparator} ${g.target.toFixed(2)}`;
    lines.push(
      `${g.figure.slice(0, figureWidth - 1).padEnd(figureWidth)}${cells.join("")}   ${bound}`,
    );
  }
  for (const r of newest.ratios) {
    const cells = last.map((e) => {
      const same = e.ratios.find((x) => x.figure === r.figure);
      return (same ? `${value(same.value)}  ` : "–").padStart(width);
    });
    lines.push(`${r.figure.slice(0, figureWidth - 1).padEnd(figureWidth)}${cells.join("")}   –`);
  }
  const met = last.map((e) => `${e.goals.filter((g) => g.met).length}/${e.goals.length}`);
  lines.push(`${"goals met".padEnd(figureWidth)}${met.map((m) => m.padStart(width)).join("")}`);
  const totals = last.map((e) =>
    e.totalSeconds === undefined ? "–" : `${(e.totalSeconds / 60).toFixed(1)} min`
  );
  lines.push(
    `${"whole command's wall time".padEnd(figureWidth)}${
      totals.map((t) => t.padStart(width)).join("")
    }`,
  );
  return lines.join("\n");
}

/** RSS of the stack now, as "after every part" of `deno task bench`, added to the report. */
export async function footprintAfterAllParts(bench: BenchStack): Promise<Footprint> {
  return await footprint(bench, RSS_AFTER_GOAL_MB);
}

// ---------------------------------------------------------------- printing

const num = (n: number, digits: number, width: number): string =>
  (Number.isFinite(n) ? n.toFixed(digits) : "–").padStart(width);

/** The footprint table; `withIdleCpu: false` leaves out the idle CPU lines (printed already). */
export function formatFootprint(report: RatiosReport, withIdleCpu = true): string {
  const { idle, afterThisPart, afterAllParts } = report.footprint;
  const mb = (fp: Footprint | undefined, name: string): string => {
    const v = fp?.rssMb[name];
    if (v === undefined) return "".padStart(14);
    return `${num(v ?? NaN, 1, 7)} ${fp!.met[name] ? "   met" : "  over"}`;
  };
  const cpu = report.idle.cpu;
  const lines = [
    `footprint (VmRSS MB; goals ≤ ${idle.goalMbAtMost} idle, ≤ ${afterThisPart.goalMbAtMost} after)`,
    `process            idle           after this part` +
    (afterAllParts ? `   after every part` : ""),
  ];
  for (const name of Object.keys(idle.rssMb)) {
    lines.push(
      `${name.padEnd(12)}  ${mb(idle, name)}   ${mb(afterThisPart, name)}` +
        (afterAllParts ? `   ${mb(afterAllParts, name)}` : ""),
    );
  }
  if (!withIdleCpu) return lines.join("\n");
  const top = Object.entries(cpu.byProcess).filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([name, s]) => `${name} ${(s / cpu.seconds * 100).toFixed(2)} %`).join(", ");
  lines.push(
    `idle CPU over ${cpu.seconds.toFixed(0)} s: stack ${cpu.stackPctOfCore.toFixed(2)} % of ` +
      `one core (goal ≤ ${cpu.goalPctOfCoreAtMost} %) ${metText(cpu.met)}; whole PostgreSQL ` +
      `cluster ${(cpu.clusterSeconds / cpu.seconds * 100).toFixed(2)} %`,
    `  by process: ${top || "nothing measurable"}`,
  );
  return lines.join("\n");
}

export function formatRatiosReport(
  report: RatiosReport,
  writtenTo: string,
  /** The last runs side by side (formatHistory), printed at the end. */
  history = "",
): string {
  const f = report.floors;
  const p = report.product;
  const rows: [string, Measured | LoadFigures][] = [
    ["floor: proxy → fixed JSON", f.proxy],
    ["GET /v1/me", p.me],
    ["GET /v1/reference/limits", p.limits],
    ["floor: proxy → write tx", f.write],
    ["POST /v1/quotes", p.createQuote],
    ["floor: proxy → write tx", f.writeBesideLines],
    ["POST …/lines (1 turn: line, …)", p.createLine],
    [`  …its ${VARIANTS_PER_LINE} × POST …/variants`, p.createLine.variants],
    ["  …DELETE /v1/quote-lines/{id}", p.createLine.deletes],
    ["floor: proxy → write tx", f.writeBesidePatch],
    ["PATCH /v1/quote-variants/{id}", p.patchVariant],
    [`floor: proxy → 20 of ${f.read.rows} + count`, f.read],
    ["GET /v1/quotes?limit=20", p.listQuotes],
    [`floor: proxy → 1 row (${(f.singleRow.documentBytes / 1024).toFixed(0)} KB)`, f.singleRow],
    ["GET /v1/quotes/{id} (3×4×5)", p.getQuote],
  ];
  const failures = (m: LoadFigures): string => {
    const text = Object.entries(m.failures).map(([k, v]) => `${v}×${k}`).join(" ");
    return text ? `  failed: ${text}` : "";
  };
  const cpuText = (m: Measured | LoadFigures): string =>
    !("cpuMsPerRequest" in m) ? "" : Object.entries(m.cpuMsPerRequest).filter(([, v]) => v >= 0.01)
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k.replace(" (load generator)", "")} ${v.toFixed(2)}`)
      .join(", ");
  const lines = [
    "",
    `Issue 15 ratios: ${CONNECTIONS} connections, closed loop, ${
      f.proxy.durationS.toFixed(0)
    } s per target, floors on the same PostgreSQL in the same run`,
    `${"target".padEnd(36)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${
      "p99 ms".padStart(9)
    }   CPU ms per request, by process`,
    ...rows.map(([label, m]) =>
      `${label.padEnd(36)}${num(m.requestsPerSecond, 0, 9)}${num(m.p50Ms, 2, 9)}${
        num(m.p99Ms, 2, 9)
      }   ${cpuText(m)}${failures(m)}`
    ),
    `lines and PATCHes: ${p.createLine.writers.split(". ")[0]}; a line turn adds a line to the ` +
    `next group, its ${VARIANTS_PER_LINE} variants one by one, and deletes it (its CPU is per ` +
    `turn)`,
  ];
  const list = report.listAtScale;
  if (list) {
    lines.push(
      "",
      `GET /v1/quotes?limit=${list.itemsPerPage} over ${list.quotes.toLocaleString("en")} ` +
        `quotes of ${list.shape}: p50 ${list.sequential.p50Ms.toFixed(1)} ms, p99 ` +
        `${list.sequential.p99Ms.toFixed(1)} ms (${list.sequential.samples} sequential, offset ` +
        `cycling, after a first read of every page at p50 ${list.firstPass.p50Ms.toFixed(1)} ` +
        `ms); ${(list.responseBytesMedian / 1e6).toFixed(2)} MB a page, ` +
        `${(list.sequentialBytesPerSecond / 1e6).toFixed(1)} MB/s one after another, ` +
        `${(list.load.bytesPerSecond / 1e6).toFixed(1)} MB/s (${
          list.load.requestsPerSecond.toFixed(1)
        } req/s) at ${list.load.connections} connections`,
    );
  }
  const ev = report.eventsUnderLoad;
  if (ev) {
    const otherText = Object.entries(ev.otherDeliveries).map(([e, n]) => `${n} ${e}`).join(", ");
    lines.push(
      "",
      `events under the create load (${
        ev.transport.split(" ")[0]
      } transport, ${ev.subscriptions} ` +
        `subscriptions, one per event type, signatures verified): POST /v1/quotes open loop at ` +
        `${ev.targetRatePerSecond.toFixed(0)}/s for ${ev.durationS} s (offered ` +
        `${ev.writes.offeredRatePerSecond.toFixed(0)}/s, ${ev.writes.failed} failed, schedule ` +
        `slip ≤ ${ev.writes.maxScheduleSlipMs.toFixed(0)} ms)`,
      `  event → signed delivery: p50 ${ev.latency.p50Ms.toFixed(0)} ms, p99 ` +
        `${ev.latency.p99Ms.toFixed(0)} ms, max ${ev.latency.maxMs.toFixed(0)} ms; ` +
        `${ev.delivered}/${ev.expected} delivered, ${ev.refused} refused signatures, ` +
        `${otherText || "none"} to other subscriptions, drained ` +
        `${ev.drainAfterLastWriteS.toFixed(1)} s after the last write`,
    );
  } else {
    lines.push("", "events under the create load: not measured (see the log above)");
  }
  lines.push(
    "",
    `${"goal".padEnd(50)}${"value".padStart(10)}  ${"bound".padEnd(10)}`,
    ...report.goals.map((g) =>
      `${g.figure.padEnd(50)}${formatGoalValue(g).padStart(10)}  ${formatGoal(g).padEnd(10)}  ${
        metText(g.met)
      }`
    ),
    ...report.otherRatios.map((r) =>
      `${r.figure.padEnd(50)}${num(r.ratio, 2, 10)}  ${"–".padEnd(10)}  (no goal)`
    ),
    "",
    formatFootprint(report),
  );
  const drain = p.createQuote.outboxDrainSeconds;
  lines.push(
    "",
    `quotes outbox after the create load: published ${
      drain === null
        ? "not within the timeout"
        : `at most ${drain.toFixed(1)} s after a slice of the load ended`
    }`,
  );
  const statements = report.diagnostics.statementsPerRequest;
  for (
    const [name, label] of [
      ["createQuote", "POST /v1/quotes"],
      ["createLine", "POST …/lines"],
      ["patchVariant", "PATCH …/quote-variants/{id}"],
    ] as const
  ) {
    const counted = statements[name];
    if (!counted) continue;
    lines.push(
      `statements per ${label}: ${
        Object.entries(counted.byApplication)
          .map(([app, k]) => `${app} ${k.total}`)
          .join(", ")
      }`,
    );
  }
  for (
    const [name, label] of [
      ["createQuote", "POST /v1/quotes"],
      ["createLine", "line turns (line, its variants, delete)"],
      ["patchVariant", "PATCH …/quote-variants/{id}"],
    ] as const
  ) {
    const waits = report.diagnostics.waitsUnderLoad[name];
    if (!waits) continue;
    lines.push(
      `stack backends not idle under ${CONNECTIONS} writers of ${label} (mean count per ` +
        `sample, ${waits.samples} samples, ${waits.figures.requestsPerSecond.toFixed(0)} ` +
        `${name === "createLine" ? "lines" : "req"}/s):`,
      ...waits.states.slice(0, 5).map((s) =>
        `  ${s.meanBackends.toFixed(2).padStart(5)}  ${s.application} ${s.state} ${s.wait}${
          s.detail ? `: ${s.detail}` : ""
        }`
      ),
    );
  }
  lines.push(`Figures written to ${writtenTo}`);
  if (history) lines.push("", history);
  return lines.map((line) => line.trimEnd()).join("\n");
}

export async function writeRatiosReport(report: RatiosReport, path = RESULTS): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
}

if (import.meta.main) {
  const started = performance.now();
  const bench = await startBenchStack("printshop-bench-ratios-");
  try {
    let report = await runRatiosBench(bench);
    await writeRatiosReport(report);
    // The 200-quote list over 10,000 quotes is the quotes part's: it runs here on this stack.
    const quotes = await runQuotesBench({
      gatewayUrl: bench.stack.gatewayUrl,
      adminUrl: bench.stack.adminUrl,
      adminToken: bench.adminToken,
      databaseUrl: bench.databaseUrl,
      durationS: BENCH_DURATION_S,
    });
    console.log(formatQuotesReport(quotes, "(not written: run alone)"));
    report = withListAtScale(report, quotes);
    await writeRatiosReport(report);
    const entry = historyEntry(
      report,
      "scripts/bench_ratios.ts",
      (performance.now() - started) / 1000,
      await codeVersion(),
    );
    const history = formatHistory(await appendHistory(entry), entry);
    console.log(formatRatiosReport(report, RESULTS, history));
  } finally {
    await bench.stop();
  }
}

/**
 * The ratios part of `deno task bench` (issue 15): every product figure beside a floor measured
 * in the same run, on the same PostgreSQL server (scripts/bench_floors.ts), printed as a ratio
 * with the issue's goal and met / not met. Imported by scripts/bench.ts and run on its stack
 * after the gateway part; or alone, on a stack of its own, with
 * `deno run -A scripts/bench_ratios.ts`.
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
 * Measured, each floor just before its product figure so that the machine's other load hits
 * both alike:
 * - proxy floor, then `GET /v1/me` and `GET /v1/reference/limits` through the gateway;
 * - write floor, then `POST /v1/quotes` `{ "reference": "…" }` (16 writers, one organisation),
 *   then a wait until the quotes outbox is published (reported), so the relay's backlog does
 *   not run under the next loads;
 * - read floor over a copy of the organisation's quotes rows as they are now, then
 *   `GET /v1/quotes?limit=20` (the same rows);
 * - single-row floor (the full quote's own answer stored as one row), then `GET /v1/quotes/{id}`
 *   of a full quote (3 groups × 4 lines × 5 variants, built through the API).
 *
 * Ratios and goals (issue 15): quote create req/s ≥ 0.5 × write floor and p99 ≤ 4 × write floor
 * p99; list ≥ 0.8 × read floor; get-by-id ≥ 0.8 × single-row floor; /v1/me and
 * /v1/reference/limits ≥ 1.0 × proxy floor.
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
 * what the stack's backends wait on (pg_stat_activity sampled) under the 16-writer create load.
 *
 * Figures go to bench-results/ratios.json. Nothing is asserted: a goal not met is printed as
 * such and the run goes on.
 */
import { percentile } from "./bench_stats.ts";
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

/** Seconds the idle stack's CPU is measured over (`BENCH_IDLE_S`), 60 unless set. */
export const BENCH_IDLE_S = Number(Deno.env.get("BENCH_IDLE_S") ?? 60);
const CONNECTIONS = 16;
const WARMUP_S = 1;
/** Pause after boot before the idle figures, so start-up work is not counted as idle. */
const SETTLE_S = 3;
const RSS_IDLE_GOAL_MB = 80;
const RSS_AFTER_GOAL_MB = 120;
const IDLE_CPU_GOAL_PCT = 1;
const GROUPS = 3;
const LINES_PER_GROUP = 4;
const VARIANTS_PER_LINE = 5;
/** Sequential requests per product request while PostgreSQL logs statements. */
const STATEMENT_SAMPLE = 20;
/** After a statement sample, so the relay, the bus and consumers finish what it set off. */
const AFTER_SAMPLE_MS = 1500;
const IDLE_BASELINE_MS = 3000;
const WAIT_SAMPLE_EVERY_MS = 10;
const OUTBOX_DRAIN_TIMEOUT_MS = 120_000;
const RESULTS = "bench-results/ratios.json";

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
  floor: number;
  ratio: number;
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
  const met = Number.isFinite(ratio) && (comparator === "≥" ? ratio >= target : ratio <= target);
  return { figure, product, floor, ratio, comparator, target, met };
}

/** A limit on an absolute figure (RSS, CPU): met when the value is within it. */
export function withinLimit(value: number | null, limit: number): boolean {
  return value !== null && Number.isFinite(value) && value <= limit;
}

export const metText = (met: boolean): string => met ? "met" : "not met";

export function formatGoal(g: Pick<Goal, "comparator" | "target">): string {
  return `${g.comparator} ${g.target.toFixed(2)}`;
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

interface Target {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** A fresh body per request. */
  body?: () => string;
  expectStatus: number;
}

/**
 * CONNECTIONS loops, each sending the next request once the last answer is read: a warm-up,
 * then `durationS` measured. `measured` runs its `before` and `after` right around the
 * measured phase (the CPU snapshots, so the warm-up is not counted).
 */
async function closedLoop(
  target: Target,
  durationS: number,
  measured?: { before(): Promise<void>; after(): Promise<void> },
): Promise<LoadFigures> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const once = async (record: boolean): Promise<void> => {
    const started = performance.now();
    let outcome: string;
    try {
      const res = await fetch(target.url, {
        method: target.method ?? "GET",
        headers: target.headers,
        body: target.body?.(),
      });
      await res.arrayBuffer();
      outcome = res.status === target.expectStatus ? "" : String(res.status);
    } catch (error) {
      outcome = error instanceof Error ? error.name : "error";
    }
    if (!record) return;
    if (outcome) failures[outcome] = (failures[outcome] ?? 0) + 1;
    else latencies.push(performance.now() - started);
  };
  const run = async (seconds: number, record: boolean): Promise<number> => {
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) await once(record);
    }));
    return (performance.now() - started) / 1000;
  };
  await run(WARMUP_S, false);
  await measured?.before();
  const elapsed = await run(durationS, true);
  await measured?.after();
  return loadFigures(latencies, elapsed, CONNECTIONS, failures);
}

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

export interface RatiosReport {
  date: string;
  machine: { cpus: number; deno: string };
  method: string;
  organizationId: string;
  floors: {
    where: string;
    proxy: Measured;
    write: Measured;
    read: Measured & { rows: number };
    singleRow: Measured & { documentBytes: number };
  };
  product: {
    createQuote: Measured & { outboxDrainSeconds: number | null };
    listQuotes: Measured & { rows: number };
    getQuote: Measured & { responseBytes: number; shape: string };
    me: Measured;
    limits: Measured;
  };
  goals: Goal[];
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
    createQuoteWaits: {
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
    } | null;
  };
}

async function buildFullQuote(
  gatewayUrl: string,
  headers: Record<string, string>,
): Promise<{ id: string; json: string }> {
  const quote = await api<{ id: string }>(`${gatewayUrl}/v1/quotes`, {
    method: "POST",
    headers,
    body: { reference: "Ratios full quote", salesRepEmail: "rep@bench.test" },
  });
  const sizes = ["S", "M", "L", "XL", "2XL"];
  for (let g = 1; g <= GROUPS; g++) {
    const group = await api<{ id: string }>(`${gatewayUrl}/v1/quotes/${quote.id}/groups`, {
      method: "POST",
      headers,
      body: { name: `Group ${g}` },
    });
    for (let l = 1; l <= LINES_PER_GROUP; l++) {
      const line = await api<{ id: string }>(`${gatewayUrl}/v1/quote-groups/${group.id}/lines`, {
        method: "POST",
        headers,
        body: {
          lineType: "Garment",
          productName: `Heavy cotton tee ${g}.${l}`,
          productSku: `G500${l}`,
          title: "Staff tee",
          description: "Black, unisex fit",
        },
      });
      for (let v = 0; v < VARIANTS_PER_LINE; v++) {
        await api(`${gatewayUrl}/v1/quote-lines/${line.id}/variants`, {
          method: "POST",
          headers,
          body: {
            size: sizes[v],
            colour: "Black",
            quantity: 6 + v,
            buyPrice: 6.25,
            extraCost: 0.5,
            markupType: "percentage",
            markupValue: 40,
          },
        });
      }
    }
  }
  const res = await fetch(`${gatewayUrl}/v1/quotes/${quote.id}`, { headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /v1/quotes/${quote.id} answered ${res.status}: ${text}`);
  const json = JSON.stringify((JSON.parse(text) as { data: unknown }).data);
  return { id: quote.id, json };
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

/** What the stack's backends are doing, sampled from pg_stat_activity during a create load. */
async function createQuoteWaits(
  sql: Sql,
  target: Target,
  durationS: number,
): Promise<RatiosReport["diagnostics"]["createQuoteWaits"]> {
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
  const figures = await closedLoop(target, durationS);
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
    console.error(`[ratios] building a full quote through the API…`);
    const full = await buildFullQuote(gatewayUrl, jsonKey);
    const documentId = await floors.storeDocument(organizationId, full.json);

    const measure = async (request: string, target: Target): Promise<Measured> => {
      console.error(`[ratios] ${request}: ${durationS} s, ${CONNECTIONS} connections…`);
      const watched = [
        ...stackProcesses(bench),
        ...floorWatched,
        { name: "bench (load generator)", pid: Deno.pid, stack: false },
      ];
      let before: CpuSnapshot | undefined;
      let after: CpuSnapshot | undefined;
      const figures = await closedLoop(target, durationS, {
        before: async () => void (before = await cpuSnapshot(sql, watched, postmaster)),
        after: async () => void (after = await cpuSnapshot(sql, watched, postmaster)),
      });
      const cpu = await cpuBetween(before!, after!, watched);
      const answered = figures.requests +
        Object.values(figures.failures).reduce((a, b) => a + b, 0);
      return {
        request,
        ...figures,
        cpu,
        cpuMsPerRequest: cpuMsPerRequest(cpu.byProcess, cpu.clusterSeconds, answered),
      };
    };

    let n = 0;
    const reference = (): string => JSON.stringify({ reference: `Ratio ${++n}` });
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
      listQuotes: { url: `${gatewayUrl}/v1/quotes?limit=20`, headers: key, expectStatus: 200 },
      getQuote: { url: `${gatewayUrl}/v1/quotes/${full.id}`, headers: key, expectStatus: 200 },
    } satisfies Record<string, Target>;

    const proxyFloor = await measure("naive proxy → GET fixed JSON", {
      url: floors.urls.json,
      expectStatus: 200,
    });
    const me = await measure("GET /v1/me", targets.me);
    const limits = await measure("GET /v1/reference/limits", targets.limits);

    const writeFloor = await measure("naive proxy → POST one transaction", {
      url: floors.urls.write(organizationId),
      method: "POST",
      headers: { "content-type": "application/json" },
      body: reference,
      expectStatus: 201,
    });
    const createQuote = await measure("POST /v1/quotes", targets.createQuote);
    console.error(`[ratios] waiting for the quotes outbox to be published…`);
    const outboxDrainSeconds = await waitOutboxDrained(sql);

    const rows = await floors.syncReadFloor(organizationId);
    const readFloor = await measure(`naive proxy → GET 20 rows + count(*) of ${rows}`, {
      url: floors.urls.read(organizationId),
      expectStatus: 200,
    });
    const listQuotes = await measure("GET /v1/quotes?limit=20", targets.listQuotes);

    const singleRowFloor = await measure("naive proxy → GET one stored document", {
      url: floors.urls.one(documentId),
      expectStatus: 200,
    });
    const getQuote = await measure("GET /v1/quotes/{id}", targets.getQuote);

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

    console.error(`[ratios] diagnostics: statements per request, waits under create load…`);
    // Diagnostics only: one that fails is reported and the figures above still stand.
    const statements = await statementsPerRequest(bench, sql, targets, STATEMENT_SAMPLE)
      .catch((error) => {
        console.error(`[ratios] statements per request not counted: ${error}`);
        return {};
      });
    const waits = await createQuoteWaits(sql, targets.createQuote, Math.min(durationS, 5))
      .catch((error) => {
        console.error(`[ratios] waits under the create load not sampled: ${error}`);
        return null;
      });
    await waitOutboxDrained(sql);
    await sleep(1000);
    const afterThisPart = await footprint(bench, RSS_AFTER_GOAL_MB);

    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      method: `${CONNECTIONS} connections, each a closed loop (next request when the answer ` +
        `is read), ${WARMUP_S} s warm-up then ${durationS} s measured per target; latency by ` +
        `performance.now() in the bench process; req/s = answers ÷ wall time`,
      organizationId,
      floors: {
        where: "two child processes on loopback: the naive proxy (Deno.serve + fetch) in " +
          "front of the floor service (Deno.serve + postgres.js, 10 connections), on the " +
          "stack's PostgreSQL server and database, schema bench_floors (scripts/bench_floors.ts)",
        proxy: proxyFloor,
        write: writeFloor,
        read: { ...readFloor, rows },
        singleRow: { ...singleRowFloor, documentBytes: new TextEncoder().encode(full.json).length },
      },
      product: {
        createQuote: { ...createQuote, outboxDrainSeconds },
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
      goals,
      footprint: { idle: idle.footprint, afterThisPart },
      idle,
      diagnostics: { statementsPerRequest: statements, createQuoteWaits: waits },
    };
  } finally {
    await floors?.stop();
    await sql.end();
  }
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

export function formatRatiosReport(report: RatiosReport, writtenTo: string): string {
  const f = report.floors;
  const p = report.product;
  const rows: [string, Measured][] = [
    ["floor: proxy → fixed JSON", f.proxy],
    ["GET /v1/me", p.me],
    ["GET /v1/reference/limits", p.limits],
    ["floor: proxy → write tx", f.write],
    ["POST /v1/quotes", p.createQuote],
    [`floor: proxy → 20 of ${f.read.rows} + count`, f.read],
    ["GET /v1/quotes?limit=20", p.listQuotes],
    [`floor: proxy → 1 row (${(f.singleRow.documentBytes / 1024).toFixed(0)} KB)`, f.singleRow],
    ["GET /v1/quotes/{id} (3×4×5)", p.getQuote],
  ];
  const failures = (m: Measured): string => {
    const text = Object.entries(m.failures).map(([k, v]) => `${v}×${k}`).join(" ");
    return text ? `  failed: ${text}` : "";
  };
  const cpuText = (m: Measured): string =>
    Object.entries(m.cpuMsPerRequest).filter(([, v]) => v >= 0.01)
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
    "",
    `${"ratio to its floor".padEnd(46)}${"ratio".padStart(8)}  ${"goal".padEnd(8)}`,
    ...report.goals.map((g) =>
      `${g.figure.padEnd(46)}${num(g.ratio, 2, 8)}  ${formatGoal(g).padEnd(8)}  ${metText(g.met)}`
    ),
    "",
    formatFootprint(report),
  ];
  const drain = p.createQuote.outboxDrainSeconds;
  lines.push(
    "",
    `quotes outbox after the create load: published ${
      drain === null ? "not within the timeout" : `${drain.toFixed(1)} s after the load ended`
    }`,
  );
  const create = report.diagnostics.statementsPerRequest.createQuote;
  if (create) {
    lines.push(
      `statements per POST /v1/quotes: ${
        Object.entries(create.byApplication)
          .map(([app, k]) => `${app} ${k.total}`)
          .join(", ")
      }`,
    );
  }
  const waits = report.diagnostics.createQuoteWaits;
  if (waits) {
    lines.push(
      `stack backends not idle under ${CONNECTIONS} writers (mean count per sample, ` +
        `${waits.samples} samples, ${waits.figures.requestsPerSecond.toFixed(0)} req/s):`,
      ...waits.states.slice(0, 6).map((s) =>
        `  ${s.meanBackends.toFixed(2).padStart(5)}  ${s.application} ${s.state} ${s.wait}${
          s.detail ? `: ${s.detail}` : ""
        }`
      ),
    );
  }
  lines.push(`Figures written to ${writtenTo}`);
  return lines.join("\n");
}

export async function writeRatiosReport(report: RatiosReport, path = RESULTS): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
}

if (import.meta.main) {
  const bench = await startBenchStack("printshop-bench-ratios-");
  try {
    const report = await runRatiosBench(bench);
    await writeRatiosReport(report);
    console.log(formatRatiosReport(report, RESULTS));
  } finally {
    await bench.stop();
  }
}

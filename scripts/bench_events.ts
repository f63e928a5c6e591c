/**
 * The events part of `deno task bench`: change → signed webhook delivery, on both transports.
 * scripts/bench.ts runs it last, on its PostgreSQL cluster; `deno run -A scripts/bench_events.ts`
 * runs it alone on a throwaway cluster of its own.
 *
 * Each transport gets a freshly launched stack on a fresh database (created on the cluster and
 * dropped afterwards): first the embedded transport (the `eventbus` schema in PostgreSQL), then
 * Kafka through kafkajs against Mokapi (shared/testing/mokapi.ts), a Kafka-wire-protocol test
 * broker that keeps everything in memory. Mokapi's figures say nothing about a real Kafka
 * cluster; they show the kafkajs path of the product under load on this machine.
 * A loopback receiver in this process verifies each delivery's Standard Webhooks signature with
 * its subscription's secret (as a customer's endpoint would; 401 and counted when it does not),
 * answers 204 and records, per event id (the `webhook-id` header), when it arrived; the body's `timestamp` is the event's occurredAt
 * (the outbox row's clock_timestamp()), so receipt − occurredAt is the whole outbox → relay →
 * bus → webhooks consumer → delivery worker → HTTP path, on one machine clock.
 *
 * Two workloads, each with one subscription of its own organisation:
 * - `quote.deleted`: `DELETE /v1/quotes/{id}` of empty draft quotes seeded by SQL (no events);
 *   the event is `{ id }`, under 300 bytes on the bus.
 * - `quote.created`: `POST /v1/quotes`; the event carries the whole quote, over 1 kB.
 * Mokapi 0.52 refuses a produce request holding two or more records over ~510 bytes ("invalid
 * json format: unexpected end of JSON input"), so on Kafka `quote.created` stalls as soon as the
 * relay publishes a batch of two; `quote.deleted` is the workload it can carry, and runs first.
 * A phase reports the relay's publish errors from the quotes service's log, so a stall shows why.
 *
 * Per transport: a warm-up (5 quotes, each waited for, so the Kafka consumer group has joined;
 * then 300 deletions at the steady rate, to compile the hot paths), then per workload:
 * 1. Latency: one change through the gateway every 10 ms (100 events/s), open loop (each request
 *    leaves at its scheduled time whether or not earlier ones have answered), for
 *    `BENCH_DURATION_S` seconds (15 by default). p50, p99 and max of receipt − occurredAt, the
 *    count delivered, and whether every event id the quotes outbox holds for the organisation
 *    arrived. Goal reported: p99 ≤ 1 s for quote.created on the embedded transport.
 *    A phase that falls behind is cut off 60 s after its last write.
 * 2. Throughput (only when step 1 kept up: every event arrived, within 5 s of the last write): a
 *    backlog of `BENCH_EVENTS_BACKLOG` (2,000) changes, 20 in flight; events/s from the first
 *    write to the last delivery, the write rate achieved, and how long delivery ran on after the
 *    last write.
 * For each phase, where the time goes: database timestamps of each stage (outbox row written,
 * relay picked it up, embedded bus row, webhooks consumer recorded it, first attempt started) and
 * the receipt, as p50 / p99; and the CPU each process used (from /proc), since everything shares
 * this machine's cores.
 *
 * Prints a table and writes bench-results/events.json. Nothing is asserted about speed; a stack
 * that cannot start or deliver the warm-up ends that transport's part, the other still runs, and
 * the run then fails. Every process, Mokapi, database and temporary directory is removed on the
 * way out, on failure and on Ctrl-C too.
 */
import { connect, type Sql } from "@printshop/shared/db";
import { startThrowawayPostgres } from "@printshop/shared/embedded-postgres";
import { launchStack, type RunningStack } from "@printshop/shared/launcher";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { type Mokapi, startMokapi } from "@printshop/shared/testing/mokapi";
import { Webhook } from "standardwebhooks";
import { type LatencyFigures, latencyFigures } from "./bench_stats.ts";

const LATENCY_S = Number(Deno.env.get("BENCH_DURATION_S") ?? 15);
const BACKLOG = Number(Deno.env.get("BENCH_EVENTS_BACKLOG") ?? 2_000);
if (!(LATENCY_S > 0)) {
  throw new Error(`BENCH_DURATION_S must be a number > 0, not ${Deno.env.get("BENCH_DURATION_S")}`);
}
if (!Number.isInteger(BACKLOG) || BACKLOG < 1) {
  throw new Error(
    `BENCH_EVENTS_BACKLOG must be a whole number ≥ 1, not ${Deno.env.get("BENCH_EVENTS_BACKLOG")}`,
  );
}
const RATE_PER_S = 100;
const BACKLOG_CONCURRENCY = 20;
const WARMUP_EVENTS = 5;
const WARMUP_BURST = 300;
const FIRST_DELIVERY_TIMEOUT_MS = 90_000;
/** Waiting for deliveries gives up when none has arrived for this long. */
const STALL_MS = 20_000;
/** …or this long after the steady phase's last write: it fell behind the offered load. */
const STEADY_DRAIN_CAP_MS = 60_000;
/** …or this long after the backlog's last write. */
const BACKLOG_DRAIN_CAP_MS = 180_000;
/** A steady phase whose deliveries ran on longer than this after its writes fell behind. */
const KEPT_UP_DRAIN_S = 5;
const LATENCY_GOAL_P99_MS = 1_000;
const CLOCK_TICKS_PER_S = 100;

type Transport = "embedded" | "kafka";
type EventType = "quote.created" | "quote.deleted";
/** quote.deleted first: on Mokapi, quote.created leaves the quotes topic stuck. */
const WORKLOADS: readonly EventType[] = ["quote.deleted", "quote.created"];
const WRITE_OF: Record<EventType, string> = {
  "quote.created": "POST /v1/quotes",
  "quote.deleted": "DELETE /v1/quotes/{id} (empty drafts seeded by SQL)",
};

/** p50, p99 and max of a set of milliseconds (scripts/bench_stats.ts). */
export type Distribution = LatencyFigures;

/** Where the time goes, from database timestamps (see `stageBreakdown`). */
export interface Stages {
  /** occurredAt → the relay's transaction that published the row began. */
  outboxToRelay: Distribution;
  /** Relay → the embedded bus row (embedded only). */
  relayToBus?: Distribution;
  /** Embedded bus row → the webhooks consumer's recording transaction began (embedded only). */
  busToConsumer?: Distribution;
  /** Relay → the webhooks consumer's recording transaction began (through the broker). */
  relayToConsumer: Distribution;
  /** Delivery queued → its first attempt started (the worker's claim). */
  queuedToAttempt: Distribution;
  /** Attempt started → the receiver had the request (signing, HTTP). */
  attemptToReceipt: Distribution;
}

/** Cores used (CPU-seconds per second) over a phase, from /proc. */
export interface CpuUse {
  seconds: number;
  /** Every process on the machine. */
  machineCores: number;
  /** Processes this bench started, directly or not. */
  byProcess: Record<string, number>;
  /**
   * What the machine did besides: kernel threads (reclaim, workers), processes this bench did
   * not start that were still running at the end, and the busy time left over: mostly processes
   * that started and ended within the phase (another test run's), and interrupts.
   */
  outside: { kernelThreads: number; otherProcesses: number; unattributed: number };
}

export interface RelayErrors {
  /** Error lines of the quotes service's log during the phase (kafkajs and the relay). */
  count: number;
  /** The same lines by their error (kafkajs's `error` field, else the message). */
  byError: Record<string, number>;
}

export interface Completeness {
  /** Events of the phase's organisation and type in the quotes outbox. */
  expected: number;
  /** Distinct event ids the receiver got. */
  delivered: number;
  /** Outbox rows the relay set aside because the broker refused them (never delivered). */
  quarantined: number;
  allArrived: boolean;
  missing: number;
  /** Second and later copies of an event id (delivery is at least once). */
  duplicates: number;
  /** Deliveries whose signature did not verify with the subscription's secret (answered 401). */
  refused: number;
}

interface PhaseEvidence {
  stages: Stages | null;
  cpu: CpuUse | null;
  relayErrors: RelayErrors;
}

export interface LatencyPhase extends Completeness, PhaseEvidence {
  targetRatePerSecond: number;
  durationS: number;
  writes: {
    sent: number;
    succeeded: number;
    failed: number;
    /** Requests sent ÷ the time between the first and the last one leaving. */
    offeredRatePerSecond: number;
    /** How late the latest request left against its schedule. */
    maxScheduleSlipMs: number;
    responseMs: Distribution;
  };
  /** Receipt − occurredAt over delivered events. */
  latency: Distribution;
  /** Delivered ÷ (last delivery − first write). */
  deliveredPerSecond: number;
  /** How long deliveries went on after the last write answered. */
  drainAfterLastWriteS: number;
}

export interface ThroughputPhase extends Completeness, PhaseEvidence {
  backlog: number;
  concurrency: number;
  writes: { succeeded: number; failed: number; seconds: number; perSecond: number };
  /** Events delivered ÷ (last delivery − first write). */
  eventsPerSecond: number;
  firstWriteToLastDeliveryS: number;
  /** Delivered ÷ (last delivery − first delivery). */
  deliveryRatePerSecond: number;
  /** How long deliveries went on after the last write answered. */
  drainAfterLastWriteS: number;
  latency: Distribution;
}

export interface WorkloadReport {
  event: EventType;
  write: string;
  latency?: LatencyPhase;
  throughput?: ThroughputPhase;
  /** Why the throughput phase did not run. */
  throughputSkipped?: string;
}

export interface TransportReport {
  transport: Transport;
  broker: string;
  workloads: WorkloadReport[];
  /** Set when this transport's part could not run to the end. */
  error?: string;
}

export interface EventsReport {
  date: string;
  machine: { cpus: number; deno: string; os: string; loadAverageAtStart: number[]; note: string };
  notes: string[];
  goals: { embeddedQuoteCreatedP99MsAtMost: number; atEventsPerSecond: number };
  transports: TransportReport[];
}

export interface EventsBenchOptions {
  /** A PostgreSQL maintenance URL; each transport gets a fresh database on that server. */
  postgresUrl: string;
}

const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const distribution = latencyFigures;

// ---------------------------------------------------------------------------------------------
// The receiver: one listener, one path per subscription, first arrival per event id. Also used
// by scripts/bench_ratios.ts (events under the write load).

export interface Arrival {
  receivedAt: number;
  occurredAt: number;
  /** The payload's `data.id`: the row the event is about (a created quote's id). */
  dataId: string | null;
}

export interface Receiver {
  url: string;
  arrivals(path: string): Map<string, Arrival>;
  duplicates(path: string): number;
  /**
   * From now on, a delivery to `path` must carry a Standard Webhooks signature by `secret` (the
   * `whsec_…` its subscription answered), verified as a customer's endpoint would; one that does
   * not is answered 401 and counted in `refused`, not in `arrivals`.
   */
  verifyWith(path: string, secret: string): void;
  /** Deliveries to `path` whose signature did not verify. */
  refused(path: string): number;
  /** Every path that received a delivery, with how many distinct event ids. */
  paths(): Map<string, number>;
  stop(): Promise<void>;
}

export function startReceiver(): Receiver {
  const byPath = new Map<string, Map<string, Arrival>>();
  const dupes = new Map<string, number>();
  const refusals = new Map<string, number>();
  const verifiers = new Map<string, Webhook>();
  const arrivals = (path: string): Map<string, Arrival> => {
    let map = byPath.get(path);
    if (!map) byPath.set(path, map = new Map());
    return map;
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const receivedAt = Date.now();
    const id = req.headers.get("webhook-id");
    const path = new URL(req.url).pathname;
    try {
      const text = await req.text();
      const verifier = verifiers.get(path);
      if (verifier) {
        try {
          verifier.verify(text, Object.fromEntries(req.headers));
        } catch {
          refusals.set(path, (refusals.get(path) ?? 0) + 1);
          return new Response(null, { status: 401 });
        }
      }
      const body = JSON.parse(text) as { timestamp?: string; data?: { id?: unknown } };
      const occurredAt = Date.parse(body.timestamp ?? "");
      if (id === null || Number.isNaN(occurredAt)) return new Response(null, { status: 400 });
      const seen = arrivals(path);
      if (seen.has(id)) dupes.set(path, (dupes.get(path) ?? 0) + 1);
      else {
        const dataId = typeof body.data?.id === "string" ? body.data.id : null;
        seen.set(id, { receivedAt, occurredAt, dataId });
      }
      return new Response(null, { status: 204 });
    } catch {
      return new Response(null, { status: 400 });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    arrivals,
    duplicates: (path) => dupes.get(path) ?? 0,
    verifyWith: (path, secret) => void verifiers.set(path, new Webhook(secret)),
    refused: (path) => refusals.get(path) ?? 0,
    paths: () => new Map([...byPath].map(([path, seen]) => [path, seen.size])),
    stop: () => server.shutdown(),
  };
}

// ---------------------------------------------------------------------------------------------
// Evidence: CPU per process from /proc, and the relay's errors from the quotes log.

interface CpuSample {
  at: number;
  /** Busy ticks of the whole machine. */
  busy: number;
  /** Ticks per process of this bench's tree (itself and its descendants), with its group. */
  procs: Map<number, { group: string; ticks: number }>;
}

interface ProcStat {
  comm: string;
  ppid: number;
  /** utime + stime. */
  own: number;
  /** cutime + cstime: its children that exited and were reaped. */
  reaped: number;
}

const OUTSIDE_KERNEL = "kernel threads";
const OUTSIDE_OTHER = "other processes";

async function procStat(pid: string): Promise<ProcStat | null> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const close = stat.lastIndexOf(")");
    // After the command name (which may hold spaces): field 3 is the state, 4 the parent,
    // 14–17 utime, stime, cutime, cstime.
    const fields = stat.slice(close + 2).split(" ");
    return {
      comm: stat.slice(stat.indexOf("(") + 1, close),
      ppid: Number(fields[1]),
      own: Number(fields[11]) + Number(fields[12]),
      reaped: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return null; // exited meanwhile
  }
}

/**
 * Machine-wide busy time and the CPU of every process: those this bench started, directly or
 * not (the stack's processes by name, PostgreSQL with its backends, Mokapi, itself), kernel
 * threads, and other processes.
 */
async function cpuSample(names: Map<number, string>): Promise<CpuSample | null> {
  try {
    const cpu = (await Deno.readTextFile("/proc/stat")).split("\n")[0]!.trim().split(/\s+/)
      .slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
    const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
    const stats = new Map<number, ProcStat>();
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const stat = await procStat(entry.name);
      if (stat) stats.set(Number(entry.name), stat);
    }
    const procs = new Map<number, { group: string; ticks: number }>();
    const groupOf = (pid: number, stat: ProcStat): string =>
      pid === Deno.pid
        ? "bench (load + receiver)"
        : names.get(pid) ?? (stat.comm.startsWith("postgres")
          ? "postgres"
          : stat.comm.includes("mokapi")
          ? "mokapi"
          : `other child (${stat.comm})`);
    const visit = (pid: number, group?: string): void => {
      const stat = stats.get(pid);
      if (!stat) return;
      // A process's descendants count with it (PostgreSQL's backends, a wrapper's child).
      const own = group ?? groupOf(pid, stat);
      // Reaped children count for the bench's processes (PostgreSQL's ended backends).
      procs.set(pid, { group: own, ticks: stat.own + stat.reaped });
      for (const [child, childStat] of stats) {
        if (childStat.ppid === pid) visit(child, pid === Deno.pid ? undefined : own);
      }
    };
    visit(Deno.pid);
    for (const [pid, stat] of stats) {
      if (procs.has(pid)) continue;
      const kernel = pid === 2 || stat.ppid === 2;
      procs.set(pid, {
        group: kernel ? OUTSIDE_KERNEL : OUTSIDE_OTHER,
        ticks: stat.own,
      });
    }
    return { at: performance.now(), busy, procs };
  } catch {
    return null; // no /proc
  }
}

function cpuUse(from: CpuSample | null, to: CpuSample | null): CpuUse | null {
  if (from === null || to === null) return null;
  const seconds = (to.at - from.at) / 1000;
  const cores = (ticks: number): number => ticks / CLOCK_TICKS_PER_S / seconds;
  const byProcess: Record<string, number> = {};
  for (const [pid, { group, ticks }] of to.procs) {
    // A process that started during the phase counts from zero.
    const used = cores(Math.max(0, ticks - (from.procs.get(pid)?.ticks ?? 0)));
    byProcess[group] = (byProcess[group] ?? 0) + used;
  }
  const machineCores = cores(to.busy - from.busy);
  const outside = {
    kernelThreads: byProcess[OUTSIDE_KERNEL] ?? 0,
    otherProcesses: byProcess[OUTSIDE_OTHER] ?? 0,
  };
  delete byProcess[OUTSIDE_KERNEL];
  delete byProcess[OUTSIDE_OTHER];
  const accounted = Object.values(byProcess).reduce((a, b) => a + b, 0) +
    outside.kernelThreads + outside.otherProcesses;
  return {
    seconds,
    machineCores,
    byProcess,
    outside: { ...outside, unattributed: Math.max(0, machineCores - accounted) },
  };
}

// ---------------------------------------------------------------------------------------------
// One transport: a stack, its organisations and subscriptions, the phases.

interface Run {
  transport: Transport;
  stack: RunningStack;
  adminToken: string;
  receiver: Receiver;
  sql: Sql;
  logDir: string;
  /** The stack's processes by pid, for the CPU figures. */
  names: Map<number, string>;
  signal: AbortSignal;
  /** Throws if a process of the stack died or the run was interrupted. */
  check(): void;
}

interface Shop {
  organizationId: string;
  apiKey: string;
  event: EventType;
  /** The receiver path its subscription points at. */
  path: string;
  /** Quotes to delete, for the quote.deleted workload. */
  quoteIds: string[];
}

async function json<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** An organisation with an all-scopes key, no practical rate limit, and one subscription. */
async function shop(run: Run, name: string, event: EventType, path: string): Promise<Shop> {
  const admin = (method: string, route: string, body: unknown) =>
    fetch(`${run.stack.adminUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${run.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const org = (await json<{ data: { id: string } }>(
    await admin("POST", "/admin/organizations", { name }),
    "creating an organisation",
  )).data;
  const key = (await json<{ data: { apiKey: string } }>(
    await admin("POST", `/admin/organizations/${org.id}/api-keys`, { scopes: ALL_SCOPES }),
    "creating a key",
  )).data;
  await json(
    await admin("PUT", `/admin/organizations/${org.id}/limits`, { requestsPerMinute: 1_000_000 }),
    "raising the rate limit",
  );
  const subscription = (await json<{ data: { secret: string } }>(
    await fetch(`${run.stack.gatewayUrl}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": key.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ url: `${run.receiver.url}${path}`, event }),
    }),
    "subscribing",
  )).data;
  run.receiver.verifyWith(path, subscription.secret);
  return { organizationId: org.id, apiKey: key.apiKey, event, path, quoteIds: [] };
}

/** Empty draft quotes straight into the quotes schema: no outbox rows, so no events. */
async function seedQuotes(run: Run, s: Shop, count: number): Promise<void> {
  const rows = await run.sql<{ id: string }[]>`
    INSERT INTO quotes.quotes (id, organization_id, quote_number, quote_ref, reference)
    SELECT gen_random_uuid(), ${s.organizationId}, n, 'Q-' || lpad(n::text, 5, '0'),
      'Events bench (seeded)'
    FROM generate_series(1, ${count}::int) AS n
    RETURNING id`;
  await run.sql`
    INSERT INTO quotes.quote_ref_counters (organization_id, last_number)
    VALUES (${s.organizationId}, ${count})`;
  s.quoteIds = rows.map((r) => r.id);
}

interface Write {
  ok: boolean;
  responseMs: number;
}

/** The i-th change of the shop's workload, through the gateway. */
async function change(run: Run, s: Shop, i: number): Promise<Write> {
  const started = performance.now();
  const headers = { "x-api-key": s.apiKey, "content-type": "application/json" };
  try {
    const res = s.event === "quote.created"
      ? await fetch(`${run.stack.gatewayUrl}/v1/quotes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ reference: `Events bench ${i}` }),
        signal: run.signal,
      })
      : await fetch(`${run.stack.gatewayUrl}/v1/quotes/${s.quoteIds[i]}`, {
        method: "DELETE",
        headers,
        signal: run.signal,
      });
    await res.arrayBuffer();
    return { ok: res.ok, responseMs: performance.now() - started };
  } catch {
    // Never rejects: an interrupted run stops at its next check, and a rejection nobody awaits
    // yet (the open loop's requests in flight) would end the process before the teardown.
    return { ok: false, responseMs: performance.now() - started };
  }
}

/**
 * Waits until every event of the shop's type in the quotes outbox has arrived, or none has for
 * `stallMs` (or `capMs` passed); returns how complete the phase is, and the expected ids.
 */
async function awaitDeliveries(
  run: Run,
  s: Shop,
  options: { capMs: number; stallMs?: number },
): Promise<Completeness & { ids: string[] }> {
  // Read through to_jsonb so the query works with or without the quarantine column.
  const rows = await run.sql<{ id: string; quarantined: boolean }[]>`
    SELECT o.id, (to_jsonb(o) ->> 'quarantined_at') IS NOT NULL AS quarantined
    FROM quotes.outbox o WHERE o.organization_id = ${s.organizationId} AND o.type = ${s.event}`;
  const ids = rows.map((r) => r.id);
  const arrived = run.receiver.arrivals(s.path);
  const deadline = Date.now() + options.capMs;
  const stallMs = options.stallMs ?? STALL_MS;
  let seen = -1;
  let progressAt = Date.now();
  const missing = (): number => ids.filter((id) => !arrived.has(id)).length;
  while (missing() > 0 && Date.now() < deadline && Date.now() - progressAt < stallMs) {
    run.check();
    if (arrived.size !== seen) {
      seen = arrived.size;
      progressAt = Date.now();
    }
    await sleep(20);
  }
  const left = missing();
  return {
    ids,
    expected: ids.length,
    delivered: ids.length - left,
    quarantined: rows.filter((r) => r.quarantined).length,
    allArrived: left === 0 && ids.length > 0,
    missing: left,
    duplicates: run.receiver.duplicates(s.path),
    refused: run.receiver.refused(s.path),
  };
}

/**
 * Five quotes one at a time, each waited for (the Kafka consumer group joins meanwhile, and even
 * Mokapi sees single-event batches), then WARMUP_BURST deletions at the steady rate, so the
 * measured phases find every process's hot paths compiled.
 */
async function warmUp(run: Run): Promise<void> {
  const s = await shop(run, "Events Bench Warm-up", "quote.created", "/warmup");
  for (let i = 0; i < WARMUP_EVENTS; i++) {
    if (!(await change(run, s, i)).ok) throw new Error("a warm-up quote was refused");
    const done = await awaitDeliveries(run, s, {
      capMs: FIRST_DELIVERY_TIMEOUT_MS,
      stallMs: FIRST_DELIVERY_TIMEOUT_MS,
    });
    if (!done.allArrived) {
      throw new Error(
        `warm-up: ${done.delivered} of ${done.expected} events delivered within ` +
          `${FIRST_DELIVERY_TIMEOUT_MS / 1000} s`,
      );
    }
  }
  const burst = await shop(run, "Events Bench Warm-up burst", "quote.deleted", "/warmup/burst");
  await seedQuotes(run, burst, WARMUP_BURST);
  await drive(run, burst, WARMUP_BURST);
  const done = await awaitDeliveries(run, burst, { capMs: STEADY_DRAIN_CAP_MS });
  if (!done.allArrived) {
    throw new Error(`warm-up burst: ${done.delivered} of ${done.expected} events delivered`);
  }
}

/** Watches the quotes service's log from now on for the relay's publish errors. */
async function relayErrorWatch(run: Run): Promise<() => Promise<RelayErrors>> {
  const path = `${run.logDir}/quotes.log`;
  const offset = (await Deno.stat(path).catch(() => ({ size: 0 }))).size;
  return async () => {
    const text = await Deno.readFile(path).then(
      (bytes) => new TextDecoder().decode(bytes.subarray(offset)),
      () => "",
    );
    const byError: Record<string, number> = {};
    let count = 0;
    for (const line of text.split("\n")) {
      let entry: { level?: string; msg?: string; error?: unknown };
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.level !== "error" && entry.msg !== "outbox relay cannot publish") continue;
      const kind = typeof entry.error === "string" ? entry.error : entry.msg ?? "?";
      byError[kind] = (byError[kind] ?? 0) + 1;
      count++;
    }
    return { count, byError };
  };
}

async function evidence(
  run: Run,
  s: Shop,
  ids: string[],
  cpuFrom: CpuSample | null,
  relayErrors: () => Promise<RelayErrors>,
): Promise<PhaseEvidence> {
  const cpu = cpuUse(cpuFrom, await cpuSample(run.names));
  return { cpu, relayErrors: await relayErrors(), stages: await stageBreakdown(run, s, ids) };
}

/**
 * `total` calls of `send` at `ratePerS`, open loop: each leaves on schedule, whatever the earlier
 * ones are doing, unless `maxInFlight` are unanswered (then it waits for one, and leaves late:
 * `maxScheduleSlipMs` shows it). `check` runs every 100 calls (it may throw to stop the loop).
 * Also used by scripts/bench_ratios.ts.
 */
export async function openLoop<T>(
  total: number,
  ratePerS: number,
  send: (i: number) => Promise<T>,
  options: { check?: () => void; maxInFlight?: number } = {},
): Promise<{ results: T[]; offeredRatePerSecond: number; maxScheduleSlipMs: number }> {
  const intervalMs = 1000 / ratePerS;
  const maxInFlight = options.maxInFlight ?? Infinity;
  const results: Promise<T>[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let maxSlip = 0;
  const start = performance.now() + 20;
  let firstSent = 0;
  let lastSent = 0;
  for (let i = 0; i < total; i++) {
    if (i % 100 === 0) options.check?.();
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const now = performance.now();
    maxSlip = Math.max(maxSlip, now - due);
    if (i === 0) firstSent = now;
    lastSent = now;
    const result = send(i);
    const settled = result.then(() => {}, () => {}).finally(() => inFlight.delete(settled));
    inFlight.add(settled);
    results.push(result);
  }
  return {
    results: await Promise.all(results),
    offeredRatePerSecond: total > 1 ? (total - 1) / ((lastSent - firstSent) / 1000) : NaN,
    maxScheduleSlipMs: maxSlip,
  };
}

interface Driven {
  writes: Write[];
  /** Requests sent ÷ the time between the first and the last one leaving. */
  offeredRatePerSecond: number;
  maxScheduleSlipMs: number;
}

/** `total` changes at RATE_PER_S, open loop: each leaves on schedule, answered or not. */
async function drive(run: Run, s: Shop, total: number): Promise<Driven> {
  const driven = await openLoop(total, RATE_PER_S, (i) => change(run, s, i), {
    check: run.check,
  });
  return {
    writes: driven.results,
    offeredRatePerSecond: driven.offeredRatePerSecond,
    maxScheduleSlipMs: driven.maxScheduleSlipMs,
  };
}

async function latencyPhase(run: Run, event: EventType): Promise<LatencyPhase> {
  const s = await shop(run, `Events Bench Latency ${event}`, event, `/latency/${event}`);
  const total = Math.max(1, Math.round(RATE_PER_S * LATENCY_S));
  if (event === "quote.deleted") await seedQuotes(run, s, total);
  const relayErrors = await relayErrorWatch(run);
  const cpuFrom = await cpuSample(run.names);
  const firstWriteAt = Date.now();
  const driven = await drive(run, s, total);
  const lastWriteAt = Date.now();
  const done = driven.writes;
  const { ids, ...completeness } = await awaitDeliveries(run, s, {
    capMs: STEADY_DRAIN_CAP_MS,
  });
  const arrived = run.receiver.arrivals(s.path);
  const arrivals = ids.flatMap((id) => arrived.get(id) ?? []);
  const latencies = arrivals.map((a) => a.receivedAt - a.occurredAt);
  const lastDelivery = arrivals.length > 0 ? Math.max(...arrivals.map((a) => a.receivedAt)) : NaN;
  return {
    targetRatePerSecond: RATE_PER_S,
    durationS: LATENCY_S,
    writes: {
      sent: total,
      succeeded: done.filter((w) => w.ok).length,
      failed: done.filter((w) => !w.ok).length,
      offeredRatePerSecond: driven.offeredRatePerSecond,
      maxScheduleSlipMs: driven.maxScheduleSlipMs,
      responseMs: distribution(done.map((w) => w.responseMs)),
    },
    ...completeness,
    latency: distribution(latencies),
    deliveredPerSecond: arrivals.length / ((lastDelivery - firstWriteAt) / 1000),
    drainAfterLastWriteS: (lastDelivery - lastWriteAt) / 1000,
    ...await evidence(run, s, ids, cpuFrom, relayErrors),
  };
}

async function throughputPhase(run: Run, event: EventType): Promise<ThroughputPhase> {
  const s = await shop(run, `Events Bench Throughput ${event}`, event, `/throughput/${event}`);
  if (event === "quote.deleted") await seedQuotes(run, s, BACKLOG);
  const relayErrors = await relayErrorWatch(run);
  const cpuFrom = await cpuSample(run.names);
  let next = 0;
  const results: Write[] = [];
  const firstWriteAt = Date.now();
  await Promise.all(Array.from({ length: BACKLOG_CONCURRENCY }, async () => {
    while (next < BACKLOG) {
      const i = next++;
      if (i % 200 === 0) run.check();
      results.push(await change(run, s, i));
    }
  }));
  const lastWriteAt = Date.now();
  const { ids, ...completeness } = await awaitDeliveries(run, s, {
    capMs: BACKLOG_DRAIN_CAP_MS,
  });
  const arrived = run.receiver.arrivals(s.path);
  const arrivals = ids.flatMap((id) => arrived.get(id) ?? []);
  const received = arrivals.map((a) => a.receivedAt);
  const firstDelivery = received.length > 0 ? Math.min(...received) : NaN;
  const lastDelivery = received.length > 0 ? Math.max(...received) : NaN;
  const writeSeconds = (lastWriteAt - firstWriteAt) / 1000;
  const succeeded = results.filter((w) => w.ok).length;
  return {
    backlog: BACKLOG,
    concurrency: BACKLOG_CONCURRENCY,
    writes: {
      succeeded,
      failed: results.length - succeeded,
      seconds: writeSeconds,
      perSecond: succeeded / writeSeconds,
    },
    ...completeness,
    eventsPerSecond: arrivals.length / ((lastDelivery - firstWriteAt) / 1000),
    firstWriteToLastDeliveryS: (lastDelivery - firstWriteAt) / 1000,
    deliveryRatePerSecond: arrivals.length > 1
      ? (arrivals.length - 1) / ((lastDelivery - firstDelivery) / 1000)
      : NaN,
    drainAfterLastWriteS: (lastDelivery - lastWriteAt) / 1000,
    latency: distribution(arrivals.map((a) => a.receivedAt - a.occurredAt)),
    ...await evidence(run, s, ids, cpuFrom, relayErrors),
  };
}

interface StageRow {
  id: string;
  occurred: number;
  relayed: number | null;
  on_bus: number | null;
  recorded: number | null;
  queued: number | null;
  attempted: number | null;
}
type Stamp = (row: StageRow) => number | null;

/**
 * Per event, the database's own timestamps of each stage. `published_at`, `recorded_at` and the
 * bus row's `published_at` are now(), the start of the transaction that wrote them, so each
 * boundary is when that step began; `started_at` is taken just before the request is sent.
 */
async function stageBreakdown(run: Run, s: Shop, ids: string[]): Promise<Stages | null> {
  if (ids.length === 0) return null;
  const embedded = run.transport === "embedded";
  const ms = (column: string) => run.sql.unsafe(`extract(epoch FROM ${column}) * 1000`);
  const rows = await run.sql<StageRow[]>`
    SELECT o.id, ${ms("o.created_at")}::float8 AS occurred,
      ${ms("o.published_at")}::float8 AS relayed,
      ${embedded ? run.sql`${ms("m.published_at")}::float8` : run.sql`NULL::float8`} AS on_bus,
      ${ms("e.recorded_at")}::float8 AS recorded, ${ms("d.created_at")}::float8 AS queued,
      ${ms("a.started_at")}::float8 AS attempted
    FROM quotes.outbox o
    ${
    embedded
      ? run.sql`LEFT JOIN eventbus.messages m ON m.topic = 'printshop.quotes' AND m.id = o.id`
      : run.sql``
  }
    LEFT JOIN webhooks.events e ON e.id = o.id
    LEFT JOIN webhooks.deliveries d ON d.event_id = o.id
    LEFT JOIN webhooks.delivery_attempts a ON a.delivery_id = d.id AND a.attempt = 1
    WHERE o.id = ANY(${ids}::uuid[])`;
  const arrived = run.receiver.arrivals(s.path);
  const span = (from: Stamp, to: Stamp): Distribution =>
    distribution(rows.flatMap((r) => {
      const a = from(r);
      const b = to(r);
      return a === null || b === null ? [] : [b - a];
    }));
  const received: Stamp = (r) => arrived.get(r.id)?.receivedAt ?? null;
  return {
    outboxToRelay: span((r) => r.occurred, (r) => r.relayed),
    ...(embedded
      ? {
        relayToBus: span((r) => r.relayed, (r) => r.on_bus),
        busToConsumer: span((r) => r.on_bus, (r) => r.recorded),
      }
      : {}),
    relayToConsumer: span((r) => r.relayed, (r) => r.recorded),
    queuedToAttempt: span((r) => r.queued, (r) => r.attempted),
    attemptToReceipt: span((r) => r.attempted, received),
  };
}

// ---------------------------------------------------------------------------------------------
// Setting up and tearing down one transport.

async function runTransport(
  transport: Transport,
  postgresUrl: string,
  signal: AbortSignal,
): Promise<TransportReport> {
  const report: TransportReport = {
    transport,
    broker: transport === "embedded"
      ? "PostgreSQL (eventbus schema of the same database)"
      : "Mokapi 0.52 (Kafka wire protocol, in memory; a test broker, not Kafka)",
    workloads: [],
  };
  const database = `bench_events_${transport}_${randomHex(4)}`;
  const maintenance = connect(postgresUrl, { schema: "public", max: 1 });
  const dbUrl = new URL(postgresUrl);
  dbUrl.pathname = `/${database}`;
  const logDir = await Deno.makeTempDir({ prefix: `printshop-bench-events-${transport}-` });
  let mokapi: Mokapi | undefined;
  let stack: RunningStack | undefined;
  let receiver: Receiver | undefined;
  let sql: Sql | undefined;
  let died: string | undefined;
  try {
    await maintenance.unsafe(`CREATE DATABASE ${database}`);
    const env: Record<string, string> = {
      LOG_LEVEL: "warn",
      // The receiver listens on loopback, which production refuses as a webhook target.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    };
    if (transport === "kafka") {
      mokapi = await startMokapi();
      env.KAFKA_BROKERS = mokapi.brokers.join(",");
    }
    console.error(`[bench] events over ${transport}: starting a stack on a fresh database…`);
    const adminToken = randomHex(32);
    stack = await launchStack({
      databaseUrl: dbUrl.toString(),
      internalSecret: randomHex(32),
      webhookSecretsKey: randomHex(32),
      adminToken,
      logDir,
      env,
      onUnexpectedExit: (name, code) => {
        died ??= `${name} exited with code ${code} during the run`;
      },
    });
    receiver = startReceiver();
    sql = connect(dbUrl.toString(), { schema: "public", max: 2, applicationName: "bench-events" });
    const names = new Map(stack.processes.map((p) => [p.child.pid, p.name]));
    const run: Run = {
      transport,
      stack,
      adminToken,
      receiver,
      sql,
      logDir,
      names,
      signal,
      check() {
        signal.throwIfAborted();
        if (died) throw new Error(died);
      },
    };
    await warmUp(run);
    for (const event of WORKLOADS) {
      const workload: WorkloadReport = { event, write: WRITE_OF[event] };
      report.workloads.push(workload);
      console.error(
        `[bench] events over ${transport}, ${event}: ${RATE_PER_S}/s for ${LATENCY_S} s…`,
      );
      const steady = workload.latency = await latencyPhase(run, event);
      if (!steady.allArrived || steady.drainAfterLastWriteS > KEPT_UP_DRAIN_S) {
        workload.throughputSkipped = `the steady phase fell behind: ${steady.delivered} of ` +
          `${steady.expected} events delivered at ${steady.deliveredPerSecond.toFixed(1)}/s` +
          (steady.allArrived ? "" : ` within ${STEADY_DRAIN_CAP_MS / 1000} s of the last write`);
        console.error(`[bench] events over ${transport}, ${event}: ${workload.throughputSkipped}`);
        continue;
      }
      console.error(
        `[bench] events over ${transport}, ${event}: a backlog of ${BACKLOG}, ` +
          `${BACKLOG_CONCURRENCY} in flight…`,
      );
      workload.throughput = await throughputPhase(run, event);
    }
  } catch (error) {
    if (signal.aborted) throw error;
    report.error = error instanceof Error ? error.message : String(error);
    console.error(`[bench] events over ${transport} failed: ${report.error}`);
    for (const name of ["webhooks", "quotes", "gateway"]) {
      const log = await Deno.readTextFile(`${logDir}/${name}.log`).catch(() => "");
      if (log.trim() !== "") {
        const tail = log.trim().split("\n").slice(-10).join("\n");
        console.error(`--- last lines of ${name}.log ---\n${tail}`);
      }
    }
  } finally {
    await sql?.end({ timeout: 5 }).catch(() => {});
    await receiver?.stop().catch(() => {});
    await stack?.stop().catch(() => {});
    await mokapi?.stop().catch(() => {});
    await maintenance.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await maintenance.end({ timeout: 5 }).catch(() => {});
    await Deno.remove(logDir, { recursive: true }).catch(() => {});
  }
  return report;
}

/**
 * Runs both transports one after the other and returns their figures. Ctrl-C (SIGINT) or
 * SIGTERM stops the part and tears everything down before the error propagates; a second one
 * exits at once.
 */
export async function runEventsBench(options: EventsBenchOptions): Promise<EventsReport> {
  const abort = new AbortController();
  let signals = 0;
  const onSignal = (): void => {
    if (++signals > 1) Deno.exit(130);
    console.error("[bench] interrupted; tearing down…");
    abort.abort(new Error("interrupted"));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    const loadAverageAtStart = Deno.loadavg();
    const transports: TransportReport[] = [];
    for (const transport of ["embedded", "kafka"] as const) {
      transports.push(await runTransport(transport, options.postgresUrl, abort.signal));
    }
    const cpus = navigator.hardwareConcurrency;
    return {
      date: new Date().toISOString(),
      machine: {
        cpus,
        deno: Deno.version.deno,
        os: `${Deno.build.os} ${Deno.osRelease()}`,
        loadAverageAtStart,
        note: `${cpus} CPUs shared by everything: the gateway, five services, PostgreSQL ` +
          `(throwaway cluster, fsync and synchronous_commit off), Mokapi, the load driver and ` +
          `the receiver`,
      },
      notes: [
        "latency = the receiver's receipt time − the event's occurredAt (the outbox row's " +
        "clock_timestamp()), both from this machine's clock",
        "Kafka figures are against Mokapi 0.52, a Kafka-wire-protocol test broker kept in " +
        "memory: they say nothing about the throughput or latency of a real Kafka cluster",
        "Mokapi 0.52 refuses a produce request holding two or more records over ~510 bytes " +
        "(its log: invalid json format: unexpected end of JSON input; kafkajs: This record has " +
        "failed the validation on broker), so on Kafka the quote.created workload stalls once " +
        "the relay publishes a batch of two; quote.deleted events (< 300 bytes) pass",
        "quote.deleted changes delete empty draft quotes seeded by SQL, which made no events",
        "stage timestamps come from the database (now() = start of the transaction that wrote " +
        "them) and the receiver; each is when that step began",
        "cpu: cores used over the phase (CPU-seconds per second) from /proc, per process this " +
        "bench started (PostgreSQL with its backends), and outside it: kernel threads, other " +
        "processes still running at the end, and the rest of the machine's busy time (processes " +
        "that ended within the phase, interrupts); work outside the bench competes for the " +
        "same cores, so phases where it is high are noisier",
      ],
      goals: {
        embeddedQuoteCreatedP99MsAtMost: LATENCY_GOAL_P99_MS,
        atEventsPerSecond: RATE_PER_S,
      },
      transports,
    };
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }
}

// ---------------------------------------------------------------------------------------------
// The table.

/** The events table of `deno task bench`. */
export function formatEventsReport(report: EventsReport, writtenTo: string): string {
  const n = (value: number | undefined, digits = 0, width = 9): string =>
    (value === undefined || Number.isNaN(value) ? "–" : value.toFixed(digits)).padStart(width);
  const yes = (ok: boolean): string => ok ? "yes" : "NO";
  const label = (t: TransportReport, w: WorkloadReport): string =>
    `${t.transport} ${w.event}`.padEnd(24);
  const rows = report.transports.flatMap((t) => t.workloads.map((w) => ({ t, w })));
  const lines: string[] = [
    "",
    "Events → webhook deliveries (one subscription per workload; loopback receiver verifying " +
    "signatures, answering 204)",
    "",
    `${`steady ${RATE_PER_S}/s, open loop`.padEnd(24)}${"offered/s".padStart(10)}${
      "deliv/s".padStart(9)
    }${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"max ms".padStart(9)}${
      "delivered".padStart(11)
    }  all ids  goal`,
  ];
  for (const { t, w } of rows) {
    const l = w.latency;
    if (!l) continue;
    const goal = t.transport === "embedded" && w.event === "quote.created"
      ? `  p99 ≤ ${LATENCY_GOAL_P99_MS} ms: ${
        l.latency.p99Ms <= LATENCY_GOAL_P99_MS && l.allArrived ? "met" : "NOT met"
      }`
      : "";
    lines.push(
      `${label(t, w)}${n(l.writes.offeredRatePerSecond, 1, 10)}${n(l.deliveredPerSecond, 1)}${
        n(l.latency.p50Ms)
      }${n(l.latency.p99Ms)}${n(l.latency.maxMs)}${`${l.delivered}/${l.expected}`.padStart(11)}  ${
        yes(l.allArrived).padEnd(7)
      }${goal}`,
    );
  }
  lines.push(
    "",
    `${`backlog ${BACKLOG}, ${BACKLOG_CONCURRENCY} in flight`.padEnd(24)}${
      "writes/s".padStart(10)
    }${"events/s".padStart(9)}${"drain s".padStart(9)}${"p50 ms".padStart(9)}${
      "p99 ms".padStart(9)
    }${"delivered".padStart(11)}  all ids`,
  );
  for (const { t, w } of rows) {
    const p = w.throughput;
    lines.push(
      p
        ? `${label(t, w)}${n(p.writes.perSecond, 1, 10)}${n(p.eventsPerSecond, 1)}${
          n(p.drainAfterLastWriteS, 1)
        }${n(p.latency.p50Ms)}${n(p.latency.p99Ms)}${
          `${p.delivered}/${p.expected}`.padStart(11)
        }  ${yes(p.allArrived)}`
        : `${label(t, w)}  not run: ${w.throughputSkipped ?? "?"}`,
    );
  }
  const pair = (d: Distribution | undefined): string =>
    d === undefined || d.samples === 0
      ? "–".padStart(15)
      : `${d.p50Ms.toFixed(0)} / ${d.p99Ms.toFixed(0)}`.padStart(15);
  lines.push(
    "",
    `${"where the time goes".padEnd(32)}${"outbox→relay".padStart(15)}${
      "relay→consumer".padStart(15)
    }${"queued→attempt".padStart(15)}${"attempt→receipt".padStart(16)}   (p50 / p99 ms)`,
  );
  const phases = rows.flatMap(({ t, w }) =>
    [["steady", w.latency], ["backlog", w.throughput]].flatMap(([phase, figures]) =>
      figures && typeof figures !== "string"
        ? [{ name: `${t.transport} ${w.event}, ${phase}`, figures }]
        : []
    )
  );
  for (const { name, figures } of phases) {
    const s = figures.stages;
    if (!s) continue;
    lines.push(
      `${name.padEnd(32)}${pair(s.outboxToRelay)}${pair(s.relayToConsumer)}${
        pair(s.queuedToAttempt)
      }${pair(s.attemptToReceipt).padStart(16)}`,
    );
  }
  lines.push("", "CPU cores used (of " + report.machine.cpus + "), per phase:");
  for (const { name, figures } of phases) {
    const cpu = figures.cpu;
    if (!cpu) continue;
    const parts = Object.entries(cpu.byProcess).filter(([, cores]) => cores >= 0.05)
      .sort((a, b) => b[1] - a[1]).map(([proc, cores]) => `${proc} ${cores.toFixed(2)}`);
    lines.push(
      `  ${name.padEnd(33)}machine ${cpu.machineCores.toFixed(2)}: ${parts.join(", ")}, ` +
        `outside the bench: kernel threads ${cpu.outside.kernelThreads.toFixed(2)}, other ` +
        `processes ${cpu.outside.otherProcesses.toFixed(2)}, ended or interrupts ` +
        `${cpu.outside.unattributed.toFixed(2)}`,
    );
  }
  const refused = phases.filter(({ figures }) =>
    figures.relayErrors.count > 0 || figures.quarantined > 0
  );
  if (refused.length > 0) {
    lines.push("", "Relay publish errors in the quotes service's log, and events it quarantined:");
    for (const { name, figures } of refused) {
      const kinds = Object.entries(figures.relayErrors.byError).sort((a, b) => b[1] - a[1])
        .map(([error, count]) => `${count}× ${error}`);
      const quarantined = figures.quarantined > 0 ? `${figures.quarantined} quarantined; ` : "";
      lines.push(`  ${name}: ${quarantined}${kinds.join("; ")}`);
    }
  }
  const unsigned = phases.filter(({ figures }) => figures.refused > 0);
  if (unsigned.length > 0) {
    lines.push("", "Deliveries whose signature did not verify (answered 401):");
    for (const { name, figures } of unsigned) lines.push(`  ${name}: ${figures.refused}`);
  }
  lines.push(
    "",
    "offered/s: requests sent ÷ the time over which they left (one every 10 ms through the " +
      "gateway); latency: the receiver's",
    "receipt − the event's occurredAt, one machine clock; all ids: every event id in the quotes " +
      "outbox arrived; events/s:",
    "deliveries ÷ (last delivery − first write); drain: last delivery − last write answered. " +
      "quote.deleted deletes quotes seeded by SQL.",
    "Kafka is Mokapi 0.52, an in-memory test broker speaking the Kafka protocol: its figures " +
      "say nothing about real Kafka, and",
    "it refuses a produce request of two or more records over ~510 bytes, so quote.created " +
      "(a whole quote, > 1 kB) stalls on it.",
    `Machine: ${report.machine.note}; load average at start ${
      report.machine.loadAverageAtStart.map((l) => l.toFixed(2)).join(" ")
    }.`,
    `Figures written to ${writtenTo}`,
  );
  for (const t of report.transports) {
    if (t.error !== undefined) lines.push(`${t.transport}: FAILED: ${t.error}`);
  }
  return lines.join("\n");
}

/** Writes the figures to `path` and returns the table. */
export async function writeEventsReport(report: EventsReport, path: string): Promise<string> {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
  return formatEventsReport(report, path);
}

/** Fails the run when a transport could not be measured (call after writing the figures). */
export function assertEventsRan(report: EventsReport): void {
  const failed = report.transports.filter((t) => t.error !== undefined);
  if (failed.length > 0) {
    throw new Error(`events bench: ${failed.map((t) => `${t.transport}: ${t.error}`).join("; ")}`);
  }
}

if (import.meta.main) {
  const pg = await startThrowawayPostgres("printshop-bench-events-");
  let interrupted = false;
  try {
    const report = await runEventsBench({ postgresUrl: pg.url });
    console.log(await writeEventsReport(report, "bench-results/events.json"));
    assertEventsRan(report);
  } catch (error) {
    if (!(error instanceof Error && error.message === "interrupted")) throw error;
    interrupted = true;
  } finally {
    await pg.stop();
  }
  if (interrupted) Deno.exit(130);
}

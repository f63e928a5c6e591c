/**
 * The phases of the events part on one transport: the warm-up, then per workload the steady
 * phase (one change every 10 ms, open loop: latency) and the backlog (throughput); each with
 * where the time went (the database's timestamps of each stage), the CPU of every process, and
 * the relay's publish errors from the quotes service's log.
 */
import { type CpuSample, cpuSample, cpuUse } from "./events_cpu.ts";
import type {
  Distribution,
  EventType,
  LatencyPhase,
  PhaseEvidence,
  RelayErrors,
  Stages,
  ThroughputPhase,
} from "./events_report.ts";
import {
  BACKLOG,
  BACKLOG_CONCURRENCY,
  LATENCY_S,
  RATE_PER_S,
  STEADY_DRAIN_CAP_MS,
} from "./events_settings.ts";
import {
  awaitDeliveries,
  change,
  type Run,
  seedQuotes,
  type Shop,
  shop,
  type Write,
} from "./events_shops.ts";
import { openLoop } from "./load.ts";
import { fileSize, readFrom } from "./log_files.ts";
import { latencyFigures } from "./stats.ts";

const WARMUP_EVENTS = 5;
const WARMUP_BURST = 300;
const FIRST_DELIVERY_TIMEOUT_MS = 90_000;
/** Waiting for the backlog's deliveries gives up this long after its last write. */
const BACKLOG_DRAIN_CAP_MS = 180_000;

const distribution = latencyFigures;

/**
 * Five quotes one at a time, each waited for (the Kafka consumer group joins meanwhile, and even
 * Mokapi sees single-event batches), then WARMUP_BURST deletions at the steady rate, so the
 * measured phases find every process's hot paths compiled.
 */
export async function warmUp(run: Run): Promise<void> {
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
  const offset = await fileSize(path);
  return async () => {
    const text = await readFrom(path, offset);
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

export async function latencyPhase(run: Run, event: EventType): Promise<LatencyPhase> {
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

export async function throughputPhase(run: Run, event: EventType): Promise<ThroughputPhase> {
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

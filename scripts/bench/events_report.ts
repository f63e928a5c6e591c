/**
 * The events part's report: the shape of bench-results/events.json (per transport and workload,
 * the steady phase's latency and the backlog's throughput, with where the time went and the CPU
 * each process used) and its table.
 */
import type { CpuUse } from "./events_cpu.ts";
import {
  BACKLOG,
  BACKLOG_CONCURRENCY,
  LATENCY_GOAL_P99_MS,
  RATE_PER_S,
} from "./events_settings.ts";
import { writeResults } from "./results.ts";
import type { LatencyFigures } from "./stats.ts";

export type Transport = "embedded" | "kafka";
export type EventType = "quote.created" | "quote.deleted";

/** p50, p99 and max of a set of milliseconds (scripts/bench/stats.ts). */
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

export interface PhaseEvidence {
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
  await writeResults(path, report);
  return formatEventsReport(report, path);
}

/** Fails the run when a transport could not be measured (call after writing the figures). */
export function assertEventsRan(report: EventsReport): void {
  const failed = report.transports.filter((t) => t.error !== undefined);
  if (failed.length > 0) {
    throw new Error(`events bench: ${failed.map((t) => `${t.transport}: ${t.error}`).join("; ")}`);
  }
}

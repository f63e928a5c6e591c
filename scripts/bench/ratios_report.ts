/**
 * The ratios part's report: the shape of bench-results/ratios.json, the 200-quote list at scale
 * added from the quotes part, and the table printed at the end of `deno task bench`.
 */
import type { EventsUnderLoad } from "./events_under_load.ts";
import type { Footprint, IdleFigures } from "./footprint.ts";
import {
  absoluteGoal,
  formatGoal,
  formatGoalValue,
  type Goal,
  metText,
  type Ratio,
} from "./goals.ts";
import { CONNECTIONS, type LoadFigures } from "./load.ts";
import { VARIANTS_PER_LINE } from "./full_quotes.ts";
import type { QuotesReport } from "./quotes_report.ts";
import type { StatementsPerRequest, Waits } from "./ratios_diagnostics.ts";
import type { CpuFigures } from "./stack_cpu.ts";
import type { LatencyFigures } from "./stats.ts";

/** Where the ratios part writes its figures. */
export const RATIOS_RESULTS = "bench-results/ratios.json";
/** Goal of the 200-quote list over 10,000 quotes (the quotes issue's), p50 in ms. */
const LIST_AT_SCALE_GOAL_P50_MS = 50;

export interface Measured extends LoadFigures {
  request: string;
  /** CPU of every process during the measured phase (warm-up excluded). */
  cpu: CpuFigures;
  /** The same per request answered, in ms, by process; `postgres` sums the cluster. */
  cpuMsPerRequest: Record<string, number>;
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
    /**
     * The write and read floors again, alternating with the same loads, on tables as issue 15
     * first defined them: only the primary key and one (organization_id, created_at, id) index.
     */
    writeFirst: Measured;
    readFirst: Measured & { rows: number };
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
    statementsPerRequest: StatementsPerRequest;
    /** What the stack's backends wait on under each 16-writer load, sampled. */
    waitsUnderLoad: Record<"createQuote" | "createLine" | "patchVariant", Waits | null>;
  };
}

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
    ["floor: write tx, as first defined", f.writeFirst],
    ["floor: proxy → write tx", f.writeBesideLines],
    ["POST …/lines (1 turn: line, …)", p.createLine],
    [`  …its ${VARIANTS_PER_LINE} × POST …/variants`, p.createLine.variants],
    ["  …DELETE /v1/quote-lines/{id}", p.createLine.deletes],
    ["floor: proxy → write tx", f.writeBesidePatch],
    ["PATCH /v1/quote-variants/{id}", p.patchVariant],
    [`floor: proxy → 20 of ${f.read.rows} + count`, f.read],
    ["GET /v1/quotes?limit=20", p.listQuotes],
    ["floor: 20 + count, as first defined", f.readFirst],
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
  // Each write load's name, its request in the statement counts, and its load in the waits.
  const writeLoads = [
    ["createQuote", "POST /v1/quotes", "POST /v1/quotes"],
    ["createLine", "POST …/lines", "line turns (line, its variants, delete)"],
    ["patchVariant", "PATCH …/quote-variants/{id}", "PATCH …/quote-variants/{id}"],
  ] as const;
  for (const [name, label] of writeLoads) {
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
  for (const [name, , label] of writeLoads) {
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

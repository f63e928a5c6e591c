import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { eventsGoal, type EventsUnderLoad } from "./bench/events_under_load.ts";
import {
  absoluteGoal,
  formatGoal,
  formatGoalValue,
  goal,
  goalValue,
  ratio,
} from "./bench/goals.ts";
import { formatHistory, type HistoryEntry, historyEntry, parseHistory } from "./bench/history.ts";
import { alternatingOrder, figuresOfSamples } from "./bench/load.ts";
import type { QuotesReport } from "./bench/quotes_report.ts";
import { type RatiosReport, withListAtScale } from "./bench/ratios_report.ts";
import { sumCpu } from "./bench/stack_cpu.ts";

const figures = (p99Ms: number) => ({ samples: 100, p50Ms: p99Ms / 2, p99Ms, maxMs: p99Ms });

Deno.test("an absolute goal is judged on the figure itself, and prints with its unit", () => {
  const list = absoluteGoal("list p50", 41.25, "ms", "≤", 50);
  assertEquals([list.floor, list.ratio, list.met], [null, null, true]);
  assertEquals(absoluteGoal("list p50", 50.5, "ms", "≤", 50).met, false);
  // Not measured is never met.
  assertEquals(absoluteGoal("list p50", NaN, "ms", "≤", 50).met, false);
  assertEquals(goalValue(list), 41.25);
  assertEquals(formatGoal(list), "≤ 50 ms");
  assertEquals(formatGoalValue(list), "41.3 ms");
  assertEquals(formatGoalValue(absoluteGoal("p99", 1234.4, "ms", "≤", 1000)), "1234 ms");
  const create = goal("create", 600, 1000, "≥", 0.5);
  assertEquals(goalValue(create), 0.6);
  assertEquals(formatGoalValue(create), "0.60");
  assertEquals(ratio("lines req/s", 300, 1200), {
    figure: "lines req/s",
    product: 300,
    floor: 1200,
    ratio: 0.25,
  });
});

Deno.test("the events goal needs its p99 within 1 s, every event delivered and no bad signature", () => {
  const events = (over: Partial<EventsUnderLoad>): EventsUnderLoad => ({
    latency: figures(400),
    allArrived: true,
    refused: 0,
    ...over,
  } as EventsUnderLoad);
  assertEquals(eventsGoal(events({})).met, true);
  assertEquals(eventsGoal(events({ latency: figures(1001) })).met, false);
  assertEquals(eventsGoal(events({ allArrived: false })).met, false);
  assertEquals(eventsGoal(events({ refused: 1 })).met, false);
  const missing = eventsGoal(null);
  assertEquals([missing.met, Number.isNaN(missing.product)], [false, true]);
});

/** The parts of a ratios report the helpers below read. */
function report(over: Partial<RatiosReport> = {}): RatiosReport {
  return {
    date: "2026-11-25T10:00:00.000Z",
    floors: { proxy: { durationS: 10.02 } },
    goals: [
      goal("POST /v1/quotes req/s ÷ write floor", 150, 1500, "≥", 0.5),
      goal("GET /v1/quotes?limit=20 req/s ÷ read floor", 900, 1000, "≥", 0.8),
      goal("GET /v1/me req/s ÷ proxy floor", 7000, 6000, "≥", 1),
    ],
    otherRatios: [ratio("PATCH req/s ÷ write floor", 300, 1500)],
    footprint: {
      idle: { rssMb: { gateway: 70, quotes: 75 }, goalMbAtMost: 80, met: {} },
      afterThisPart: { rssMb: { gateway: 110, quotes: 130 }, goalMbAtMost: 120, met: {} },
    },
    idle: { cpu: { seconds: 60, stackPctOfCore: 0.4, goalPctOfCoreAtMost: 1, met: true } },
    ...over,
  } as unknown as RatiosReport;
}

const quotes = (p50Ms: number): QuotesReport =>
  ({
    seed: {
      quotes: 10_000,
      perQuote: { groups: 3, garmentLinesPerGroup: 4, variantsPerLine: 5, decorationsPerGroup: 2 },
    },
    list: {
      request: "GET /v1/quotes?limit=200&offset=… (cycling)",
      itemsPerPage: 200,
      firstPass: { samples: 50, p50Ms: p50Ms * 4, p99Ms: p50Ms * 5, maxMs: p50Ms * 5 },
      sequential: { samples: 100, p50Ms, p99Ms: p50Ms * 2, maxMs: p50Ms * 3 },
      responseBytes: { min: 1_000_000, median: 2_000_000, max: 2_000_000 },
      load: { connections: 2, requestsPerSecond: 12, bytesPerSecond: 24_000_000, non2xx: 0 },
    },
  }) as unknown as QuotesReport;

Deno.test("withListAtScale adds the 200-quote list's goal among the reads, once", () => {
  const once = withListAtScale(report(), quotes(40));
  assertEquals(once.goals.map((g) => g.figure), [
    "POST /v1/quotes req/s ÷ write floor",
    "GET /v1/quotes?limit=20 req/s ÷ read floor",
    "GET /v1/quotes?limit=200 over 10,000 quotes p50",
    "GET /v1/me req/s ÷ proxy floor",
  ]);
  const list = once.goals[2]!;
  assertEquals([list.product, list.unit, list.target, list.met], [40, "ms", 50, true]);
  // 2 MB a page in 40 ms: 50 MB/s one request after another.
  assertEquals(once.listAtScale?.sequentialBytesPerSecond, 50_000_000);
  assertEquals(once.listAtScale?.load.bytesPerSecond, 24_000_000);
  // Attached again (a second quotes run), the goal is replaced, not repeated.
  const twice = withListAtScale(once, quotes(60));
  assertEquals(twice.goals.length, 4);
  assertEquals(twice.goals[2]!.met, false);
});

Deno.test("historyEntry keeps every goal's value and the footprint's, judged as printed", () => {
  const entry = historyEntry(report(), "deno task bench", 600, "70755e2");
  assertEquals(entry.command, "deno task bench");
  assertEquals(entry.totalSeconds, 600);
  assertEquals(entry.commit, "70755e2");
  assertEquals(entry.goals[0], {
    figure: "POST /v1/quotes req/s ÷ write floor",
    value: 0.1,
    comparator: "≥",
    target: 0.5,
    met: false,
  });
  const footprint = entry.goals.slice(3);
  assertEquals(footprint.map((g) => [g.figure, g.value, g.unit, g.met]), [
    ["largest process RSS, idle", 75, "MB", true],
    ["largest process RSS, after the bench", 130, "MB", false],
    ["idle stack CPU, % of one core", 0.4, "%", true],
  ]);
  assertEquals(entry.ratios, [{ figure: "PATCH req/s ÷ write floor", value: 0.2 }]);
});

Deno.test("historyEntry judges RSS met only when every process is within the bound", () => {
  const r = report();
  r.footprint.idle.rssMb = { gateway: 70, quotes: null };
  const idle = historyEntry(r, "x").goals.find((g) => g.figure === "largest process RSS, idle")!;
  assertEquals([Number.isNaN(idle.value), idle.met], [true, false]);
});

Deno.test("parseHistory skips lines that are not entries", () => {
  const entry = historyEntry(report(), "deno task bench");
  const text = [JSON.stringify(entry), "", "{ cut sho", JSON.stringify({ other: 1 }), ""].join(
    "\n",
  );
  assertEquals(parseHistory(text), [entry]);
});

Deno.test("formatHistory shows the last three runs side by side, oldest first", () => {
  const run = (date: string, createRatio: number, command = "deno task bench"): HistoryEntry => ({
    date,
    command,
    durationS: 10,
    totalSeconds: 540,
    commit: "70755e2*",
    goals: [
      {
        figure: "POST /v1/quotes req/s ÷ write floor",
        value: createRatio,
        comparator: "≥",
        target: 0.5,
        met: createRatio >= 0.5,
      },
      { figure: "list p50", value: 41.2, unit: "ms", comparator: "≤", target: 50, met: true },
    ],
    ratios: [{ figure: "PATCH req/s ÷ write floor", value: 0.33 }],
  });
  const entries = [
    run("2026-11-20T08:00:00.000Z", 0.1),
    run("2026-11-21T08:00:00.000Z", 0.2),
    run("2026-11-22T08:00:00.000Z", 0.55, "scripts/bench_ratios.ts"),
    run("2026-11-23T08:00:00.000Z", 0.6),
  ];
  const text = formatHistory(entries);
  assert(!text.includes("11-20 08:00"), "the fourth run back is left out");
  const [title, dates, commands, create, list, patch, met, wall] = text.split("\n");
  assert(title!.startsWith("The last 3 runs"));
  assert(dates!.indexOf("11-21 08:00") < dates!.indexOf("11-23 08:00"), "oldest on the left");
  assertEquals(commands!.trim().split(/\s{2,}/), [
    "task 10s 70755e2*",
    "alone 10s 70755e2*",
    "task 10s 70755e2*",
  ]);
  assertEquals(create!.trim().split(/\s{2,}/), [
    "POST /v1/quotes req/s ÷ write floor",
    "0.20 ✗",
    "0.55 ✓",
    "0.60 ✓",
    "≥ 0.50",
  ]);
  assertEquals(list!.trim().split(/\s{2,}/).slice(1), [
    "41.2 ms ✓",
    "41.2 ms ✓",
    "41.2 ms ✓",
    "≤ 50 ms",
  ]);
  assert(patch!.includes("0.33"));
  assertEquals(met!.trim().split(/\s{2,}/), ["goals met", "1/2", "2/2", "2/2"]);
  assert(wall!.includes("9.0 min"));
  assertEquals(formatHistory([]), "");
});

Deno.test("formatHistory shows – for a goal an older run did not have", () => {
  const older: HistoryEntry = {
    date: "2026-11-20T08:00:00.000Z",
    command: "deno task bench",
    durationS: 10,
    goals: [],
    ratios: [],
  };
  const newer: HistoryEntry = {
    ...older,
    date: "2026-11-21T08:00:00.000Z",
    goals: [{ figure: "new goal", value: 1, comparator: "≥", target: 1, met: true }],
  };
  const row = formatHistory([older, newer]).split("\n").find((l) => l.startsWith("new goal"))!;
  assertEquals(row.trim().split(/\s{2,}/), ["new goal", "–", "1.00 ✓", "≥ 1.00"]);
});

Deno.test("formatHistory compares the current run with the runs of the same command before it", () => {
  const at = (day: number, command: string): HistoryEntry => ({
    date: `2026-11-2${day}T08:00:00.000Z`,
    command,
    durationS: command === "deno task bench" ? 10 : 5,
    goals: [{ figure: "g", value: day, comparator: "≥", target: 1, met: true }],
    ratios: [],
  });
  const entries = [
    at(0, "deno task bench"),
    at(1, "deno task bench"),
    at(2, "scripts/bench_ratios.ts"),
    at(3, "deno task bench"),
    at(4, "deno task bench"),
    at(5, "scripts/bench_ratios.ts"),
  ];
  // Someone's run alone was appended after this one: it is left out, as are older ones.
  const row = (text: string): string[] =>
    text.split("\n").find((l) => l.startsWith("g "))!.trim().split(/\s{2,}/);
  assertEquals(row(formatHistory(entries, entries[4])), [
    "g",
    "1.00 ✓",
    "3.00 ✓",
    "4.00 ✓",
    "≥ 1.00",
  ]);
  assert(formatHistory(entries, entries[4]).startsWith("The last 3 runs of deno task bench"));
  assertEquals(row(formatHistory(entries, entries[5])), ["g", "2.00 ✓", "5.00 ✓", "≥ 1.00"]);
});

Deno.test("alternating slices run the sides forward, then backward (ABBA)", () => {
  assertEquals(alternatingOrder(2, 4), [[0, 1], [1, 0], [0, 1], [1, 0]]);
  assertEquals(alternatingOrder(3, 2), [[0, 1, 2], [2, 1, 0]]);
  // Over an even number of slices every side has run first and last equally often.
  const firsts = alternatingOrder(3, 4).map((order) => order[0]);
  assertEquals(firsts, [0, 2, 0, 2]);
});

Deno.test("slices of one load pool their latencies and add their wall times", () => {
  const figures = figuresOfSamples([
    { latenciesMs: { "": [1, 2, 3] }, failures: { "": { "500": 1 } }, elapsedS: 1 },
    {
      latenciesMs: { "": [4, 5], line: [9] },
      failures: { "": { "500": 2, "TypeError": 1 } },
      elapsedS: 2,
    },
  ], 16);
  assertEquals(figures[""]!.requests, 5);
  assertEquals(figures[""]!.durationS, 3);
  assertEquals(figures[""]!.requestsPerSecond, 5 / 3);
  assertEquals(figures[""]!.p50Ms, 3);
  assertEquals(figures[""]!.maxMs, 5);
  assertEquals(figures[""]!.failures, { "500": 3, "TypeError": 1 });
  // A label seen in one slice only still counts every slice's seconds.
  assertEquals(figures.line!.requestsPerSecond, 1 / 3);
  assertEquals(figures.line!.connections, 16);
});

Deno.test("the CPU of slices adds up, and the stack's share is over all of them", () => {
  const total = sumCpu([
    {
      seconds: 1,
      byProcess: { gateway: 0.2, "pg:quotes": 0.1 },
      stackPctOfCore: 30,
      clusterSeconds: 0.1,
    },
    {
      seconds: 3,
      byProcess: { gateway: 0.6, quotes: 0.3 },
      stackPctOfCore: 10,
      clusterSeconds: 0.4,
    },
  ]);
  assertEquals(total.seconds, 4);
  assertEquals(total.byProcess, { gateway: 0.8, "pg:quotes": 0.1, quotes: 0.3 });
  // (0.3 + 0.3) CPU seconds of the stack over 4 s of wall time.
  assert(Math.abs(total.stackPctOfCore - 15) < 1e-9);
  assertEquals(total.clusterSeconds, 0.5);
  assert(Number.isNaN(sumCpu([]).stackPctOfCore));
});

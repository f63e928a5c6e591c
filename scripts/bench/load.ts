/**
 * The loads: closed loops (every connection sends its next request once the last one is
 * answered, every request timed with performance.now()), run in slices that alternate with a
 * floor's; and the open loop (each request leaves on schedule, answered or not). Also the
 * figures of a load: requests, req/s over the wall time, p50, p99, max and failures.
 */
import { sleep } from "@printshop/shared/net";
import { percentile } from "./stats.ts";

/** Connections of every closed-loop load, each its own loop. */
export const CONNECTIONS = 16;
/** Seconds of warm-up before a load's first measured slice. */
export const WARMUP_S = 1;

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

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export interface Target {
  url: string;
  method?: Method;
  headers?: Record<string, string>;
  /** A fresh body per request. */
  body?: () => string;
  expectStatus: number;
}

/** One request of a turn. */
export interface Call {
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
export type Send = (label: string, call: Call) => Promise<string | null>;

/** What one connection does per turn (one request, or a sequence such as a line and its variants). */
export type Turn = (send: Send) => Promise<void>;

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
export async function turnLoop(
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
export function sameRequest(target: Target): Turn[] {
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

/** The figures of a label that recorded nothing. */
export const noFigures = (connections: number): LoadFigures => loadFigures([], NaN, connections);

/**
 * `total` calls of `send` at `ratePerS`, open loop: each leaves on schedule, whatever the earlier
 * ones are doing, unless `maxInFlight` are unanswered (then it waits for one, and leaves late:
 * `maxScheduleSlipMs` shows it). `check` runs every 100 calls (it may throw to stop the loop).
 * The events part's steady phase, and the ratios part's events under the create load.
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

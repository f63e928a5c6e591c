/**
 * The sizes and bounds of the events part: how long the steady phase runs (`BENCH_DURATION_S`,
 * 15 s unless set) and at what rate, the backlog (`BENCH_EVENTS_BACKLOG`, 2,000) and how many
 * in flight, how long deliveries are waited for, and the latency goal.
 */

/** Seconds of each steady phase. */
export const LATENCY_S = Number(Deno.env.get("BENCH_DURATION_S") ?? 15);
/** Changes written in each throughput phase. */
export const BACKLOG = Number(Deno.env.get("BENCH_EVENTS_BACKLOG") ?? 2_000);
if (!(LATENCY_S > 0)) {
  throw new Error(`BENCH_DURATION_S must be a number > 0, not ${Deno.env.get("BENCH_DURATION_S")}`);
}
if (!Number.isInteger(BACKLOG) || BACKLOG < 1) {
  throw new Error(
    `BENCH_EVENTS_BACKLOG must be a whole number ≥ 1, not ${Deno.env.get("BENCH_EVENTS_BACKLOG")}`,
  );
}
/** Changes per second of the steady phase, each leaving on schedule. */
export const RATE_PER_S = 100;
/** Changes in flight at once through the backlog. */
export const BACKLOG_CONCURRENCY = 20;
/**
 * Waiting for a steady phase's deliveries gives up this long after its last write: it fell
 * behind the offered load.
 */
export const STEADY_DRAIN_CAP_MS = 60_000;
/** Goal of quote.created on the embedded transport: p99 of receipt − occurredAt, in ms. */
export const LATENCY_GOAL_P99_MS = 1_000;

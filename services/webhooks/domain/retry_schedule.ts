const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const STEP = /^(\d{1,7})(ms|s|m|h|d)$/;

/**
 * Parses `5s,5m,30m,2h`: the waits between delivery attempts. The first attempt is immediate;
 * a delivery that still fails after the last wait is marked failed.
 */
export function parseRetrySchedule(text: string): number[] | string {
  const steps = text.split(",").map((s) => s.trim());
  const delays: number[] = [];
  for (const step of steps) {
    const match = step.match(STEP);
    if (!match) return `has "${step}", which is not a duration like 500ms, 5s, 5m, 2h or 1d`;
    delays.push(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  }
  if (delays.length > 20) return "must have at most 20 steps";
  return delays;
}

/**
 * When to try again after attempt number `attempt` (1-based) failed, or null when the schedule
 * is used up and the delivery has failed for good.
 */
export function nextAttemptDelay(schedule: readonly number[], attempt: number): number | null {
  return schedule[attempt - 1] ?? null;
}

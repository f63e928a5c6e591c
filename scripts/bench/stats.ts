/** The latency statistics and bulk-call figures every part of `deno task bench` reports. */

export interface LatencyFigures {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile of an ascending list: the smallest value ≥ q of the samples. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(samples: readonly number[]): number {
  return percentile([...samples].sort((a, b) => a - b), 0.5);
}

/** p50, p99 and max of samples in milliseconds, in any order. */
export function latencyFigures(samples: readonly number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? NaN,
  };
}

/** A bulk operation timed call by call (the catalogue's bulk create, the CRM's bulk tier). */
export interface BulkCallFigures {
  request: string;
  rowsPerCall: number;
  calls: number;
  warmupCalls: number;
  requestBytes: number;
  responseBytes: number;
}

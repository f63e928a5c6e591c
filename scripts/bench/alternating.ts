/**
 * A product load and its floor measured in ALTERNATING_SLICES slices each, alternating in ABBA
 * order (floor, product, product, floor, …), rather than one after the other: this machine's
 * speed drifts by tens of per cent within a minute, and two runs in a row put that drift straight
 * into their ratio. Latencies are pooled over the slices, req/s is every answer over every
 * measured second, and the CPU of every process is taken around each slice.
 */
import type { Sql } from "@printshop/shared/db";
import { waitOutboxDrained } from "./full_quotes.ts";
import {
  alternatingOrder,
  CONNECTIONS,
  figuresOfSamples,
  type LoadFigures,
  type LoadSample,
  noFigures,
  sameRequest,
  type Target,
  type Turn,
  turnLoop,
  WARMUP_S,
} from "./load.ts";
import type { Watched } from "./proc.ts";
import type { Measured } from "./ratios_report.ts";
import {
  cpuBetween,
  type CpuFigures,
  cpuMsPerRequest,
  type CpuSnapshot,
  cpuSnapshot,
  sumCpu,
} from "./stack_cpu.ts";

/** A product figure and its floor are measured in this many alternating slices each. */
export const ALTERNATING_SLICES = 4;
/** The warm-up of every slice after a side's first (its connections are open and warm by then). */
export const SLICE_WARMUP_S = 0.25;

/** Figures by label of turns measured in slices, with the CPU around them. */
export interface TurnsMeasured {
  byLabel: Record<string, LoadFigures>;
  cpu: CpuFigures;
  cpuMs: Record<string, number>;
}

/** What the slices are measured with: the database, the cluster, and who to take CPU of. */
export interface SliceContext {
  sql: Sql;
  postmaster: number;
  /** Seconds measured per side, over all its slices. */
  durationS: number;
  /** The processes whose CPU is taken, as they are when a slice starts. */
  watched: () => Watched[];
}

/** CPU ms per request answered, or per turn when `perRequestOf` names the label that starts one. */
function perRequest(
  byLabel: Record<string, LoadFigures>,
  cpu: CpuFigures,
  connections: number,
  perRequestOf?: string,
): Record<string, number> {
  const answered = (f: LoadFigures): number =>
    f.requests + Object.values(f.failures).reduce((a, b) => a + b, 0);
  const count = perRequestOf === undefined
    ? Object.values(byLabel).reduce((n, f) => n + answered(f), 0)
    : answered(byLabel[perRequestOf] ?? noFigures(connections));
  return cpuMsPerRequest(cpu.byProcess, cpu.clusterSeconds, count);
}

/** A side's figures as one request's (the label "" that sameRequest's turns record). */
export const measuredOf = (request: string, m: TurnsMeasured): Measured => ({
  request,
  ...(m.byLabel[""] ?? noFigures(CONNECTIONS)),
  cpu: m.cpu,
  cpuMsPerRequest: m.cpuMs,
});

/**
 * A `between` for loads that write: waits after each slice until the quotes outbox is
 * published, keeping the longest wait (null once one timed out).
 */
export const outboxDrains = (
  sql: Sql,
): { between: () => Promise<void>; longestS: () => number | null } => {
  let longest: number | null = 0;
  return {
    between: async () => {
      const drained = await waitOutboxDrained(sql);
      longest = drained === null || longest === null ? null : Math.max(longest, drained);
    },
    longestS: () => longest,
  };
};

/** The two ways of measuring alternating sides, bound to one run's context. */
export function alternatingSlices(context: SliceContext): {
  measureAlternatingTurns: (
    sides: readonly { request: string; turns: Turn[]; perRequestOf?: string }[],
    between?: () => Promise<unknown>,
  ) => Promise<TurnsMeasured[]>;
  measureAlternating: (
    sides: readonly { request: string; target: Target }[],
    between?: () => Promise<unknown>,
  ) => Promise<Measured[]>;
} {
  const { sql, postmaster, durationS, watched } = context;
  /** One measured run of `turns` (after its warm-up), with the CPU of every process around it. */
  const sampleTurns = async (
    turns: Turn[],
    seconds: number,
    warmupS: number,
  ): Promise<{ sample: LoadSample; cpu: CpuFigures }> => {
    const processes = watched();
    let before: CpuSnapshot | undefined;
    let after: CpuSnapshot | undefined;
    const sample = await turnLoop(turns, seconds, {
      before: async () => void (before = await cpuSnapshot(sql, processes, postmaster)),
      after: async () => void (after = await cpuSnapshot(sql, processes, postmaster)),
    }, warmupS);
    return { sample, cpu: await cpuBetween(before!, after!, processes) };
  };
  /**
   * Loads (each a set of turns, one per connection) and their floors measured in
   * ALTERNATING_SLICES alternating slices of durationS ÷ ALTERNATING_SLICES each, in ABBA order.
   * A turn function keeps its state from one slice to the next (a line writer goes on with its
   * next group). `between` runs after every slice (untimed), so that work a load leaves behind
   * (an outbox to publish) does not run under the next one. CPU is per request, or per turn of
   * the label `perRequestOf` names.
   */
  const measureAlternatingTurns = async (
    sides: readonly { request: string; turns: Turn[]; perRequestOf?: string }[],
    between?: () => Promise<unknown>,
  ): Promise<TurnsMeasured[]> => {
    const sliceS = durationS / ALTERNATING_SLICES;
    console.error(
      `[ratios] ${sides.map((s) => s.request).join(" ⇄ ")}: ${durationS} s each, in ` +
        `${ALTERNATING_SLICES} alternating slices, ${CONNECTIONS} connections…`,
    );
    const taken = sides.map(() => ({ samples: [] as LoadSample[], cpu: [] as CpuFigures[] }));
    const warmed = new Set<number>();
    for (const order of alternatingOrder(sides.length, ALTERNATING_SLICES)) {
      for (const i of order) {
        const warmupS = warmed.has(i) ? SLICE_WARMUP_S : WARMUP_S;
        warmed.add(i);
        const { sample, cpu } = await sampleTurns(sides[i]!.turns, sliceS, warmupS);
        taken[i]!.samples.push(sample);
        taken[i]!.cpu.push(cpu);
        await between?.();
      }
    }
    return sides.map((side, i) => {
      const byLabel = figuresOfSamples(taken[i]!.samples, side.turns.length);
      const cpu = sumCpu(taken[i]!.cpu);
      return {
        byLabel,
        cpu,
        cpuMs: perRequest(byLabel, cpu, side.turns.length, side.perRequestOf),
      };
    });
  };
  /** measureAlternatingTurns of one request per side, each sent again once answered. */
  const measureAlternating = async (
    sides: readonly { request: string; target: Target }[],
    between?: () => Promise<unknown>,
  ): Promise<Measured[]> => {
    const measured = await measureAlternatingTurns(
      sides.map((side) => ({ request: side.request, turns: sameRequest(side.target) })),
      between,
    );
    return sides.map((side, i) => measuredOf(side.request, measured[i]!));
  };
  return { measureAlternatingTurns, measureAlternating };
}

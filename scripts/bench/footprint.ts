/**
 * The stack's footprint (item 5 of issue 15): VmRSS of the gateway and each service, idle and
 * after loads, against their goals; and the idle stack's CPU, its PostgreSQL backends included.
 */
import { connect } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { withinLimit } from "./goals.ts";
import { rssMb, type RssParts, rssParts, stackProcesses } from "./proc.ts";
import { cpuBetween, type CpuFigures, cpuSnapshot, postmasterPid } from "./stack_cpu.ts";
import type { BenchStack } from "./stack.ts";

/** Seconds the idle stack's CPU is measured over (`BENCH_IDLE_S`), 60 unless set. */
export const BENCH_IDLE_S = Number(Deno.env.get("BENCH_IDLE_S") ?? 60);
/** Pause after boot before the idle figures, so start-up work is not counted as idle. */
const SETTLE_S = 3;
const RSS_IDLE_GOAL_MB = 80;
export const RSS_AFTER_GOAL_MB = 120;
const IDLE_CPU_GOAL_PCT = 1;

export interface Footprint {
  /** VmRSS in MB by process (gateway, each service). */
  rssMb: Record<string, number | null>;
  goalMbAtMost: number;
  met: Record<string, boolean>;
  /** What each process's RSS is made of (absent in reports made before it was kept). */
  partsMb?: Record<string, RssParts | null>;
}

/** VmRSS of each stack process now, each judged against `goalMb`. */
export async function footprint(bench: BenchStack, goalMb: number): Promise<Footprint> {
  const rss: Record<string, number | null> = {};
  const parts: Record<string, RssParts | null> = {};
  for (const p of stackProcesses(bench)) {
    rss[p.name] = await rssMb(p.pid);
    parts[p.name] = await rssParts(p.pid);
  }
  const met = Object.fromEntries(
    Object.entries(rss).map(([name, mb]) => [name, withinLimit(mb, goalMb)]),
  );
  return { rssMb: rss, goalMbAtMost: goalMb, met, partsMb: parts };
}

export interface IdleFigures {
  footprint: Footprint;
  cpu: CpuFigures & { goalPctOfCoreAtMost: number; met: boolean };
  note: string;
}

/**
 * The idle stack: RSS of each process, then CPU over `idleS` seconds with no request sent.
 * scripts/bench.ts calls it right after boot, before any part loads the stack.
 */
export async function measureIdle(bench: BenchStack, idleS = BENCH_IDLE_S): Promise<IdleFigures> {
  const sql = connect(bench.databaseUrl, { schema: "public", max: 1, applicationName: "bench" });
  try {
    console.error(`[ratios] idle stack: ${SETTLE_S} s to settle, then ${idleS} s of CPU…`);
    await sleep(SETTLE_S * 1000);
    const fp = await footprint(bench, RSS_IDLE_GOAL_MB);
    const watched = stackProcesses(bench);
    const postmaster = await postmasterPid(sql);
    const before = await cpuSnapshot(sql, watched, postmaster);
    await sleep(idleS * 1000);
    const after = await cpuSnapshot(sql, watched, postmaster);
    const cpu = await cpuBetween(before, after, watched);
    return {
      footprint: fp,
      cpu: {
        ...cpu,
        goalPctOfCoreAtMost: IDLE_CPU_GOAL_PCT,
        met: withinLimit(cpu.stackPctOfCore, IDLE_CPU_GOAL_PCT),
      },
      note: `after boot and ${SETTLE_S} s of settling, no request sent; stack CPU is the ` +
        `gateway, the services and the PostgreSQL backends serving the stack's database ` +
        `(those alive at the end of the window; backends that closed meanwhile are in ` +
        `"pg:exited backends and postmaster" with the server's own processes)`,
    };
  } finally {
    await sql.end();
  }
}

/** RSS of the stack now, as "after every part" of `deno task bench`, added to the report. */
export async function footprintAfterAllParts(bench: BenchStack): Promise<Footprint> {
  return await footprint(bench, RSS_AFTER_GOAL_MB);
}

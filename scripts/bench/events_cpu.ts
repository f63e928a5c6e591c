/**
 * Cores used over a phase of the events part, from /proc: the machine's busy time, every
 * process this bench started (directly or not) by name, and what ran besides it.
 */
import { type ProcStat, procStat } from "./proc.ts";

const CLOCK_TICKS_PER_S = 100;

/** Cores used (CPU-seconds per second) over a phase, from /proc. */
export interface CpuUse {
  seconds: number;
  /** Every process on the machine. */
  machineCores: number;
  /** Processes this bench started, directly or not. */
  byProcess: Record<string, number>;
  /**
   * What the machine did besides: kernel threads (reclaim, workers), processes this bench did
   * not start that were still running at the end, and the busy time left over: mostly processes
   * that started and ended within the phase (another test run's), and interrupts.
   */
  outside: { kernelThreads: number; otherProcesses: number; unattributed: number };
}

export interface CpuSample {
  at: number;
  /** Busy ticks of the whole machine. */
  busy: number;
  /** Ticks per process of this bench's tree (itself and its descendants), with its group. */
  procs: Map<number, { group: string; ticks: number }>;
}

const OUTSIDE_KERNEL = "kernel threads";
const OUTSIDE_OTHER = "other processes";

/**
 * Machine-wide busy time and the CPU of every process: those this bench started, directly or
 * not (the stack's processes by name, PostgreSQL with its backends, Mokapi, itself), kernel
 * threads, and other processes.
 */
export async function cpuSample(names: Map<number, string>): Promise<CpuSample | null> {
  try {
    const cpu = (await Deno.readTextFile("/proc/stat")).split("\n")[0]!.trim().split(/\s+/)
      .slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
    const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
    const stats = new Map<number, ProcStat>();
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const stat = await procStat(entry.name);
      if (stat) stats.set(Number(entry.name), stat);
    }
    const procs = new Map<number, { group: string; ticks: number }>();
    const groupOf = (pid: number, stat: ProcStat): string =>
      pid === Deno.pid
        ? "bench (load + receiver)"
        : names.get(pid) ?? (stat.comm.startsWith("postgres")
          ? "postgres"
          : stat.comm.includes("mokapi")
          ? "mokapi"
          : `other child (${stat.comm})`);
    const visit = (pid: number, group?: string): void => {
      const stat = stats.get(pid);
      if (!stat) return;
      // A process's descendants count with it (PostgreSQL's backends, a wrapper's child).
      const own = group ?? groupOf(pid, stat);
      // Reaped children count for the bench's processes (PostgreSQL's ended backends).
      procs.set(pid, { group: own, ticks: stat.ticks + stat.childTicks });
      for (const [child, childStat] of stats) {
        if (childStat.ppid === pid) visit(child, pid === Deno.pid ? undefined : own);
      }
    };
    visit(Deno.pid);
    for (const [pid, stat] of stats) {
      if (procs.has(pid)) continue;
      const kernel = pid === 2 || stat.ppid === 2;
      procs.set(pid, {
        group: kernel ? OUTSIDE_KERNEL : OUTSIDE_OTHER,
        ticks: stat.ticks,
      });
    }
    return { at: performance.now(), busy, procs };
  } catch {
    return null; // no /proc
  }
}

export function cpuUse(from: CpuSample | null, to: CpuSample | null): CpuUse | null {
  if (from === null || to === null) return null;
  const seconds = (to.at - from.at) / 1000;
  const cores = (ticks: number): number => ticks / CLOCK_TICKS_PER_S / seconds;
  const byProcess: Record<string, number> = {};
  for (const [pid, { group, ticks }] of to.procs) {
    // A process that started during the phase counts from zero.
    const used = cores(Math.max(0, ticks - (from.procs.get(pid)?.ticks ?? 0)));
    byProcess[group] = (byProcess[group] ?? 0) + used;
  }
  const machineCores = cores(to.busy - from.busy);
  const outside = {
    kernelThreads: byProcess[OUTSIDE_KERNEL] ?? 0,
    otherProcesses: byProcess[OUTSIDE_OTHER] ?? 0,
  };
  delete byProcess[OUTSIDE_KERNEL];
  delete byProcess[OUTSIDE_OTHER];
  const accounted = Object.values(byProcess).reduce((a, b) => a + b, 0) +
    outside.kernelThreads + outside.otherProcesses;
  return {
    seconds,
    machineCores,
    byProcess,
    outside: { ...outside, unattributed: Math.max(0, machineCores - accounted) },
  };
}

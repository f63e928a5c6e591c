/**
 * CPU by process around a load, from /proc: the stack's processes, the floors', the bench's own,
 * and the PostgreSQL cluster's, each backend named by its application (pg_stat_activity); the
 * stack's share of one core, and CPU ms per request.
 */
import type { Sql } from "@printshop/shared/db";
import { childrenOf, procStat, ticksPerSecond, type Watched } from "./proc.ts";

export interface CpuSnapshot {
  at: number;
  ticks: Map<number, number>;
  labels: Map<number, string>;
  /** Every process of the PostgreSQL cluster: the postmaster with what it reaped, its children. */
  clusterTicks: number;
  /** Cluster children, by pid, with their pg_stat_activity label (application or kind). */
  backends: Map<number, { label: string; stack: boolean; ticks: number }>;
}

/** Labels of the cluster's processes, and which serve the stack's database. */
async function backendLabels(
  sql: Sql,
): Promise<Map<number, { label: string; stack: boolean }>> {
  const rows = await sql<
    { pid: number; application_name: string; backend_type: string; stack_db: boolean }[]
  >`
    SELECT pid, application_name, backend_type,
           coalesce(datname = current_database(), false) AS stack_db
    FROM pg_stat_activity WHERE pid <> pg_backend_pid()`;
  const own = new Set(["bench", "bench_ratios", "bench_floors"]);
  return new Map(rows.map((r) => {
    const client = r.backend_type === "client backend";
    const label = client ? `pg:${r.application_name || "?"}` : `pg:${r.backend_type}`;
    return [r.pid, {
      label,
      stack: client && r.stack_db && !own.has(r.application_name),
    }];
  }));
}

/** CPU ticks of every watched process and of the cluster's, now. */
export async function cpuSnapshot(
  sql: Sql,
  watched: Watched[],
  postmaster: number,
): Promise<CpuSnapshot> {
  const labels = await backendLabels(sql);
  const ticks = new Map<number, number>();
  const names = new Map<number, string>();
  for (const w of watched) {
    const stat = await procStat(w.pid);
    if (stat) {
      ticks.set(w.pid, stat.ticks);
      names.set(w.pid, w.name);
    }
  }
  const master = await procStat(postmaster);
  let clusterTicks = master ? master.ticks + master.childTicks : 0;
  const backends = new Map<number, { label: string; stack: boolean; ticks: number }>();
  for (const pid of await childrenOf(postmaster)) {
    const stat = await procStat(pid);
    if (!stat) continue;
    clusterTicks += stat.ticks;
    const label = labels.get(pid) ?? { label: "pg:other", stack: false };
    backends.set(pid, { ...label, ticks: stat.ticks });
  }
  return { at: performance.now(), ticks, labels: names, clusterTicks, backends };
}

export interface CpuFigures {
  seconds: number;
  /** CPU seconds by process (stack and floor processes, the load generator) and by PostgreSQL
   * application or background process (`pg:…`). */
  byProcess: Record<string, number>;
  /** The stack's own processes plus the backends serving its database, % of one core. */
  stackPctOfCore: number;
  /** The whole PostgreSQL cluster, background processes and exited backends included. */
  clusterSeconds: number;
}

/** CPU between two snapshots: seconds by process, the stack's % of one core, the cluster's. */
export async function cpuBetween(
  a: CpuSnapshot,
  b: CpuSnapshot,
  watched: Watched[],
): Promise<CpuFigures> {
  const hz = await ticksPerSecond();
  const wall = (b.at - a.at) / 1000;
  const byProcess: Record<string, number> = {};
  const add = (name: string, ticks: number): void => {
    byProcess[name] = (byProcess[name] ?? 0) + ticks / hz;
  };
  let stackTicks = 0;
  for (const w of watched) {
    const end = b.ticks.get(w.pid);
    if (end === undefined) continue;
    const delta = end - (a.ticks.get(w.pid) ?? 0);
    add(w.name, delta);
    if (w.stack) stackTicks += delta;
  }
  let backendTicks = 0;
  for (const [pid, end] of b.backends) {
    const delta = end.ticks - (a.backends.get(pid)?.ticks ?? 0);
    backendTicks += delta;
    add(end.label, delta);
    if (end.stack) stackTicks += delta;
  }
  const clusterTicks = b.clusterTicks - a.clusterTicks;
  add("pg:exited backends and postmaster", Math.max(0, clusterTicks - backendTicks));
  for (const [k, v] of Object.entries(byProcess)) byProcess[k] = Math.round(v * 100) / 100;
  return {
    seconds: wall,
    byProcess,
    stackPctOfCore: (stackTicks / hz) / wall * 100,
    clusterSeconds: clusterTicks / hz,
  };
}

/** The CPU of a load taken in slices: seconds added, the stack's share over all of them. */
export function sumCpu(parts: readonly CpuFigures[]): CpuFigures {
  const byProcess: Record<string, number> = {};
  let seconds = 0;
  let stackSeconds = 0;
  let clusterSeconds = 0;
  for (const part of parts) {
    seconds += part.seconds;
    stackSeconds += part.stackPctOfCore / 100 * part.seconds;
    clusterSeconds += part.clusterSeconds;
    for (const [name, s] of Object.entries(part.byProcess)) {
      byProcess[name] = (byProcess[name] ?? 0) + s;
    }
  }
  for (const [k, v] of Object.entries(byProcess)) byProcess[k] = Math.round(v * 100) / 100;
  return {
    seconds,
    byProcess,
    stackPctOfCore: seconds > 0 ? stackSeconds / seconds * 100 : NaN,
    clusterSeconds,
  };
}

/** The PostgreSQL postmaster's pid: the parent of this connection's backend. */
export async function postmasterPid(sql: Sql): Promise<number> {
  const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const stat = await procStat(row!.pid);
  if (!stat) throw new Error("Cannot read the PostgreSQL backend's /proc entry");
  return stat.ppid;
}

/** CPU ms per request by process, the cluster's processes summed as `postgres`. */
export function cpuMsPerRequest(
  byProcessSeconds: Record<string, number>,
  clusterSeconds: number,
  requests: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  const perRequest = (s: number): number => Math.round(s * 1000 / requests * 1000) / 1000;
  for (const [name, seconds] of Object.entries(byProcessSeconds)) {
    if (!name.startsWith("pg:")) out[name] = perRequest(seconds);
  }
  out["postgres"] = perRequest(clusterSeconds);
  return out;
}

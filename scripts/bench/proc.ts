/**
 * What /proc says of the processes the benches watch: CPU ticks and parent, resident memory,
 * children, descriptors held and their limit; and which processes are the stack's own.
 */
import type { BenchStack } from "./stack.ts";

/** `/proc/<pid>/stat`: utime + stime, cutime + cstime (clock ticks) and the parent's pid. */
export function parseProcStat(
  text: string,
): { ppid: number; ticks: number; childTicks: number } {
  // The command name (field 2) is in parentheses and may hold spaces; fields after it are fixed.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  const field = (n: number): number => Number(rest[n - 3]);
  return { ppid: field(4), ticks: field(14) + field(15), childTicks: field(16) + field(17) };
}

/** `/proc/<pid>/status`: VmRSS in MB, or null when absent (a kernel thread, a zombie). */
export function parseVmRssMb(text: string): number | null {
  const match = text.match(/^VmRSS:\s+(\d+)\s+kB$/m);
  return match ? Number(match[1]) / 1024 : null;
}

/** What a process's resident memory is made of, in MB (rssParts). */
export interface RssParts {
  /** Pages of files: the deno executable's code and data, the same pages in every process. */
  fileMb: number;
  /** Anonymous pages: the V8 heap, malloc's arenas, thread stacks. */
  anonMb: number;
  /** Of those, malloc's main arena (`[heap]`), which only malloc_trim gives back in the middle. */
  mallocHeapMb: number;
}

/** RssParts from `/proc/<pid>/status` and `/proc/<pid>/smaps` texts; null without RssAnon. */
export function parseRssParts(status: string, smaps: string): RssParts | null {
  const kb = (name: string) => {
    const match = status.match(new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m"));
    return match ? Number(match[1]) : null;
  };
  const anon = kb("RssAnon");
  const file = kb("RssFile");
  const shmem = kb("RssShmem") ?? 0;
  if (anon === null || file === null) return null;
  // smaps: a mapping's header line, then its fields; the [heap] mapping's Rss is malloc's.
  let heap = 0;
  let inHeap = false;
  for (const line of smaps.split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.trimEnd().endsWith("[heap]");
    else if (inHeap && line.startsWith("Rss:")) heap += Number(line.match(/(\d+)/)![1]);
  }
  return { fileMb: (file + shmem) / 1024, anonMb: anon / 1024, mallocHeapMb: heap / 1024 };
}

/** What a process's resident memory is made of now; null when it is gone or unreadable. */
export async function rssParts(pid: number | null): Promise<RssParts | null> {
  if (pid === null) return null;
  try {
    return parseRssParts(
      await Deno.readTextFile(`/proc/${pid}/status`),
      await Deno.readTextFile(`/proc/${pid}/smaps`),
    );
  } catch {
    return null;
  }
}

/**
 * The allocator a process runs on, from its memory map: "jemalloc" when it mapped jemalloc
 * (shared/allocator.ts), else "glibc"; null when the map cannot be read.
 */
export async function allocatorOf(pid: number | null): Promise<"jemalloc" | "glibc" | null> {
  if (pid === null) return null;
  try {
    return /\/libjemalloc\.so/.test(await Deno.readTextFile(`/proc/${pid}/maps`))
      ? "jemalloc"
      : "glibc";
  } catch {
    return null;
  }
}

/** The command name of a `/proc/<pid>/stat` line: field 2, in parentheses, spaces and all. */
export function parseProcCommand(text: string): string {
  return text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
}

let clockTicks: number | undefined;
/** The kernel's clock ticks per second (CLK_TCK), the unit of /proc's CPU times. */
export async function ticksPerSecond(): Promise<number> {
  if (clockTicks === undefined) {
    try {
      const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" })
        .output();
      clockTicks = Number(new TextDecoder().decode(out.stdout).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** A process's `/proc/<pid>/stat`: its CPU ticks, its parent's pid and its command name. */
export type ProcStat = ReturnType<typeof parseProcStat> & { comm: string };

/** A process's `/proc/<pid>/stat`; null once it has exited. */
export async function procStat(pid: number | string): Promise<ProcStat | null> {
  try {
    const text = await Deno.readTextFile(`/proc/${pid}/stat`);
    return { ...parseProcStat(text), comm: parseProcCommand(text) };
  } catch {
    return null;
  }
}

/** A process's VmRSS in MB; null when it has none or is gone (or there is no pid). */
export async function rssMb(pid: number | null): Promise<number | null> {
  if (pid === null) return null;
  try {
    return parseVmRssMb(await Deno.readTextFile(`/proc/${pid}/status`));
  } catch {
    return null;
  }
}

/** How many descriptors a process holds open; null when unreadable. */
export async function descriptorCount(pid: number | "self" | null): Promise<number | null> {
  if (pid === null) return null;
  try {
    let count = 0;
    for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) count++;
    return count;
  } catch {
    return null;
  }
}

/** The soft "Max open files" of a process, null if unreadable or unlimited. */
export async function openFileLimit(pid: number | "self" | null): Promise<number | null> {
  if (pid === null) return null;
  try {
    const text = await Deno.readTextFile(`/proc/${pid}/limits`);
    const value = Number(text.match(/^Max open files\s+(\S+)/m)?.[1]);
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/** The pids whose parent is `parent`, from every /proc entry. */
export async function childrenOf(parent: number): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await procStat(Number(entry.name));
    if (stat?.ppid === parent) pids.push(Number(entry.name));
  }
  return pids;
}

/** The processes whose CPU is followed: the stack's, the floors', the bench's own. */
export interface Watched {
  name: string;
  pid: number;
  /** Part of the product stack (counted in its idle CPU and footprint). */
  stack: boolean;
}

/**
 * The gateway and service processes, from the launcher's `RunningStack.processes` (each holds
 * its `Deno.ChildProcess`, whose pid is the service's own: the launcher runs `deno run` itself).
 */
export function stackProcesses(bench: BenchStack): Watched[] {
  return bench.stack.processes
    .filter((p) => !p.exited)
    .map((p) => ({ name: p.name, pid: p.child.pid, stack: true }));
}

/** The gateway's pid now (a restarted gateway has a new one); null while it is down. */
export const gatewayPid = (bench: Pick<BenchStack, "stack">): number | null =>
  bench.stack.processes.find((p) => p.name === "gateway" && !p.exited)?.child.pid ?? null;

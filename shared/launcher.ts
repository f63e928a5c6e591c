import { type ServiceName, SERVICES } from "./routes.ts";
import { freePort, sleep } from "./net.ts";
import { copyToFile, SUPERVISED_ENV } from "./lifecycle.ts";

/**
 * Starts the five services and the gateway as separate processes, each on its own port, and
 * waits until each answers /healthz. Used by `deno task start`, the end-to-end tests and the
 * benchmark, so all three run the stack the same way.
 */
export interface StackOptions {
  databaseUrl: string;
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
  /** Called when a process exits while the stack is meant to be running. */
  onUnexpectedExit?: (name: string, code: number) => void;
}

export interface StackProcess {
  name: ServiceName | "gateway";
  url: string;
  child: Deno.ChildProcess;
  exited: boolean;
  /** Set when a test or the supervisor stops this process on purpose. */
  expectedExit?: boolean;
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
// Children use the node_modules the start or test task installed; they never resolve packages.
const RUN_FLAGS = [
  "--node-modules-dir=manual",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-sys",
];
const READY_TIMEOUT_MS = 60_000;

async function waitHealthy(proc: StackProcess, logHint: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exited) throw new Error(`${proc.name} exited during start${logHint}`);
    try {
      const res = await fetch(`${proc.url}/healthz`, { signal: AbortSignal.timeout(1000) });
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
  const gatewayPort = options.gatewayPort || freePort();
  const adminPort = options.adminPort || freePort();
  const host = options.host ?? "127.0.0.1";
  const connectHost = host === "0.0.0.0" ? "127.0.0.1" : host;
  const common = {
    DATABASE_URL: options.databaseUrl,
    INTERNAL_SECRET: options.internalSecret,
    ...options.env,
  };
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
      ...(name === "webhooks" ? { WEBHOOK_SECRETS_KEY: options.webhookSecretsKey } : {}),
      ...options.processEnv?.[name],
    };
  };

  let stopping = false;
  let running = false;
  const processes: StackProcess[] = [];
  const spawn = (
    name: ServiceName | "gateway",
    url: string,
    env: Record<string, string> = envOf(name),
    logName: string = name,
  ): StackProcess => {
    const stdout = options.logDir ? "piped" : "inherit";
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...RUN_FLAGS, new URL(ENTRY[name], ROOT).pathname],
      cwd: new URL(".", ROOT).pathname,
      env: { ...env, [SUPERVISED_ENV]: "1" },
      // The child watches this pipe: when the supervisor dies, even by SIGKILL, it closes and
      // the child shuts itself down instead of living on as an orphan.
      stdin: "piped",
      stdout,
      stderr: stdout,
    }).spawn();
    if (options.logDir) {
      const path = `${options.logDir}/${logName}.log`;
      void copyToFile(child.stdout, path);
      void copyToFile(child.stderr, path);
    }
    const proc: StackProcess = { name, url, child, exited: false };
    child.status.then((status) => {
      proc.exited = true;
      if (running && !stopping && !proc.expectedExit) {
        options.onUnexpectedExit?.(name, status.code);
      }
    });
    return proc;
  };

  const logHint = options.logDir ? ` (see ${options.logDir})` : "";
  const start = async (name: ServiceName | "gateway"): Promise<StackProcess> => {
    const url = name === "gateway" ? `http://${connectHost}:${gatewayPort}` : serviceUrls[name];
    const proc = spawn(name, url);
    await waitHealthy(proc, logHint);
    return proc;
  };

  const stop = async (): Promise<void> => {
    stopping = true;
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
    processes.push(...await Promise.all(SERVICES.map(start)));
    processes.push(await start("gateway"));
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
      proc.expectedExit = true;
      if (!proc.exited) proc.child.kill(signal);
      await proc.child.status;
    },
    async startGatewayReplica() {
      const replicaIndex = processes.filter((p) => p.name === "gateway").length;
      const logName = `gateway-${replicaIndex + 1}`;
      // A free port can be taken by another process before the replica binds it; then try
      // fresh ports rather than fail (only when the log shows that was the reason).
      for (let attempt = 1;; attempt++) {
        const ports = { gateway: freePort(), admin: freePort() };
        const url = `http://${connectHost}:${ports.gateway}`;
        const proc = spawn("gateway", url, envOf("gateway", ports), logName);
        processes.push(proc);
        try {
          await waitHealthy(proc, logHint);
          return { gatewayUrl: url, adminUrl: `http://127.0.0.1:${ports.admin}` };
        } catch (error) {
          const log = options.logDir
            ? await Deno.readTextFile(`${options.logDir}/${logName}.log`).catch(() => "")
            : "";
          if (attempt >= 3 || !proc.exited || !/AddrInUse|address already in use/i.test(log)) {
            throw error;
          }
          processes.splice(processes.indexOf(proc), 1);
        }
      }
    },
    async restart(name) {
      const index = processes.findIndex((p) => p.name === name);
      processes[index] = await start(name);
    },
    stop,
  };
}

/**
 * `deno task deploy:simulate`: the six apps as Deno Deploy runs them, on this machine (README
 * "Deno Deploy", "The simulation"). Exits non-zero when an event was lost, a webhook or mail was
 * sent twice without a kill to explain it, an answer was neither a success nor a documented
 * error, or an instance crashed. Settings (environment): SIMULATE_WRITES (2000),
 * SIMULATE_CONCURRENCY (8), SIMULATE_IDLE_MS (4000), SIMULATE_TICK_MS (60000: the platform's
 * minute), SIMULATE_EVICT_EVERY_MS (3000), SIMULATE_HARD_KILL_SHARE (0: every eviction is the
 * platform's SIGINT, then SIGKILL 5 s later; a share above 0 makes that many SIGKILL at once, a
 * machine lost, which the short run in `deno task test` does).
 *
 * The pieces: scripts/deploy/apps.ts (the apps, their deploy settings and README variables),
 * scripts/deploy/platform.ts (fronts and instances), scripts/deploy/load.ts (the writes and the
 * checks of each answer), scripts/deploy/checks.ts (what must hold at the end).
 */
import { createTestDatabase } from "@printshop/shared/testing";
import { startThrowawayPostgres } from "@printshop/shared/embedded-postgres";
import { connect } from "@printshop/shared/db";
import { smtpServer } from "@printshop/shared/testing/smtp";
import { PUBLIC_EVENT_TYPES } from "@printshop/shared/events";
import { kickHeader } from "@printshop/shared/background";
import { importContextKey, INTERNAL_CONTEXT_HEADER } from "@printshop/shared/internal-context";
import { startReceiver } from "./bench/receiver.ts";
import {
  type AppName,
  APPS,
  consumersOf,
  type DeploySettings,
  deploySettings,
  variablesFromReadme,
} from "./deploy/apps.ts";
import { AppFront } from "./deploy/platform.ts";
import { mergeOutcomes, runWrites, setUpShop } from "./deploy/load.ts";
import { checkOutcome, type SimulationReport } from "./deploy/checks.ts";

/** Writes after the main load whose deliveries must wait for the platform's tick. */
const TAIL_WRITES = 12;

/** The Deno that Deno Deploy runs (its runtime reference), fetched from npm. */
export const DEPLOY_DENO_VERSION = "2.4.0";

export interface SimulateOptions {
  writes: number;
  concurrency: number;
  idleMs: number;
  tickMs: number;
  evictEveryMs: number;
  hardKillShare: number;
  /** How long after the writes everything must have arrived. */
  drainTimeoutMs: number;
  /** Each app's instance logs go here. */
  logDir: string;
}

export const FULL_RUN: Omit<SimulateOptions, "logDir"> = {
  writes: 2000,
  concurrency: 8,
  idleMs: 4_000,
  tickMs: 60_000,
  evictEveryMs: 3_000,
  hardKillShare: 0,
  drainTimeoutMs: 150_000,
};

/** The path of Deploy's Deno binary, from npm (npx caches it): spawned directly, for signals. */
export async function deployDeno(): Promise<string> {
  const output = await new Deno.Command("npx", {
    args: ["-y", `deno@${DEPLOY_DENO_VERSION}`, "eval", "console.log(Deno.execPath())"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const path = new TextDecoder().decode(output.stdout).trim();
  if (!output.success || !path) {
    throw new Error(
      `deno@${DEPLOY_DENO_VERSION} from npm: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return path;
}

const randomSecret = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

/** Runs the pre-deploy command as the platform does: in the app's folder, with its variables. */
async function predeploy(
  deno: string,
  settings: DeploySettings,
  env: Record<string, string>,
): Promise<void> {
  const [command, ...args] = settings.predeploy.split(" ");
  if (command !== "deno") throw new Error(`unexpected pre-deploy command: ${settings.predeploy}`);
  const output = await new Deno.Command(deno, { args, cwd: settings.dir, env, clearEnv: true })
    .output();
  if (!output.success) {
    throw new Error(
      `pre-deploy of ${settings.dir} failed: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
}

export async function simulate(options: SimulateOptions): Promise<SimulationReport> {
  const deno = await deployDeno();
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const variables = variablesFromReadme(readme);
  // A cluster of its own, as Deploy's apps would have an external server: a dozen instances with
  // their pools must not compete for connections with the rest of a test run.
  const pg = await startThrowawayPostgres("printshop-deploy-pg-");
  const db = await createTestDatabase(pg.url).catch(async (error) => {
    await pg.stop();
    throw error;
  });
  const smtp = await smtpServer();
  const receiver = startReceiver();
  const secrets = {
    INTERNAL_SECRET: randomSecret(),
    PLATFORM_ADMIN_TOKEN: randomSecret(),
    WEBHOOK_SECRETS_KEY: randomSecret(),
  };
  const baseEnv: Record<string, string> = {};
  for (const name of ["HOME", "PATH", "DENO_DIR", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) baseEnv[name] = value;
  }
  const fronts = new Map<AppName, AppFront>();
  const settings = new Map<AppName, DeploySettings>();
  const stopTimers: ReturnType<typeof setInterval>[] = [];
  try {
    for (const app of APPS) {
      const appSettings = await deploySettings(app);
      settings.set(app, appSettings);
      fronts.set(
        app,
        new AppFront({
          name: app,
          dir: appSettings.dir,
          entrypoint: appSettings.entrypoint,
          env: {},
        }, {
          deno,
          maxInstances: 2,
          idleMs: options.idleMs,
          logDir: options.logDir,
          baseEnv,
        }),
      );
    }
    const urlOf = (app: AppName): string => fronts.get(app)!.url;
    const valueOf = (app: AppName, name: string): string => {
      switch (name) {
        case "DATABASE_URL":
          return db.appUrl;
        case "MIGRATION_DATABASE_URL":
          return db.ownerUrl;
        case "KICK_URLS":
          return consumersOf(app).map(urlOf).join(",");
        case "LOG_LEVEL":
          return "info";
        case "PUBLIC_URL":
          return urlOf("gateway");
        case "SMTP_URL":
          return `smtp://127.0.0.1:${smtp.port}?from=proofs@simulated.example`;
        case "WEBHOOK_ALLOW_PRIVATE_TARGETS":
          return "true";
        case "INTERNAL_SECRET":
        case "PLATFORM_ADMIN_TOKEN":
        case "WEBHOOK_SECRETS_KEY":
          return secrets[name];
      }
      const service = name.match(/^([A-Z]+)_URL$/)?.[1]?.toLowerCase();
      if (service && (APPS as readonly string[]).includes(service)) {
        return urlOf(service as AppName);
      }
      throw new Error(`the README lists ${name} for ${app}; the simulation has no value for it`);
    };
    for (const app of APPS) {
      const env = Object.fromEntries(variables[app].map((name) => [name, valueOf(app, name)]));
      fronts.get(app)!.spec.env = env;
      await predeploy(deno, settings.get(app)!, { ...baseEnv, ...env });
    }

    // The platform's cron: a tick per app every `tickMs`, starting an instance when none runs.
    const contextKey = await importContextKey(secrets.INTERNAL_SECRET);
    let ticks = 0;
    const tick = (): void => {
      for (const app of APPS) {
        ticks++;
        // What Deno.cron's handler does in an instance: drain, and finish before it returns.
        void fetch(`${urlOf(app)}/internal/kick?wait=true`, {
          method: "POST",
          headers: { [INTERNAL_CONTEXT_HEADER]: kickHeader(contextKey, crypto.randomUUID()) },
        }).then((res) => res.body?.cancel()).catch(() => {});
      }
    };
    stopTimers.push(setInterval(tick, options.tickMs));

    const shop = await setUpShop({
      gateway: urlOf("gateway"),
      adminToken: secrets.PLATFORM_ADMIN_TOKEN,
      receiver,
      eventTypes: PUBLIC_EVENT_TYPES,
    });
    const superuser = connect(db.url, { schema: "public", max: 2 });
    const [clock] = await superuser<{ now: Date }[]>`SELECT now()`;
    const setUpAt = clock!.now;

    // The platform's whims: an eviction every `evictEveryMs` or so, of a random app's instance.
    let evictions = 0;
    let hardKills = 0;
    const evictionTimer = setInterval(() => {
      const running = APPS.filter((app) => fronts.get(app)!.running() > 0);
      const app = running[Math.floor(Math.random() * running.length)];
      if (!app) return;
      const hard = Math.random() < options.hardKillShare;
      if (fronts.get(app)!.evict(hard)) {
        evictions++;
        if (hard) hardKills++;
      }
    }, options.evictEveryMs);
    stopTimers.push(evictionTimer);

    const loadStartedAt = Date.now();
    const load = await runWrites({
      gateway: urlOf("gateway"),
      apiKey: shop.apiKey,
      writes: options.writes,
      concurrency: options.concurrency,
    });
    const loadEndedAt = Date.now();
    clearInterval(evictionTimer);

    // Let the load's own deliveries land first (arrivals quiet for 2 s), so that none of them
    // is among those turned away below.
    await quiet(() => [...receiver.paths().values()].reduce((a, b) => a + b, 0), 2_000, 30_000);

    // The platform going idle with work left: a last few writes whose first deliveries the
    // receiver turns away (503), so that their retries fall due (5 s later) once every instance
    // has stopped for want of requests: only a tick can send them.
    receiver.unavailableUntil(Date.now() + 3_000);
    const tail = await runWrites({
      gateway: urlOf("gateway"),
      apiKey: shop.apiKey,
      writes: TAIL_WRITES,
      concurrency: 2,
      firstIndex: 1_000_000,
    });
    const idleFrom = Date.now();
    let webhooksRunningAtRetry = -1;
    const sample = setTimeout(
      () => webhooksRunningAtRetry = fronts.get("webhooks")!.running(),
      options.idleMs + 2_000,
    );

    const report = await checkOutcome({
      superuser,
      organizationId: shop.organizationId,
      setUpAt,
      receiver,
      paths: shop.paths,
      smtp,
      fronts: [...fronts.values()],
      load: mergeOutcomes(load, tail),
      loadStartedAt,
      loadEndedAt,
      idleFrom,
      idleInstances: () => webhooksRunningAtRetry,
      drainTimeoutMs: options.drainTimeoutMs,
      evictions,
      hardKills,
      ticks: () => ticks,
    });
    clearTimeout(sample);
    await superuser.end();
    return report;
  } finally {
    stopTimers.forEach((timer) => clearInterval(timer));
    await Promise.all([...fronts.values()].map((front) => front.close().catch(() => {})));
    await receiver.stop().catch(() => {});
    await smtp.close().catch(() => {});
    await db.drop().catch(() => {});
    await pg.stop().catch(() => {});
  }
}

/** Resolves once `count()` has not changed for `forMs`, or after `atMostMs`. */
async function quiet(count: () => number, forMs: number, atMostMs: number): Promise<void> {
  const giveUpAt = Date.now() + atMostMs;
  let last = count();
  let since = Date.now();
  while (Date.now() - since < forMs && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = count();
    if (now !== last) [last, since] = [now, Date.now()];
  }
}

function numberSetting(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
  return value;
}

if (import.meta.main) {
  const logDir = await Deno.makeTempDir({ prefix: "printshop-deploy-simulate-" });
  const report = await simulate({
    writes: numberSetting("SIMULATE_WRITES", FULL_RUN.writes),
    concurrency: numberSetting("SIMULATE_CONCURRENCY", FULL_RUN.concurrency),
    idleMs: numberSetting("SIMULATE_IDLE_MS", FULL_RUN.idleMs),
    tickMs: numberSetting("SIMULATE_TICK_MS", FULL_RUN.tickMs),
    evictEveryMs: numberSetting("SIMULATE_EVICT_EVERY_MS", FULL_RUN.evictEveryMs),
    hardKillShare: numberSetting("SIMULATE_HARD_KILL_SHARE", FULL_RUN.hardKillShare),
    drainTimeoutMs: FULL_RUN.drainTimeoutMs,
    logDir,
  });
  console.log(report.text);
  console.log(`instance logs: ${logDir}`);
  Deno.exit(report.failures.length === 0 ? 0 : 1);
}

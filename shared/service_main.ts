import type { Hono } from "hono";
import type { z } from "zod";
import { loadConfigOrExit } from "./config.ts";
import { createLogger, type Logger, type LogLevel } from "./log.ts";
import {
  openDatabase,
  pinnedReadLimits,
  pinnedSettingRefused,
  type Sql,
  stopPinnedReads,
} from "./db/mod.ts";
import { assertRuntimeRole } from "./db/tenancy.ts";
import { type ContextKey, importContextKey } from "./internal_context.ts";
import type { ServiceEnv } from "./service_defaults.ts";
import { onShutdown } from "./lifecycle.ts";
import { type EventBus, type EventBusConfig, startProcessEvents } from "./events/mod.ts";
import { startHeapCompaction } from "./heap_compaction.ts";
import { addKickRoute, type Settleable, settleInOrder } from "./background.ts";

interface BaseConfig extends EventBusConfig {
  PORT: number;
  HOST: string;
  DATABASE_URL: string;
  MIGRATION_DATABASE_URL: string;
  PINNED_READ_POOLS: number;
  INTERNAL_SECRET: string;
  LOG_LEVEL: LogLevel;
}

export interface ServiceDeps<C> {
  config: C;
  sql: Sql;
  logger: Logger;
  contextKey: ContextKey;
}

/**
 * A service as a process starts it and as its tests do: its name (its schema and topic), its
 * configuration schema, its migrations and how its app is built. Declared once, in its app.ts.
 */
export interface ServiceDefinition<S extends z.ZodObject = z.ZodObject> {
  service: string;
  configSchema: S;
  /** The folder of its numbered SQL migrations. */
  migrations: URL;
  buildApp: (deps: ServiceDeps<z.output<S>>) => Hono<ServiceEnv>;
}

export interface RunServiceOptions<S extends z.ZodObject> extends ServiceDefinition<S> {
  /** Work beside the HTTP server (consumers, workers); stopped before the pool closes. */
  background?: (deps: BackgroundDeps<z.output<S>>) => Promise<Background>;
  /**
   * `process` (main.ts: `task start`, compose): migrations at start, background work as the
   * BACKGROUND_WORK setting says. `deploy` (deploy.ts, one app on Deno Deploy): migrations only
   * checked (the pre-deploy command ran them), background work on demand, and the platform's
   * port unless PORT is set.
   */
  entry?: "process" | "deploy";
}

export interface BackgroundDeps<C> extends ServiceDeps<C> {
  bus: EventBus;
  /** Whether the work may LISTEN for wake-ups; false on demand (it polls, and is kicked). */
  listen: boolean;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/** A service's background work: stopped at the end; settled by kicks and ticks on demand. */
export type Background = Stoppable & Partial<Settleable>;

/** What a deploy entry registers its cron on: the drain a tick runs, once the app is up. */
export interface DeployedService {
  tick(): Promise<void>;
}

/**
 * Turns pinned reads off when the database does not keep a connection's start-up setting (a
 * transaction pooler in front of it), and says so: the service then reads in transactions, where
 * pinned reads would see no rows.
 */
async function checkPinnedReads(sql: Sql, url: string, logger: Logger): Promise<void> {
  const refused = await pinnedSettingRefused(url);
  if (refused === null) return;
  await stopPinnedReads(sql);
  logger.warn("pinned reads are off: the database does not keep a connection's setting", {
    reason: refused,
    fix: 'behind a transaction pooler, set PINNED_READ_POOLS=0 (README "Database roles")',
  });
}

/**
 * Process entry shared by every service: validated config, migrated schema, the event bus and
 * the relay of the service's outbox to its topic, HTTP server, and a graceful stop on
 * SIGTERM/SIGINT (finish in-flight requests, stop background work, then close the pool).
 */
export async function runService<S extends z.ZodObject>(
  options: RunServiceOptions<S>,
): Promise<() => Promise<void>> {
  const config = loadConfigOrExit(options.configSchema) as z.output<S> & BaseConfig;
  const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: options.service } });
  const deployed = options.entry === "deploy";
  const onDemand = deployed || config.BACKGROUND_WORK === "on-demand";
  let sql: Sql;
  try {
    sql = await openDatabase(config.DATABASE_URL, options.service, options.migrations, logger, {
      applicationName: options.service,
      migrationUrl: config.MIGRATION_DATABASE_URL,
      migrations: deployed ? "verify" : "apply",
      pinnedReads: pinnedReadLimits(config.PINNED_READ_POOLS),
    });
    await assertRuntimeRole(sql, options.service);
    if (config.PINNED_READ_POOLS > 0) await checkPinnedReads(sql, config.DATABASE_URL, logger);
  } catch (error) {
    logger.error("cannot start on this database", { error: String(error) });
    Deno.exit(1);
  }
  const events = await startProcessEvents(config, sql, options.service, logger, {
    onDemand,
    verifyMigrations: deployed,
  });
  const contextKey = await importContextKey(config.INTERNAL_SECRET);
  const deps = { config, sql, logger, contextKey };
  const app = options.buildApp(deps);
  const background = await options.background?.({ ...deps, bus: events.bus, listen: !onDemand });
  const stages: { name: string; work: Settleable }[] = [
    ...(events.relay ? [{ name: "outbox relay", work: events.relay }] : []),
    ...(background?.settle ? [{ name: "background work", work: background as Settleable }] : []),
  ];
  const stopping = new AbortController();
  const drain = (): Promise<void> => settleInOrder(stages, logger, undefined, stopping.signal);
  addKickRoute(app, contextKey, drain);
  // On demand, nothing LISTENs: a write wakes this process's loops itself once it is answered
  // (after its commit), and the relay then kicks the apps that consume its events.
  const handler = onDemand ? kickAfterWrites(app.fetch, drain) : app.fetch;
  // Before listening: the launcher counts the process as started once it answers, and the
  // collection's pause then holds up no request.
  const compaction = startHeapCompaction();
  const onListen = ({ hostname, port }: Deno.NetAddr): void =>
    logger.info("listening", { hostname, port, background: onDemand ? "on-demand" : "loops" });
  const server = deployed
    ? serveOnPlatform(config, onListen, handler)
    : Deno.serve({ hostname: config.HOST, port: config.PORT, onListen }, handler);
  onShutdown([
    // First: a tick's request waits for its drain, and the server's shutdown for that request.
    { name: "ticks in progress", run: () => stopping.abort() },
    { name: "heap compaction", run: () => compaction.stop() },
    { name: "requests in flight", run: () => server.shutdown() },
    { name: "background work", run: () => background?.stop() },
    { name: "event bus", run: () => events.stop() },
    { name: "database pool", run: () => sql.end({ timeout: 1 }) },
  ], logger);
  return drain;
}

/**
 * A service as one app on Deno Deploy: started at once, and a `tick` to register with Deno.cron
 * at the entry module's top level (the platform finds crons by evaluating it, before any await).
 */
export function deployService<S extends z.ZodObject>(
  options: RunServiceOptions<S>,
): DeployedService {
  const started = runService({ ...options, entry: "deploy" });
  return { tick: async () => await (await started)() };
}

/**
 * A Deploy entry's server: where the platform says. Deno Deploy routes to `Deno.serve` whatever
 * it is given; a platform (or the simulation) that sets PORT gets HOST:PORT.
 */
export function serveOnPlatform(
  config: { HOST: string; PORT: number },
  onListen: (addr: Deno.NetAddr) => void,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.env.has("PORT")
    ? Deno.serve({ hostname: config.HOST, port: config.PORT, onListen }, handler)
    : Deno.serve({ onListen }, handler);
}

/** Methods that change nothing: their answers need no kick. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Serves `fetch`, and after each answered write starts `drain` without waiting for it: the write
 * has committed, so its outbox row (or queued mail) is there to be relayed (or sent).
 */
export function kickAfterWrites(
  fetch: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  drain: () => Promise<void>,
): (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response> {
  return async (request, info) => {
    const response = await fetch(request, info);
    if (!SAFE_METHODS.has(request.method) && response.status < 500) void drain();
    return response;
  };
}

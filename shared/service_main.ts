import type { Hono } from "hono";
import type { z } from "zod";
import { loadConfigOrExit } from "./config.ts";
import { createLogger, type Logger, type LogLevel } from "./log.ts";
import { openDatabase, type Sql } from "./db/mod.ts";
import { assertRuntimeRole } from "./db/tenancy.ts";
import { type ContextKey, importContextKey } from "./internal_context.ts";
import type { ServiceEnv } from "./service_defaults.ts";
import { onShutdown } from "./lifecycle.ts";
import { type EventBus, type EventBusConfig, startProcessEvents } from "./events/mod.ts";
import { startHeapCompaction } from "./heap_compaction.ts";

interface BaseConfig extends EventBusConfig {
  PORT: number;
  HOST: string;
  DATABASE_URL: string;
  MIGRATION_DATABASE_URL: string;
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
  background?: (deps: ServiceDeps<z.output<S>> & { bus: EventBus }) => Promise<Stoppable>;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Process entry shared by every service: validated config, migrated schema, the event bus and
 * the relay of the service's outbox to its topic, HTTP server, and a graceful stop on
 * SIGTERM/SIGINT (finish in-flight requests, stop background work, then close the pool).
 */
export async function runService<S extends z.ZodObject>(
  options: RunServiceOptions<S>,
): Promise<void> {
  const config = loadConfigOrExit(options.configSchema) as z.output<S> & BaseConfig;
  const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: options.service } });
  let sql: Sql;
  try {
    sql = await openDatabase(config.DATABASE_URL, options.service, options.migrations, logger, {
      applicationName: options.service,
      migrationUrl: config.MIGRATION_DATABASE_URL,
    });
    await assertRuntimeRole(sql, options.service);
  } catch (error) {
    logger.error("cannot start on this database", { error: String(error) });
    Deno.exit(1);
  }
  const events = await startProcessEvents(config, sql, options.service, logger);
  const contextKey = await importContextKey(config.INTERNAL_SECRET);
  const deps = { config, sql, logger, contextKey };
  const app = options.buildApp(deps);
  const background = await options.background?.({ ...deps, bus: events.bus });
  // Before listening: the launcher counts the process as started once it answers, and the
  // collection's pause then holds up no request.
  const compaction = startHeapCompaction();
  const server = Deno.serve({
    hostname: config.HOST,
    port: config.PORT,
    onListen: ({ hostname, port }) => logger.info("listening", { hostname, port }),
  }, app.fetch);
  onShutdown([
    { name: "heap compaction", run: () => compaction.stop() },
    { name: "requests in flight", run: () => server.shutdown() },
    { name: "background work", run: () => background?.stop() },
    { name: "event bus", run: () => events.stop() },
    { name: "database pool", run: () => sql.end({ timeout: 1 }) },
  ], logger);
}

import { ConfigError } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Sql } from "../db/mod.ts";
import { ROLES } from "../db/tenancy.ts";
import { type EventBus, topicOf } from "./bus.ts";
import { type OutboxRelay, startOutboxRelay } from "./relay.ts";
import { createEmbeddedBus } from "./embedded_bus.ts";
import { ON_DEMAND_LOOP } from "./waker.ts";
import { importContextKey } from "../internal_context.ts";
import { kicker } from "../background.ts";

export * from "./bus.ts";
export * from "./catalogue.ts";
export { startOutboxRelay };
export type { OutboxRelay } from "./relay.ts";

export interface EventBusConfig {
  DATABASE_URL: string;
  MIGRATION_DATABASE_URL?: string | undefined;
  KAFKA_BROKERS?: string[] | undefined;
  KAFKA_CLIENT_ID: string;
  KAFKA_SSL: boolean;
  KAFKA_SASL_MECHANISM?: "plain" | "scram-sha-256" | "scram-sha-512" | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
  KICK_URLS?: string[] | undefined;
  INTERNAL_SECRET?: string | undefined;
}

/** How a process drives its event work: see BACKGROUND_WORK in shared/config.ts. */
export interface EventWorkOptions {
  /** No LISTEN; relayed batches kick KICK_URLS. */
  onDemand?: boolean;
  /** Check the bus's migrations rather than apply them (a Deno Deploy instance). */
  verifyMigrations?: boolean;
}

/**
 * The transport the configuration asks for: Kafka when KAFKA_BROKERS is set, else embedded.
 * The Kafka client is imported only when it is asked for: kafkajs cost every process ~5 MB of
 * RSS on a stack that never uses it.
 */
export async function openEventBus(
  config: EventBusConfig,
  logger: Logger,
  work: EventWorkOptions = {},
): Promise<EventBus> {
  if (!config.KAFKA_BROKERS) {
    return await createEmbeddedBus({
      url: config.DATABASE_URL,
      ...(config.MIGRATION_DATABASE_URL
        ? { migrationUrl: config.MIGRATION_DATABASE_URL, role: ROLES.platform }
        : {}),
      logger,
      ...(work.onDemand ? ON_DEMAND_LOOP : {}),
      ...(work.verifyMigrations ? { migrations: "verify" as const } : {}),
    });
  }
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username } = config;
  const password = config.KAFKA_SASL_PASSWORD;
  if ((mechanism || username || password) && !(mechanism && username && password)) {
    throw new ConfigError(
      "Invalid configuration: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD " +
        "must be set together",
    );
  }
  const { createKafkaBus } = await import("./kafka_bus.ts");
  return createKafkaBus({
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    ssl: config.KAFKA_SSL,
    ...(mechanism && username && password ? { sasl: { mechanism, username, password } } : {}),
    logger,
  });
}

export interface ProcessEvents {
  bus: EventBus;
  relay: OutboxRelay;
  /** Stops the relay and its kicks, then closes the bus. */
  stop(): Promise<void>;
}

/**
 * The event side of a process entry (every service and the gateway): its bus, and the relay of
 * its outbox (in `schema`) to its own topic. A bus that cannot be opened stops the process, as a
 * database that cannot be reached does.
 */
export async function startProcessEvents(
  config: EventBusConfig,
  sql: Sql,
  schema: string,
  logger: Logger,
  work: EventWorkOptions = {},
): Promise<ProcessEvents> {
  let bus: EventBus;
  try {
    bus = await openEventBus(config, logger, work);
  } catch (error) {
    logger.error("event bus unavailable at start", { error: String(error) });
    Deno.exit(1);
  }
  const kicks = work.onDemand && config.KICK_URLS?.length && config.INTERNAL_SECRET
    ? kicker(config.KICK_URLS, await importContextKey(config.INTERNAL_SECRET), logger)
    : null;
  const relay = await startOutboxRelay({
    sql,
    schema,
    topic: topicOf(schema),
    bus,
    logger,
    ...(work.onDemand ? ON_DEMAND_LOOP : {}),
    ...(kicks ? { onPublished: () => kicks.kick() } : {}),
  });
  return {
    bus,
    relay,
    async stop() {
      await relay.stop();
      kicks?.stop();
      await bus.close();
    },
  };
}

import { ConfigError } from "../config.ts";
import type { Logger } from "../log.ts";
import type { EventBus } from "./bus.ts";
import { createEmbeddedBus } from "./embedded_bus.ts";
import { createKafkaBus } from "./kafka_bus.ts";

export * from "./bus.ts";
export * from "./catalogue.ts";
export { startOutboxRelay } from "./relay.ts";
export type { OutboxRelay } from "./relay.ts";

export interface EventBusConfig {
  DATABASE_URL: string;
  KAFKA_BROKERS?: string[] | undefined;
  KAFKA_CLIENT_ID: string;
  KAFKA_SSL: boolean;
  KAFKA_SASL_MECHANISM?: "plain" | "scram-sha-256" | "scram-sha-512" | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

/** The transport the configuration asks for: Kafka when KAFKA_BROKERS is set, else embedded. */
export async function openEventBus(config: EventBusConfig, logger: Logger): Promise<EventBus> {
  if (!config.KAFKA_BROKERS) return await createEmbeddedBus({ url: config.DATABASE_URL, logger });
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username } = config;
  const password = config.KAFKA_SASL_PASSWORD;
  if ((mechanism || username || password) && !(mechanism && username && password)) {
    throw new ConfigError(
      "Invalid configuration: KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD " +
        "must be set together",
    );
  }
  return createKafkaBus({
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    ssl: config.KAFKA_SSL,
    ...(mechanism && username && password ? { sasl: { mechanism, username, password } } : {}),
    logger,
  });
}

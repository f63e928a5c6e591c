import {
  type Batch,
  CompressionTypes,
  type Consumer,
  type IHeaders,
  Kafka,
  type KafkaConfig,
  type logCreator,
  logLevel,
  Partitioners,
  type Producer,
  type ProducerConfig,
  type SASLOptions,
} from "kafkajs";
import type { ObservableResult } from "@opentelemetry/api";
import { z } from "zod";
import type { LogFields, Logger } from "../log.ts";
import { consumerLag, type Sample } from "../metrics.ts";
import { sleep } from "../net.ts";
import { batchOrigin, SpanKind, withSpan } from "../telemetry.ts";
import {
  type BusEvent,
  type BusSubscription,
  type EventBus,
  PublishRefusedError,
  type SubscribeOptions,
} from "./bus.ts";

export interface KafkaSaslOptions {
  mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
  username: string;
  password: string;
}

export interface KafkaConsumerTuning {
  sessionTimeout?: number;
  heartbeatInterval?: number;
  maxWaitTimeInMs?: number;
}

export interface KafkaProducerTuning {
  /**
   * On by default, and it should stay on against Kafka. Mokapi 0.52 checks every record of a
   * batch against the producer's last stored sequence number instead of the previous record's,
   * so an idempotent producer's second multi-event batch to a partition is refused there.
   */
  idempotent?: boolean;
}

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  ssl: boolean;
  sasl?: KafkaSaslOptions;
  logger: Logger;
  consumer?: KafkaConsumerTuning;
  producer?: KafkaProducerTuning;
}

const HANDLER_RETRY_FIRST_MS = 200;
const HANDLER_RETRY_MAX_MS = 5000;

/**
 * The kafkajs client configuration for the options. Connection failures are retried briefly
 * only: a publish that cannot reach the broker should fail within seconds, because the outbox
 * relay keeps the events and tries again.
 */
export function kafkaClientConfig(options: KafkaBusOptions): KafkaConfig {
  return {
    clientId: options.clientId,
    brokers: options.brokers,
    ssl: options.ssl,
    ...(options.sasl ? { sasl: saslOptions(options.sasl) } : {}),
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, maxRetryTime: 2000, retries: 3 },
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.logger),
  };
}

/**
 * One in-flight request per connection with acks from all replicas keeps each partition in
 * publish order; idempotence stops a retried request from storing its events twice.
 */
export function kafkaProducerConfig(options: KafkaBusOptions): ProducerConfig {
  return {
    idempotent: options.producer?.idempotent ?? true,
    maxInFlightRequests: 1,
    // Topics are declared by operators (and by the AsyncAPI document for Mokapi).
    allowAutoTopicCreation: false,
    // Java's murmur2 partitioner: an organisation lands on the partition any other Kafka
    // client would choose for it.
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 3 },
  };
}

function saslOptions(sasl: KafkaSaslOptions): SASLOptions {
  const { username, password } = sasl;
  switch (sasl.mechanism) {
    case "plain":
      return { mechanism: "plain", username, password };
    case "scram-sha-256":
      return { mechanism: "scram-sha-256", username, password };
    case "scram-sha-512":
      return { mechanism: "scram-sha-512", username, password };
  }
}

/** Fields of a kafkajs log entry that can be passed on: never values, keys or credentials. */
const LOGGABLE_FIELDS = [
  "broker",
  "clientId",
  "groupId",
  "memberId",
  "topic",
  "partition",
  "offset",
  "error",
  "retryCount",
  "retryTime",
] as const;

function kafkaLogCreator(logger: Logger): logCreator {
  const kafkaLogger = logger.child({ component: "kafkajs" });
  return () => ({ namespace, level, log }) => {
    const fields: LogFields = { namespace };
    for (const name of LOGGABLE_FIELDS) {
      const value: unknown = log[name];
      if (value !== undefined) fields[name] = value instanceof Error ? value.message : value;
    }
    // The outbox relay is the retry layer, so producer retries are bounded on purpose and a
    // duplicate from a relay retry is deduplicated on the event id downstream.
    if (
      log.message === "Limiting retries for the idempotent producer may invalidate EoS guarantees"
    ) {
      kafkaLogger.debug(log.message, fields);
    } else if (level === logLevel.ERROR) {
      kafkaLogger.error(log.message, fields);
    } else if (level === logLevel.WARN) {
      kafkaLogger.warn(log.message, fields);
    } else if (level === logLevel.INFO) {
      kafkaLogger.info(log.message, fields);
    } else {
      kafkaLogger.debug(log.message, fields);
    }
  };
}

/** What travels as the message value: the event without its trace context (a header). */
const EventValue = z.object({
  id: z.string(),
  type: z.string(),
  organizationId: z.string(),
  aggregateId: z.string().nullable(),
  occurredAt: z.string(),
  data: z.unknown(),
});

function encodeEvent(event: BusEvent): {
  key: string;
  value: string;
  headers: Record<string, string>;
} {
  const { id, type, organizationId, aggregateId, occurredAt, data } = event;
  const headers: Record<string, string> = { "event-id": id, "event-type": type };
  if (event.traceparent !== undefined) headers.traceparent = event.traceparent;
  return {
    key: organizationId,
    value: JSON.stringify({ id, type, organizationId, aggregateId, occurredAt, data }),
    headers,
  };
}

const decoder = new TextDecoder();

function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const raw = headers?.[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : decoder.decode(value);
}

/** The event in a message, or undefined if the message does not hold one. */
function decodeEvent(
  value: Uint8Array | null,
  headers: IHeaders | undefined,
): BusEvent | undefined {
  if (value === null) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(value));
  } catch {
    return undefined;
  }
  const parsed = EventValue.safeParse(json);
  if (!parsed.success) return undefined;
  const { id, type, organizationId, aggregateId, occurredAt, data } = parsed.data;
  const event: BusEvent = { id, type, organizationId, aggregateId, occurredAt, data };
  const traceparent = headerText(headers, "traceparent");
  if (traceparent !== undefined) event.traceparent = traceparent;
  return event;
}

/**
 * The event bus on Kafka (kafkajs). Publishing is idempotent and acknowledged by all in-sync
 * replicas; subscribing runs a consumer group that commits a partition's position only after
 * the handler has resolved for the events before it.
 */
export function createKafkaBus(options: KafkaBusOptions): EventBus {
  const logger = options.logger.child({ component: "kafka-bus" });
  const kafka = new Kafka(kafkaClientConfig(options));
  const subscriptions = new Set<BusSubscription>();
  let producer: Promise<Producer> | undefined;
  let closed = false;

  const connectedProducer = (): Promise<Producer> => {
    producer ??= (async () => {
      const created = kafka.producer(kafkaProducerConfig(options));
      await created.connect();
      return created;
    })();
    return producer;
  };

  // After any failure the next publish starts from a new connection and a new producer id,
  // so a restarted broker that lost the producer's sequence numbers does not refuse it.
  const dropProducer = async (): Promise<void> => {
    const failed = producer;
    producer = undefined;
    if (failed === undefined) return;
    try {
      await (await failed).disconnect();
    } catch {
      // It never connected or the connection is already gone.
    }
  };

  const publish = async (topic: string, events: readonly BusEvent[]): Promise<void> => {
    if (closed) throw new Error(`Cannot publish to "${topic}": the Kafka bus is closed`);
    if (events.length === 0) return;
    await withSpan(
      `${topic} publish`,
      {
        "messaging.system": "kafka",
        "messaging.operation.type": "send",
        "messaging.destination.name": topic,
        "messaging.batch.message_count": events.length,
      },
      async () => {
        try {
          const connected = await connectedProducer();
          await connected.send({
            topic,
            acks: -1,
            compression: CompressionTypes.None,
            messages: events.map(encodeEvent),
          });
        } catch (error) {
          await dropProducer();
          const refusal = recordRefusal(error);
          if (refusal) {
            throw new PublishRefusedError(
              `Kafka refused ${events.length} event(s) on "${topic}": ${refusal}`,
              { cause: error },
            );
          }
          throw new Error(`Kafka did not store ${events.length} event(s) on "${topic}"`, {
            cause: error,
          });
        }
      },
      SpanKind.PRODUCER,
      batchOrigin(events.map((event) => event.traceparent)),
    );
  };

  const subscribe = async ({ groupId, topics, handle }: SubscribeOptions): Promise<
    BusSubscription
  > => {
    if (closed) throw new Error(`Cannot subscribe group "${groupId}": the Kafka bus is closed`);
    const log = logger.child({ groupId });
    const consumer: Consumer = kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      ...options.consumer,
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      log.error("Kafka consumer crashed", {
        error: payload.error.message,
        restart: payload.restart,
      });
    });

    // The group's lag per partition, as of each partition's last batch handled here.
    const lag = new Map<string, Sample>();
    const observeLag = (result: ObservableResult): void => {
      for (const { value, attributes } of lag.values()) result.observe(value, attributes);
    };
    consumerLag.addCallback(observeLag);

    let failures = 0;
    const processBatch = async (
      batch: Batch,
      isRunning: () => boolean,
    ): Promise<boolean> => {
      const events: BusEvent[] = [];
      for (const message of batch.messages) {
        const event = decodeEvent(message.value, message.headers);
        if (event === undefined) {
          // Nothing can ever decode it, so retrying would stop the partition for good.
          log.error("Skipped a Kafka message that is not an event", {
            topic: batch.topic,
            partition: batch.partition,
            offset: message.offset,
          });
        } else {
          events.push(event);
        }
      }
      try {
        if (events.length > 0) {
          await withSpan(
            `${batch.topic} receive`,
            {
              "messaging.system": "kafka",
              "messaging.operation.type": "receive",
              "messaging.destination.name": batch.topic,
              "messaging.destination.partition.id": String(batch.partition),
              "messaging.consumer.group.name": groupId,
              "messaging.batch.message_count": events.length,
            },
            () => handle(events, batch.topic),
            SpanKind.CONSUMER,
            batchOrigin(events.map((event) => event.traceparent)),
          );
        }
        failures = 0;
        return true;
      } catch (error) {
        failures += 1;
        const delay = Math.min(HANDLER_RETRY_MAX_MS, HANDLER_RETRY_FIRST_MS * 2 ** (failures - 1));
        log.warn("Event handler failed; the events will be offered again", {
          topic: batch.topic,
          partition: batch.partition,
          offset: batch.firstOffset(),
          retryInMs: delay,
          error,
        });
        const until = Date.now() + delay;
        while (isRunning() && Date.now() < until) await sleep(Math.min(100, until - Date.now()));
        return false;
      }
    };

    await consumer.connect();
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, isRunning }) => {
          // Not resolving a batch leaves the fetch position where it was, so the next fetch
          // offers the same messages again.
          if (!(await processBatch(batch, isRunning))) return;
          // What the partition holds past this batch, as the broker last said (its high mark).
          lag.set(`${batch.topic}\u0000${batch.partition}`, {
            value: Number(batch.offsetLag()),
            attributes: {
              "messaging.consumer.group.name": groupId,
              "messaging.destination.name": batch.topic,
              "messaging.destination.partition.id": String(batch.partition),
            },
          });
          const last = batch.lastOffset();
          resolveOffset(last);
          try {
            await commitOffsetsIfNecessary({
              topics: [{
                topic: batch.topic,
                partitions: [{ partition: batch.partition, offset: String(BigInt(last) + 1n) }],
              }],
            });
          } catch (error) {
            // A later commit covers these events; until then a new member may see them again.
            log.warn("Could not commit Kafka offsets", {
              topic: batch.topic,
              partition: batch.partition,
              error,
            });
          }
        },
      });
    } catch (error) {
      consumerLag.removeCallback(observeLag);
      await consumer.disconnect().catch(() => {});
      throw error;
    }

    let stopped: Promise<void> | undefined;
    const subscription: BusSubscription = {
      stop: () => {
        stopped ??= (async () => {
          subscriptions.delete(subscription);
          consumerLag.removeCallback(observeLag);
          await consumer.disconnect();
        })();
        return stopped;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  };

  return {
    transport: "kafka",
    publish,
    subscribe,
    close: async () => {
      closed = true;
      await Promise.allSettled([...subscriptions].map((s) => s.stop()));
      await dropProducer();
    },
  };
}

/** Broker answers about the records themselves: sending the same records again cannot help. */
const RECORD_REFUSALS = new Set(["INVALID_RECORD", "MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE"]);

/** The broker's reason when it refused the records themselves, found along the cause chain. */
export function recordRefusal(error: unknown): string | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === "string" && RECORD_REFUSALS.has(type)) return `${type}: ${e.message}`;
    // kafkajs wraps the last attempt's error when it gives up retrying.
    const original = (e as { originalError?: unknown }).originalError;
    if (original instanceof Error && original !== e.cause) {
      const inner = recordRefusal(original);
      if (inner) return inner;
    }
  }
  return null;
}

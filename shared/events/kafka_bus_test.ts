import assert from "node:assert/strict";
import { Kafka, logLevel } from "kafkajs";
import { uuidv7 } from "../ids.ts";
import { createLogger, type Logger } from "../log.ts";
import { waitFor } from "../net.ts";
import {
  type Mokapi,
  MOKAPI_CONSUMER_TUNING,
  MOKAPI_PRODUCER_TUNING,
  startMokapi,
} from "../testing/mokapi.ts";
import { asyncApiDocument } from "./asyncapi.ts";
import { type BusEvent, type EventBus, PublishRefusedError, topicOf } from "./bus.ts";
import { EVENT_DEFINITIONS, EVENT_TOPICS } from "./catalogue.ts";
import {
  createKafkaBus,
  type KafkaBusOptions,
  kafkaClientConfig,
  kafkaProducerConfig,
} from "./kafka_bus.ts";
import { defineTransportSuite } from "./transport_suite.ts";

const QUOTES = topicOf("quotes");
const logger = createLogger({ level: "error" });
// For tests that make kafkajs fail on purpose: its errors are expected there.
const silent = createLogger({ level: "error", write: () => {} });

function kafkaBus(mokapi: Mokapi, log: Logger = logger): EventBus {
  return createKafkaBus({
    brokers: mokapi.brokers,
    clientId: `test-${crypto.randomUUID().slice(0, 8)}`,
    ssl: false,
    logger: log,
    consumer: MOKAPI_CONSUMER_TUNING,
    producer: MOKAPI_PRODUCER_TUNING,
  });
}

defineTransportSuite("createKafkaBus()", async () => {
  const mokapi = await startMokapi();
  const bus = kafkaBus(mokapi);
  return {
    bus,
    newBus: () => Promise.resolve(kafkaBus(mokapi)),
    cleanup: async () => {
      await bus.close();
      await mokapi.stop();
    },
  };
});

function quoteDeleted(organizationId: string, extra: Partial<BusEvent> = {}): BusEvent {
  const quoteId = crypto.randomUUID();
  return {
    id: uuidv7(),
    type: "quote.deleted",
    organizationId,
    aggregateId: quoteId,
    occurredAt: new Date().toISOString(),
    data: { id: quoteId },
    ...extra,
  };
}

Deno.test("createKafkaBus() puts the organisation in the key and the id, type and trace in headers", async () => {
  await using mokapi = await startMokapi();
  const bus = kafkaBus(mokapi);
  const org = crypto.randomUUID();
  const traced = quoteDeleted(org, {
    traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  });
  const untraced = quoteDeleted(org);
  const other = quoteDeleted(crypto.randomUUID());
  await bus.publish(QUOTES, [traced, untraced, other]);
  await bus.close();

  const kafka = new Kafka({
    clientId: "raw",
    brokers: mokapi.brokers,
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: "raw-reader", ...MOKAPI_CONSUMER_TUNING });
  const seen: {
    partition: number;
    key: string | undefined;
    value: unknown;
    headers: Record<string, string>;
  }[] = [];
  const text = (value: unknown): string =>
    value instanceof Uint8Array ? new TextDecoder().decode(value) : String(value);
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [QUOTES], fromBeginning: true });
    await consumer.run({
      eachMessage: ({ partition, message }) => {
        seen.push({
          partition,
          key: message.key === null ? undefined : text(message.key),
          value: JSON.parse(text(message.value)),
          headers: Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([name, value]) => [name, text(value)]),
          ),
        });
        return Promise.resolve();
      },
    });
    await waitFor("three messages", () => Promise.resolve(seen.length >= 3), 15_000);
  } finally {
    await consumer.disconnect();
  }

  const byId = new Map(seen.map((m) => [(m.value as { id: string }).id, m]));
  const first = byId.get(traced.id);
  assert.ok(first);
  assert.equal(first.key, org);
  const { traceparent, ...envelope } = traced;
  assert.deepEqual(first.value, envelope, "the value is the event without its trace context");
  assert.equal(first.headers["event-id"], traced.id);
  assert.equal(first.headers["event-type"], "quote.deleted");
  assert.equal(first.headers["traceparent"], traceparent);

  const second = byId.get(untraced.id);
  assert.ok(second);
  assert.equal(second.key, org);
  assert.equal(second.headers["event-id"], untraced.id);
  assert.equal("traceparent" in second.headers, false);
  assert.equal(second.partition, first.partition, "one organisation, one partition");

  assert.equal(byId.get(other.id)?.key, other.organizationId);
});

Deno.test("createKafkaBus() publish rejects an event that breaks its schema (contract with Mokapi)", async () => {
  await using mokapi = await startMokapi();
  const bus = kafkaBus(mokapi, silent);
  try {
    const org = crypto.randomUUID();
    // Refused for good, not "broker down": the relay sets such an event aside instead of
    // retrying it forever in front of every later event.
    await assert.rejects(
      bus.publish(QUOTES, [quoteDeleted(org, { data: { id: "not-a-uuid" } })]),
      (error: unknown) =>
        error instanceof PublishRefusedError &&
        /Kafka refused 1 event\(s\) on "printshop.quotes": INVALID_RECORD/.test(error.message),
    );
    await assert.rejects(bus.publish(QUOTES, [quoteDeleted(org, { type: "quote.exploded" })]));
    await assert.rejects(
      bus.publish(topicOf("gateway"), [quoteDeleted(org)]),
      "an event on another service's topic",
    );
    // A rejection does not poison the bus: a valid event goes through afterwards.
    await bus.publish(QUOTES, [quoteDeleted(org)]);
  } finally {
    await bus.close();
  }
});

Deno.test("createKafkaBus() publish rejects while the broker is down and works once it is back", async () => {
  await using mokapi = await startMokapi();
  const bus = kafkaBus(mokapi, silent);
  try {
    const org = crypto.randomUUID();
    await bus.publish(QUOTES, [quoteDeleted(org)]);

    await mokapi.stop();
    const started = Date.now();
    await assert.rejects(bus.publish(QUOTES, [quoteDeleted(org)]), /Kafka did not store/);
    assert.ok(Date.now() - started < 15_000, "a publish to a dead broker fails within seconds");

    await mokapi.restart();
    const event = quoteDeleted(org);
    await bus.publish(QUOTES, [event]);

    const received: BusEvent[] = [];
    await bus.subscribe({
      groupId: "after-restart",
      topics: [QUOTES],
      handle: (events) => {
        received.push(...events);
        return Promise.resolve();
      },
    });
    await waitFor(
      "the event published after the restart",
      () => Promise.resolve(received.some((e) => e.id === event.id)),
      15_000,
    );
  } finally {
    await bus.close();
  }
});

Deno.test("kafkaClientConfig() and kafkaProducerConfig() configure kafkajs", async (t) => {
  const base: KafkaBusOptions = {
    brokers: ["kafka-1:9093", "kafka-2:9093"],
    clientId: "quotes",
    ssl: false,
    logger,
  };

  await t.step("plaintext without SASL", () => {
    const config = kafkaClientConfig(base);
    assert.deepEqual(config.brokers, ["kafka-1:9093", "kafka-2:9093"]);
    assert.equal(config.clientId, "quotes");
    assert.equal(config.ssl, false);
    assert.equal("sasl" in config, false);
  });

  for (const mechanism of ["plain", "scram-sha-256", "scram-sha-512"] as const) {
    await t.step(`TLS with SASL ${mechanism}`, () => {
      const config = kafkaClientConfig({
        ...base,
        ssl: true,
        sasl: { mechanism, username: "svc-quotes", password: "s3cret-pw" },
      });
      assert.equal(config.ssl, true);
      assert.deepEqual(config.sasl, { mechanism, username: "svc-quotes", password: "s3cret-pw" });
    });
  }

  await t.step("an idempotent producer with one request in flight, never creating topics", () => {
    const config = kafkaProducerConfig(base);
    assert.equal(config.idempotent, true);
    assert.equal(config.maxInFlightRequests, 1);
    assert.equal(config.allowAutoTopicCreation, false);
    assert.equal(
      kafkaProducerConfig({ ...base, producer: MOKAPI_PRODUCER_TUNING }).idempotent,
      false,
    );
  });

  await t.step("kafkajs logs reach our logger without values or passwords", () => {
    const lines: string[] = [];
    const captured: Logger = createLogger({ level: "debug", write: (line) => lines.push(line) });
    const config = kafkaClientConfig({
      ...base,
      sasl: { mechanism: "plain", username: "svc", password: "s3cret-pw" },
      logger: captured,
    });
    assert.equal(config.logLevel, logLevel.WARN);
    const log = config.logCreator!(logLevel.WARN);
    log({
      namespace: "Connection",
      level: logLevel.ERROR,
      label: "ERROR",
      log: {
        timestamp: new Date().toISOString(),
        message: "Response Produce(key: 0, version: 7)",
        broker: "kafka-1:9093",
        error: "This record has failed the validation on broker",
        password: "s3cret-pw",
        sasl: { password: "s3cret-pw" },
        value: '{"secret":"payload"}',
      },
    });
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0]!);
    assert.equal(record.level, "error");
    assert.equal(record.msg, "Response Produce(key: 0, version: 7)");
    assert.equal(record.broker, "kafka-1:9093");
    assert.equal(record.error, "This record has failed the validation on broker");
    assert.doesNotMatch(lines[0]!, /s3cret-pw|payload/);

    // Bounded producer retries are deliberate (the outbox relay retries), so not a warning.
    log({
      namespace: "Producer",
      level: logLevel.WARN,
      label: "WARN",
      log: {
        timestamp: new Date().toISOString(),
        message: "Limiting retries for the idempotent producer may invalidate EoS guarantees",
      },
    });
    assert.equal(JSON.parse(lines[1]!).level, "debug");
  });
});

Deno.test("asyncApiDocument() declares every topic and event with resolvable references", () => {
  const document = asyncApiDocument();
  assert.equal(document.asyncapi, "3.0.0");
  assert.deepEqual(document.servers, { kafka: { host: "localhost:9092", protocol: "kafka" } });
  assert.deepEqual(Object.values(document.channels).map((c) => c.address), [...EVENT_TOPICS]);
  for (const channel of Object.values(document.channels)) {
    assert.equal(channel.bindings.kafka.partitions, 3);
  }
  assert.deepEqual(
    Object.keys(document.components.messages).sort(),
    EVENT_DEFINITIONS.map((d) => d.type).sort(),
  );
  const receives = Object.values(document.operations).filter((o) => o.action === "receive");
  assert.equal(receives.length, EVENT_TOPICS.length);
  for (const operation of receives) {
    assert.deepEqual(operation.bindings, { kafka: { bindingVersion: "0.5.0" } });
  }

  const resolve = (ref: string): unknown =>
    ref.slice(2).split("/").reduce<unknown>(
      (node, part) =>
        typeof node === "object" && node !== null
          ? (node as Record<string, unknown>)[part]
          : undefined,
      document,
    );
  const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(refs.length > EVENT_DEFINITIONS.length);
  for (const ref of refs) {
    assert.ok(ref.startsWith("#/"), `${ref} is not local`);
    assert.notEqual(resolve(ref), undefined, `${ref} does not resolve`);
  }
  // A shared data schema is emitted once and referenced by each message that carries it.
  const created = document.components.messages["quote.created"]!.payload;
  assert.deepEqual((created.properties as Record<string, unknown>).data, {
    $ref: "#/components/schemas/Quote",
  });
});

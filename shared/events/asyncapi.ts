import { type Emitted, type JsonSchema, SCHEMA_REF, SchemaSet } from "../json_schema.ts";
import { EVENT_DEFINITIONS, EVENT_TOPICS, type EventDefinition } from "./catalogue.ts";
import { topicOf } from "./bus.ts";

const KAFKA_BINDING_VERSION = "0.5.0";
export const TOPIC_PARTITIONS = 3;

export interface AsyncApiServerOptions {
  /** `host:port` of a broker. */
  host: string;
  description?: string;
  /** Broker configuration for a Kafka test broker (Mokapi reads these). */
  bindings?: { kafka: Record<string, string | number> };
}

export interface AsyncApiOptions {
  servers?: Record<string, AsyncApiServerOptions>;
}

export interface AsyncApiRef {
  $ref: string;
}

export interface AsyncApiServer extends AsyncApiServerOptions {
  protocol: "kafka";
}

export interface AsyncApiChannel {
  address: string;
  description: string;
  messages: Record<string, AsyncApiRef>;
  bindings: { kafka: { topic: string; partitions: number; bindingVersion: string } };
}

export interface AsyncApiMessage {
  name: string;
  title: string;
  summary: string;
  contentType: "application/json";
  headers: AsyncApiRef;
  payload: JsonSchema;
  bindings: { kafka: { key: JsonSchema; bindingVersion: string } };
}

export interface AsyncApiOperation {
  action: "send" | "receive";
  channel: AsyncApiRef;
  summary: string;
  messages: AsyncApiRef[];
  bindings?: { kafka: { bindingVersion: string } };
}

export interface AsyncApiDocument {
  asyncapi: "3.0.0";
  info: { title: string; version: string; description: string };
  defaultContentType: "application/json";
  servers: Record<string, AsyncApiServer>;
  channels: Record<string, AsyncApiChannel>;
  operations: Record<string, AsyncApiOperation>;
  components: {
    schemas: Record<string, JsonSchema>;
    messages: Record<string, AsyncApiMessage>;
  };
}

const UUID: JsonSchema = { type: "string", format: "uuid" };

/**
 * When the change committed: the bus message's `occurredAt`, which a webhook delivery sends on
 * as its `timestamp` (shared/openapi_webhooks.ts), so both documents describe it from here.
 */
export const OCCURRED_AT: JsonSchema = {
  type: "string",
  format: "date-time",
  description: "RFC 3339 UTC with milliseconds: when the change committed",
};

/** An event's `type`, wherever it is carried: exactly the name it was declared under. */
export function eventTypeSchema(type: string): JsonSchema {
  return { type: "string", const: type };
}

const EVENT_HEADERS: JsonSchema = {
  type: "object",
  properties: {
    "event-id": { ...UUID, description: "The event's id, the same as `id` in the payload" },
    "event-type": { type: "string", description: "The event's type, as `type` in the payload" },
    traceparent: {
      type: "string",
      description: "W3C trace context of the request that caused the event, when there was one",
    },
  },
  required: ["event-id", "event-type"],
};

/**
 * Builds the AsyncAPI 3.0 document of the event bus from the event catalogue: one channel per
 * topic, one message per event type, the services' `send` and the webhooks consumer's `receive`.
 * Data schemas with a `.meta({ id })` become `components/schemas` entries shared by every message
 * that uses them.
 */
export function asyncApiDocument(options: AsyncApiOptions = {}): AsyncApiDocument {
  const { roots, components } = dataSchemas(EVENT_DEFINITIONS);
  const servers: Record<string, AsyncApiServer> = {};
  for (
    const [name, server] of Object.entries(
      options.servers ?? { kafka: { host: "localhost:9092" } },
    )
  ) {
    servers[name] = { ...server, protocol: "kafka" };
  }

  const messages: Record<string, AsyncApiMessage> = {};
  EVENT_DEFINITIONS.forEach((definition, i) => {
    messages[definition.type] = {
      name: definition.type,
      title: definition.type,
      summary: definition.summary,
      contentType: "application/json",
      headers: { $ref: `${SCHEMA_REF}EventHeaders` },
      payload: envelope(definition.type, roots[i]!),
      bindings: {
        kafka: {
          key: { ...UUID, description: "The organisation id: one organisation's events in order" },
          bindingVersion: KAFKA_BINDING_VERSION,
        },
      },
    };
  });

  const channels: Record<string, AsyncApiChannel> = {};
  const operations: Record<string, AsyncApiOperation> = {};
  for (const topic of EVENT_TOPICS) {
    const definitions = EVENT_DEFINITIONS.filter((d) => topicOf(d.service) === topic);
    channels[topic] = {
      address: topic,
      description: `Events of the ${definitions[0]?.service ?? topic} service`,
      messages: Object.fromEntries(
        definitions.map((d) => [d.type, { $ref: `#/components/messages/${d.type}` }]),
      ),
      bindings: {
        kafka: { topic, partitions: TOPIC_PARTITIONS, bindingVersion: KAFKA_BINDING_VERSION },
      },
    };
    const channelMessages = definitions.map((d) => ({
      $ref: `#/channels/${topic}/messages/${d.type}`,
    }));
    operations[`${topic}.send`] = {
      action: "send",
      channel: { $ref: `#/channels/${topic}` },
      summary: "The owning service publishes its outbox",
      messages: channelMessages,
    };
    operations[`${topic}.receive`] = {
      action: "receive",
      channel: { $ref: `#/channels/${topic}` },
      summary: "The webhooks service delivers events to subscribers",
      messages: channelMessages,
      // Without an explicit binding version Mokapi serves consumers of the operation nothing.
      bindings: { kafka: { bindingVersion: KAFKA_BINDING_VERSION } },
    };
  }

  return {
    asyncapi: "3.0.0",
    info: {
      title: "Print Shop events",
      version: "1.0.0",
      description: [
        "Every change a service commits is published from its outbox to the service's topic.",
        "The message key is the organisation id, so one organisation's events stay in order;",
        "the `event-id` header repeats the event id, so consumers can deduplicate on it.",
      ].join(" "),
    },
    defaultContentType: "application/json",
    servers,
    channels,
    operations,
    components: {
      schemas: sortKeys({ ...components, EventHeaders: EVENT_HEADERS }),
      messages,
    },
  };
}

function envelope(type: string, data: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      id: { ...UUID, description: "Unique per event (UUIDv7); deduplicate on it" },
      type: eventTypeSchema(type),
      organizationId: UUID,
      aggregateId: { anyOf: [UUID, { type: "null" }] },
      occurredAt: OCCURRED_AT,
      data,
    },
    required: ["id", "type", "organizationId", "aggregateId", "occurredAt", "data"],
    additionalProperties: false,
  };
}

/**
 * Every definition's `data` schema, converted together so a schema with an id is emitted once as
 * a component and referenced wherever it appears. AsyncAPI schemas are a superset of JSON Schema
 * draft 07.
 */
function dataSchemas(definitions: readonly EventDefinition[]): Emitted {
  const set = new SchemaSet({ io: "output", target: "draft-07", document: "AsyncAPI" });
  for (const definition of definitions) set.add(definition.data);
  return set.emit();
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

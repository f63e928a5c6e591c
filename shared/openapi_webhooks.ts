/**
 * The OpenAPI `webhooks` section: one entry per event an integrator can subscribe to, read from
 * the same declarations as the event catalogue and the AsyncAPI document, so a new or changed
 * event shows here without anything written by hand. What each entry says of the request is
 * what the webhooks service sends (services/webhooks/domain/payload.ts for the body,
 * services/webhooks/delivery/signing.ts for the headers); shared/openapi_webhooks_test.ts holds
 * the two to each other.
 */
import type { EventDefinition } from "./contracts/events.ts";
import { COSTS_READ } from "./scopes.ts";
import { QUOTE_EXAMPLE } from "./contracts/quotes/mod.ts";
import type { SuccessStatus } from "./contracts/operation.ts";
import { EVENT_DEFINITIONS } from "./events/catalogue.ts";
import { eventTypeSchema, OCCURRED_AT } from "./events/asyncapi.ts";
import { asRecord, type JsonSchema, SCHEMA_REF, type SchemaSet } from "./json_schema.ts";
import type { RouteDef } from "./routes.ts";
import type {
  OpenApiParameter,
  OpenApiReference,
  OpenApiRequestBody,
  OpenApiResponse,
  OpenApiSecurityRequirement,
} from "./openapi.ts";

/** What the receiving endpoint is sent for one event type: always a POST. */
export interface OpenApiWebhookOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  /**
   * Always empty: the receiver is sent none of the API's credentials; the signature headers
   * prove where a delivery came from.
   */
  security: OpenApiSecurityRequirement[];
  /** The event's read scope, as `x-required-scope` names an operation's. */
  "x-required-scope": string;
  parameters: OpenApiReference[];
  requestBody: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse>;
}

export type OpenApiWebhooks = Record<string, { post: OpenApiWebhookOperation }>;

/** An event an integrator receives, and where its `data` schema is in the document's set. */
export interface WebhookPlan {
  definition: EventDefinition & { readonly readScope: string };
  /** Index into the emitted roots of the set the data schema was added to. */
  data: number;
}

/** What the document builder lends: its own way of making examples and finding cost fields. */
export interface WebhookTools {
  /**
   * An example of a schema from the examples its parts declare, as the document's operations get
   * theirs; undefined when some required part declares none.
   */
  example(schema: JsonSchema): unknown;
  /** The cost and margin fields the schema contains, at any depth. */
  costFields(schema: JsonSchema): readonly string[];
  /** The document's `components/schemas`, for following a `$ref`. */
  components: Readonly<Record<string, JsonSchema>>;
}

/**
 * `data` examples, by event type, for events whose schema's and operations' examples do not
 * tell the story and `generatedExample` cannot either: the test fails on an event left without
 * an example, and names it. A quote's status change would show the schema's first status at
 * both ends, and the quote's own example in another; built from the quote's example, so a
 * change to Quote shows here too (and the test checks the result against the schema).
 */
export const DECLARED_DATA_EXAMPLES: Readonly<Record<string, unknown>> = {
  "quote.status_changed": {
    from: "draft",
    to: "sent",
    quote: { ...QUOTE_EXAMPLE, status: "sent" },
  },
};

/** The example body's `timestamp`: any instant will do, so one the contracts' examples use. */
const EXAMPLE_TIMESTAMP = "2026-03-02T10:02:44.318Z";

/** The Standard Webhooks headers, under `components/parameters`, by component name. */
export const WEBHOOK_HEADERS: Readonly<Record<string, OpenApiParameter>> = {
  WebhookId: {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id, the same on every attempt and replay of it: deduplicate on it.",
    schema: { type: "string", format: "uuid" },
  },
  WebhookTimestamp: {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was signed, in whole seconds since the Unix epoch; refuse " +
      "one far from your own clock, so a captured delivery cannot be replayed later.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  WebhookSignature: {
    name: "webhook-signature",
    in: "header",
    required: true,
    description: "Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>." +
      "<body>`, keyed with the subscription's `whsec_` secret (the base64 after the prefix, " +
      "decoded); two while a secret is rotated, so accept the delivery if any one matches.",
    // An HMAC-SHA256 is 32 bytes: 43 base64 characters and one `=`.
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$" },
  },
};

const HEADER_REFS: OpenApiReference[] = Object.keys(WEBHOOK_HEADERS).map((name) => ({
  $ref: `#/components/parameters/${name}`,
}));

const RESPONSES: Record<string, OpenApiResponse> = {
  "2XX": {
    description: "Received: any 2xx status ends the delivery. The response body is read and " +
      "ignored.",
  },
  default: {
    description: "Not received: any other status (a redirect is not followed), no answer " +
      "within the delivery timeout, or no connection. The delivery is retried on the " +
      "service's schedule, with a fresh `webhook-timestamp` and signature, and marked failed " +
      "after the last attempt; GET /v1/event-log catches up on what was missed.",
  },
};

/** The events an integrator can subscribe to: every declared one but the platform's own. */
export function integratorEvents(
  definitions: readonly EventDefinition[] = EVENT_DEFINITIONS,
): WebhookPlan["definition"][] {
  return definitions.filter((d): d is WebhookPlan["definition"] => d.readScope !== null);
}

/**
 * Adds each integrator event's data schema to the document's output set (what is sent, as an
 * answer is), so a schema an answer also uses is one shared component.
 */
export function planWebhooks(
  output: SchemaSet,
  definitions: readonly EventDefinition[] = EVENT_DEFINITIONS,
): WebhookPlan[] {
  return integratorEvents(definitions).map((definition) => ({
    definition,
    data: output.add(definition.data),
  }));
}

/** `quote_group.reordered` → `onQuoteGroupReordered`. */
export function webhookOperationId(type: string): string {
  return "on" +
    type.split(/[._]/).map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("");
}

/** The `webhooks` section, in the order the events are declared. */
export function buildWebhooks(
  plans: readonly WebhookPlan[],
  roots: readonly JsonSchema[],
  routes: readonly RouteDef[],
  tools: WebhookTools,
): OpenApiWebhooks {
  const tags = eventTags(plans.map((p) => p.definition), routes);
  const webhooks: OpenApiWebhooks = {};
  for (const { definition, data: index } of plans) {
    const { type, readScope, summary } = definition;
    const data = roots[index]!;
    const schema = deliveryBody(type, data);
    const example = bodyExample(definition, data, answerExample(definition, routes), tools);
    webhooks[type] = {
      post: {
        operationId: webhookOperationId(type),
        summary,
        description: webhookDescription(type, readScope, tools.costFields(data)),
        tags: [tags.get(type)!],
        security: [],
        "x-required-scope": readScope,
        parameters: HEADER_REFS,
        requestBody: {
          description: "The event, as the webhooks service sends it to a subscription's URL",
          required: true,
          content: {
            "application/json": { schema, ...(example === undefined ? {} : { example }) },
          },
        },
        responses: RESPONSES,
      },
    };
  }
  return webhooks;
}

/** The body of a delivery: `{ type, timestamp, data }`, per Standard Webhooks. */
function deliveryBody(type: string, data: JsonSchema): JsonSchema {
  return {
    type: "object",
    description: "A delivery's body, per Standard Webhooks; the event's id is `webhook-id`",
    properties: {
      type: { ...eventTypeSchema(type), description: "The event's name" },
      timestamp: { ...OCCURRED_AT },
      data,
    },
    required: ["type", "timestamp", "data"],
    additionalProperties: false,
  };
}

/**
 * The example body: `data` declared here, else the answer example of an operation that writes
 * the event and answers its very data schema (a create's fresh row for `*.created`), else one
 * made from the schema.
 */
function bodyExample(
  { type }: EventDefinition,
  data: JsonSchema,
  answer: unknown,
  tools: WebhookTools,
): unknown {
  const example = DECLARED_DATA_EXAMPLES[type] ?? answer ?? generatedExample(data, tools);
  return example === undefined ? undefined : { type, timestamp: EXAMPLE_TIMESTAMP, data: example };
}

/** The first answer example of an operation that writes the event and answers its data schema. */
function answerExample(definition: EventDefinition, routes: readonly RouteDef[]): unknown {
  for (const route of routes) {
    if (!(route.events as readonly string[] | undefined)?.includes(definition.type)) continue;
    for (const [status, schema] of Object.entries(route.responses)) {
      const example = route.examples?.responses?.[Number(status) as SuccessStatus];
      if (schema === definition.data && example !== undefined) return example;
    }
  }
  return undefined;
}

/**
 * Strings tried, in order, for a `pattern` with no `format`: one for each pattern the contracts
 * use (a date, a colour, a media type, a SHA-256), then plain words.
 */
const PATTERN_CANDIDATES = [
  "2026-03-02",
  "#1A2B3C",
  "image/png",
  "0".repeat(64),
  "example",
  "EXAMPLE-1",
];

const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  "date-time": EXAMPLE_TIMESTAMP,
  date: EXAMPLE_TIMESTAMP.slice(0, 10),
  email: "sam@example.com",
  uri: "https://example.com/",
};

/**
 * An example of a schema: the examples its parts declare wherever they have them (so an event
 * whose data is a resource shows the resource's own example), and elsewhere a value made from
 * the schema's constraints. Deterministic, so the served document does not change between
 * builds; undefined when some required part defeats it (a pattern none of the candidates
 * matches), which the test reports.
 */
export function generatedExample(schema: JsonSchema, tools: WebhookTools): unknown {
  // UUIDv7-shaped and distinct within one example, so ids that must differ do.
  let uuids = 0;
  const uuid = (): string => `0193a1b2-0000-7000-8000-${String(++uuids).padStart(12, "0")}`;

  const make = (node: JsonSchema, refs: ReadonlySet<string>): unknown => {
    const declared = tools.example(node);
    if (declared !== undefined) return declared;
    const ref = node.$ref;
    if (typeof ref === "string") {
      if (refs.has(ref)) return undefined; // recursive: no finite example of this branch
      const target = ref.startsWith(SCHEMA_REF)
        ? tools.components[ref.slice(SCHEMA_REF.length)]
        : undefined;
      return target === undefined ? undefined : make(target, new Set([...refs, ref]));
    }
    if ("const" in node) return node.const;
    if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
    const branches = [
      ...(Array.isArray(node.anyOf) ? node.anyOf : []),
      ...(Array.isArray(node.oneOf) ? node.oneOf : []),
    ].map(asRecord);
    if (branches.length > 0) {
      for (const branch of branches) {
        if (branch.type === "null") continue;
        const value = make(branch, refs);
        if (value !== undefined) return value;
      }
      return branches.some((b) => b.type === "null") ? null : undefined;
    }
    const types = Array.isArray(node.type) ? node.type : [node.type];
    const type = types.find((t) => t !== "null") ?? types[0];
    switch (type) {
      case "object": {
        const required = new Set(Array.isArray(node.required) ? node.required : []);
        const value: Record<string, unknown> = {};
        for (const [name, property] of Object.entries(asRecord(node.properties))) {
          const part = make(asRecord(property), refs);
          if (part !== undefined) value[name] = part;
          else if (required.has(name)) return undefined;
        }
        return value;
      }
      case "array": {
        const item = make(asRecord(node.items), refs);
        if (item === undefined) return typeof node.minItems === "number" ? undefined : [];
        return Array.from({ length: Math.max(1, Number(node.minItems ?? 1)) }, () => item);
      }
      case "string":
        return exampleString(node, uuid);
      case "integer":
      case "number":
        return exampleNumber(node, type);
      case "boolean":
        return false;
      case "null":
        return null;
      default:
        return undefined;
    }
  };
  return make(schema, new Set());
}

function exampleString(schema: JsonSchema, uuid: () => string): string | undefined {
  const format = typeof schema.format === "string" ? schema.format : undefined;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  if (format === "uuid") return uuid();
  if (format !== undefined && format in FORMAT_EXAMPLES) return FORMAT_EXAMPLES[format];
  const pattern = typeof schema.pattern === "string" ? new RegExp(schema.pattern, "u") : null;
  return PATTERN_CANDIDATES.map((word) => word.length < min ? word.padEnd(min, "x") : word)
    .find((word) => word.length <= max && (pattern === null || pattern.test(word)));
}

function exampleNumber(schema: JsonSchema, type: "integer" | "number"): number | undefined {
  const step = type === "integer" ? 1 : 0.01;
  let value = typeof schema.minimum === "number"
    ? schema.minimum
    : typeof schema.exclusiveMinimum === "number"
    ? schema.exclusiveMinimum + step
    : 1;
  if (typeof schema.maximum === "number") value = Math.min(value, schema.maximum);
  if (typeof schema.exclusiveMaximum === "number") {
    value = Math.min(value, schema.exclusiveMaximum - step);
  }
  if (type === "integer") value = Math.ceil(value);
  if (typeof schema.multipleOf === "number") {
    value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  }
  return value;
}

function webhookDescription(
  type: string,
  readScope: string,
  costFields: readonly string[],
): string {
  const costs = costFields.length === 0
    ? ""
    : ` Its cost and margin fields (${
      costFields.map((f) => `\`${f}\``).join(", ")
    }) are sent only if the subscribing credential holds \`${COSTS_READ}\` as well.`;
  return `Sent to every subscription to \`${type}\` (POST /v1/webhooks); subscribing needs scope ` +
    `\`${readScope}\`.${costs} Each delivery is signed per Standard Webhooks with the ` +
    "`webhook-id`, `webhook-timestamp` and `webhook-signature` headers: check the signature " +
    "over the raw body before trusting it, and deduplicate on `webhook-id`.";
}

/**
 * Each event's tag: the one most of the operations that write events of its resource (the
 * part of the type before the dot) are listed under, so `quote_variant.*` sits with the quote
 * lines that write them; for a resource no operation writes (a page writes `proof.viewed`),
 * the tag most operations needing its read scope use.
 */
function eventTags(
  definitions: readonly WebhookPlan["definition"][],
  routes: readonly RouteDef[],
): Map<string, string> {
  const resourceOf = (type: string): string => type.slice(0, type.indexOf("."));
  const byResource = new Map<string, string[]>();
  for (const route of routes) {
    for (const type of route.events ?? []) {
      const tags = byResource.get(resourceOf(type)) ?? [];
      tags.push(route.tag);
      byResource.set(resourceOf(type), tags);
    }
  }
  const tags = new Map<string, string>();
  for (const { type, readScope } of definitions) {
    const tag = mostCommon(byResource.get(resourceOf(type)) ?? []) ??
      mostCommon(routes.filter((r) => r.scope === readScope).map((r) => r.tag)) ??
      // A route table without the event's area (a test's): the event log lists every event.
      "Events";
    tags.set(type, tag);
  }
  return tags;
}

/** The most frequent value; a tie goes to the one seen first. */
function mostCommon(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  let best: string | undefined;
  for (const [value, count] of counts) {
    if (best === undefined || count > counts.get(best)!) best = value;
  }
  return best;
}

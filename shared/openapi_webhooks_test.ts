/**
 * The document's `webhooks`: every event an integrator can subscribe to, declared anywhere under
 * shared/contracts, is there once and platform events are not; every entry's example is valid
 * against its schema; and what the entries say of the body and headers is what the webhooks
 * service sends.
 */
import assert from "node:assert/strict";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { closedSchema, documentValidator, validatorOf } from "./testing/document_validator.ts";
import { z } from "zod";
import type { EventDefinition } from "./contracts/events.ts";
import {
  buildOpenApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiParameter,
} from "./openapi.ts";
import {
  generatedExample,
  integratorEvents,
  webhookOperationId,
  type WebhookTools,
} from "./openapi_webhooks.ts";
// What the webhooks service sends, so the document is held to the sender rather than to itself.
import { deliveryBody } from "../services/webhooks/domain/payload.ts";
import { signatureHeaders } from "../services/webhooks/delivery/signing.ts";

// The JSON text clients receive, not the in-memory object.
const doc: OpenApiDocument = JSON.parse(JSON.stringify(buildOpenApiDocument()));
const CONTRACTS = new URL("./contracts/", import.meta.url);

interface Declared {
  definition: EventDefinition;
  /** The module and export that declares it. */
  where: string;
}

function isEventDefinition(value: unknown): value is EventDefinition {
  if (typeof value !== "object" || value === null) return false;
  const d = value as Record<string, unknown>;
  return typeof d.type === "string" && typeof d.service === "string" &&
    (d.readScope === null || typeof d.readScope === "string") &&
    typeof d.summary === "string" && d.data instanceof z.ZodType;
}

/** Every non-test module under `dir`, as a path. */
function* modulesUnder(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* modulesUnder(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
  }
}

const DEFINE_EVENTS = /=\s*defineEvents\(/g;

/**
 * Every event declared under shared/contracts, found by loading each module that calls
 * `defineEvents` rather than through platform.ts, so a group the platform list forgets counts.
 */
async function declaredEvents(): Promise<{ events: Declared[]; groups: number; calls: number }> {
  const events: Declared[] = [];
  const seen = new Set<EventDefinition>();
  let groups = 0;
  let calls = 0;
  for (const path of modulesUnder(fileURLToPath(CONTRACTS).replace(/\/$/, ""))) {
    const declares = (Deno.readTextFileSync(path).match(DEFINE_EVENTS) ?? []).length;
    if (declares === 0) continue; // mod.ts and platform.ts merge groups; they declare none
    calls += declares;
    const module: Record<string, unknown> = await import(pathToFileURL(path).href);
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== "object" || value === null) continue;
      // A group: an object of definitions keyed by their own types.
      const entries = Object.entries(value);
      if (
        entries.length === 0 || !entries.every(([k, d]) => isEventDefinition(d) && d.type === k)
      ) {
        continue;
      }
      groups++;
      for (const [, d] of entries as [string, EventDefinition][]) {
        if (seen.has(d)) continue;
        seen.add(d);
        events.push({ definition: d, where: `${path.split("/contracts/")[1]}#${name}` });
      }
    }
  }
  return { events, groups, calls };
}

/** Each `[where, problem]` of values that fail their schema. */
function invalid(ajv: Ajv2020, schema: JsonSchema, values: [string, unknown][]): string[] {
  const validate = ajv.compile(closedSchema(schema) as object);
  return values.flatMap(([where, value]) =>
    validate(value) ? [] : [`${where}: ${ajv.errorsText(validate.errors, { separator: "; " })}`]
  );
}

function headerParameter(name: string): OpenApiParameter {
  const found = Object.values(doc.components.parameters).find((p) => p.name === name);
  assert.ok(found, `no ${name} parameter`);
  return found;
}

Deno.test("every integrator event declared under shared/contracts is a webhook, once; platform events are not", async () => {
  const { events, groups, calls } = await declaredEvents();
  assert.equal(groups, calls, "every defineEvents group is exported and found");
  assert.ok(events.length > 40, `only ${events.length} events found`);
  const seen = new Map<string, string>();
  for (const { definition, where } of events) {
    const first = seen.get(definition.type);
    assert.equal(first, undefined, `${definition.type} is declared in ${first} and ${where}`);
    seen.set(definition.type, where);
  }
  const integrator = events.filter((e) => e.definition.readScope !== null)
    .map((e) => e.definition.type);
  const platform = events.filter((e) => e.definition.readScope === null)
    .map((e) => e.definition.type);
  assert.ok(platform.length > 0, "the gateway's platform events are found too");
  assert.deepEqual(Object.keys(doc.webhooks).sort(), [...integrator].sort());
  for (const type of platform) assert.equal(doc.webhooks[type], undefined, type);
  assert.deepEqual(integratorEvents().map((d) => d.type).sort(), [...integrator].sort());
});

Deno.test("every webhook is a POST with a stable operationId, its summary, tag, scope and the signature headers", () => {
  const pathIds = Object.values(doc.paths).flatMap((item) =>
    Object.values(item).map((o) => o.operationId)
  );
  const ids = new Set(pathIds);
  const tags = new Set(doc.tags.map((t) => t.name));
  for (const definition of integratorEvents()) {
    const item = doc.webhooks[definition.type]!;
    assert.deepEqual(Object.keys(item), ["post"], definition.type);
    const { post } = item;
    assert.equal(post.operationId, webhookOperationId(definition.type));
    assert.match(post.operationId, /^on[A-Z][A-Za-z]+$/);
    assert.ok(!ids.has(post.operationId), `${post.operationId} is used twice`);
    ids.add(post.operationId);
    assert.equal(post.summary, definition.summary);
    assert.equal(post.tags.length, 1);
    assert.ok(tags.has(post.tags[0]!), `${definition.type}: tag ${post.tags[0]} is not declared`);
    assert.equal(post["x-required-scope"], definition.readScope);
    assert.ok(post.description.includes(`\`${definition.readScope}\``), definition.type);
    for (const header of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      assert.ok(post.description.includes(header), `${definition.type}: ${header}`);
    }
    const headers = post.parameters.map((ref) =>
      doc.components.parameters[ref.$ref.split("/").pop()!]!
    );
    assert.deepEqual(
      headers.map((h) => [h.name, h.in, h.required]),
      [
        ["webhook-id", "header", true],
        ["webhook-timestamp", "header", true],
        ["webhook-signature", "header", true],
      ],
    );
    assert.ok(Object.keys(post.responses).some((status) => /^2/.test(status)));
    assert.ok(post.responses.default?.description.includes("retried"));
  }
  assert.equal(webhookOperationId("quote.created"), "onQuoteCreated");
  assert.equal(
    webhookOperationId("proof_item_link.size_split_confirmed"),
    "onProofItemLinkSizeSplitConfirmed",
  );
  assert.equal(doc.webhooks["quote_variant.created"]?.post.tags[0], "Quote lines");
});

Deno.test("every webhook's body is { type, timestamp, data }, with the event's own data schema", () => {
  for (const definition of integratorEvents()) {
    const media = doc.webhooks[definition.type]!.post.requestBody.content["application/json"]!;
    const properties = media.schema.properties as Record<string, JsonSchema>;
    assert.deepEqual(Object.keys(properties), ["type", "timestamp", "data"]);
    assert.equal(properties.type!.const, definition.type);
    assert.equal(properties.timestamp!.format, "date-time");
    // Converted as answers are: a data schema with an id is a shared component.
    const id = z.globalRegistry.get(definition.data)?.id;
    if (id !== undefined) {
      assert.deepEqual(properties.data, { $ref: `#/components/schemas/${id}` }, definition.type);
      assert.ok(doc.components.schemas[id], `component ${id}`);
    }
  }
});

Deno.test("every webhook has an example, valid against its schema with and without cost fields", () => {
  const ajv = documentValidator(doc);
  const problems: string[] = [];
  for (const definition of integratorEvents()) {
    const media = doc.webhooks[definition.type]!.post.requestBody.content["application/json"]!;
    const where = `#/webhooks/${definition.type}`;
    if (media.example === undefined) {
      problems.push(`${where}: no example; declare one in DECLARED_DATA_EXAMPLES`);
      continue;
    }
    const example = media.example as { type: string; timestamp: string; data: unknown };
    // The body as the webhooks service sends it to a subscriber with, and without, costs.read.
    const event = { type: example.type, occurredAt: example.timestamp, data: example.data };
    problems.push(...invalid(ajv, media.schema, [
      [`${where}/example`, example],
      [`${where} as sent with costs.read`, JSON.parse(deliveryBody(event, true))],
      [`${where} as sent without costs.read`, JSON.parse(deliveryBody(event, false))],
    ]));
    assert.deepEqual(JSON.parse(deliveryBody(event, true)), example, where);
  }
  assert.deepEqual(problems, [], `\n${problems.join("\n")}`);
});

Deno.test("the example check above refuses a misspelt field, another event's type and a bad value", () => {
  const broken = structuredClone(doc);
  const media = broken.webhooks["quote.deleted"]!.post.requestBody.content["application/json"]!;
  const example = media.example as { data: Record<string, unknown> };
  const ajv = documentValidator(broken);
  const problems = invalid(ajv, media.schema, [
    ["misspelt", { ...example, data: { ...example.data, idd: "x" } }],
    ["type", { ...example, type: "quote.created" }],
    ["uuid", { ...example, data: { ...example.data, id: "not-a-uuid" } }],
  ]);
  assert.deepEqual(problems.map((p) => p.split(":")[0]), ["misspelt", "type", "uuid"]);
});

Deno.test("the signature headers the service sends match the header parameters", () => {
  const ajv = documentValidator(doc);
  const body = JSON.stringify(
    doc.webhooks["quote.created"]!.post.requestBody.content["application/json"]!.example,
  );
  const secret = (fill: number): string =>
    `whsec_${btoa(String.fromCharCode(...Array(32).fill(fill)))}`;
  for (const secrets of [[secret(1)], [secret(1), secret(2)]]) {
    const headers = signatureHeaders({
      id: "0193a1b2-f1e0-7d3c-a2b1-908f7e6d5c4b",
      timestamp: new Date("2026-03-02T10:02:44.318Z"),
      body,
      secrets,
    });
    assert.deepEqual(Object.keys(headers).sort(), [
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
    for (const [name, value] of Object.entries(headers)) {
      const problems = invalid(ajv, headerParameter(name).schema, [[name, value]]);
      assert.deepEqual(problems, [], problems.join("\n"));
    }
  }
});

Deno.test("generatedExample() makes a valid value from formats, bounds, patterns and branches", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      id: { type: "string", format: "uuid" },
      parentId: { type: "string", format: "uuid" },
      at: { type: "string", format: "date-time" },
      email: { type: "string", format: "email" },
      url: { type: "string", format: "uri" },
      day: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
      colour: { type: "string", pattern: "^#[0-9A-Fa-f]{6}$" },
      digest: { type: "string", pattern: "^[0-9a-f]{64}$" },
      code: { type: "string", minLength: 10, maxLength: 12 },
      status: { type: "string", enum: ["draft", "sent"] },
      quantity: { type: "integer", minimum: 5, maximum: 9 },
      price: { type: "number", exclusiveMinimum: 0 },
      note: { anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }] },
      owner: { oneOf: [{ $ref: "#/components/schemas/Owner" }, { type: "null" }] },
      tags: { type: "array", items: { type: "string" }, minItems: 2 },
      flag: { type: "boolean" },
      nothing: { type: "null" },
    },
    required: ["id", "parentId", "at", "day", "colour", "digest", "code", "quantity", "owner"],
    additionalProperties: false,
  };
  const components = {
    Owner: {
      type: "object",
      properties: { name: { type: "string", examples: ["Sam"] } },
      required: ["name"],
    },
  };
  const tools: WebhookTools = {
    example: (s) => Array.isArray(s.examples) ? s.examples[0] : undefined,
    costFields: () => [],
    components,
  };
  const value = generatedExample(schema, tools) as Record<string, unknown>;
  assert.deepEqual(value, generatedExample(schema, tools), "deterministic");
  assert.notEqual(value.id, value.parentId);
  assert.deepEqual(value.owner, { name: "Sam" });
  const ajv = validatorOf(components);
  const problems = invalid(ajv, schema, [["generated", value]]);
  assert.deepEqual(problems, [], problems.join("\n"));
  assert.equal(
    generatedExample({ type: "string", pattern: "^zz$" }, tools),
    undefined,
    "a pattern no candidate fits gives no example rather than a wrong one",
  );
});

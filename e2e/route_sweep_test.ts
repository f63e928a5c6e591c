/**
 * The project-wide sweep: every operation of the route table, called through the real gateway
 * and services by two organisations that each hold every scope, with the cases derived from its
 * declaration (path, scope, query and body schemas), not written per operation:
 *
 * - bad input: malformed JSON, a non-object body, each body field with a wrong JSON type, out of
 *   its bounds, with NUL or a lone surrogate, an unknown field, a path id that is not a UUID, an
 *   unknown or repeated query parameter, bad paging values, a body nested 10,000 deep → a 4xx
 *   error envelope naming what is wrong, never a 5xx, a stack trace, SQL or a hang;
 * - other tenants: organisation B names A's ids (in the path, and in each body field that names
 *   another resource) → answered exactly as an unknown id, and nothing of A's changes;
 * - scopes: a key lacking exactly the operation's scope → 403 naming it; a cost or margin field
 *   without costs.read → 403;
 * - nothing written: after all of it, both organisations' data and every outbox are as before;
 * - documented: every answer the sweep receives is held to `/openapi.json` as the gateway serves
 *   it (its status listed for the operation aimed at, its body valid, its error code one listed
 *   for that status), the refusals that come before an operation is chosen included: an
 *   over-long URL, an over-large header block, a declared compressed body, an undecodable id.
 *
 * A route the sweep cannot cover (a path parameter without a fixture, a body that cannot be
 * made valid, a body field naming a resource the sweep does not know) fails the sweep by name;
 * the small tables below are the only per-resource knowledge it has.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { z } from "zod";
import { type RouteDef, ROUTES, RouteTable } from "@printshop/shared/routes";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { COSTS_READ_FIELDS } from "@printshop/shared/costs";
import { connect } from "@printshop/shared/db";
import {
  startTestStack,
  startWebhookReceiver,
  type Tenant,
  type TestStack,
} from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";
import { ConfigSchema } from "../gateway/config.ts";
import { createResponseChecker, type ResponseChecker } from "../gateway/response_checks.ts";

type Json = Record<string, unknown>;
type JsonSchema = Json;

/** The ids one organisation owns, by the path parameter (or body field) that names them. */
interface Fixture {
  quoteId: string;
  groupId: string;
  lineId: string;
  variantId: string;
  decorationId: string;
  markupGroupId: string;
  setupMarkupGroupId: string;
  taxRateId: string;
  webhookId: string;
  deliveryId: string;
  catalogueItemId: string;
  garmentVariantId: string;
  prebuiltItemId: string;
  customerId: string;
  customerContactId: string;
  customerAddressId: string;
  fieldId: string;
  vendorId: string;
  vendorContactId: string;
  vendorAddressId: string;
  taskId: string;
  checklistItemId: string;
  commentId: string;
  attachmentId: string;
  mockId: string;
  proofId: string;
  proofItemLinkId: string;
}

/** Path parameter → the fixture that supplies it. A new parameter without one fails the sweep. */
const PARAM_FIXTURES: Record<string, keyof Fixture> = {
  quoteId: "quoteId",
  groupId: "groupId",
  lineId: "lineId",
  variantId: "variantId",
  decorationId: "decorationId",
  markupGroupId: "markupGroupId",
  webhookId: "webhookId",
  deliveryId: "deliveryId",
  catalogueItemId: "catalogueItemId",
  garmentVariantId: "garmentVariantId",
  prebuiltItemId: "prebuiltItemId",
  customerId: "customerId",
  customerContactId: "customerContactId",
  customerAddressId: "customerAddressId",
  fieldId: "fieldId",
  vendorId: "vendorId",
  vendorContactId: "vendorContactId",
  vendorAddressId: "vendorAddressId",
  taskId: "taskId",
  checklistItemId: "checklistItemId",
  commentId: "commentId",
  attachmentId: "attachmentId",
  mockId: "mockId",
  proofId: "proofId",
  proofItemLinkId: "proofItemLinkId",
};

/**
 * Body fields that name another resource: each is sent by B with A's id and must be refused.
 * A UUID field in neither table fails the sweep until it is placed in one.
 */
const REFERENCE_FIELDS: Record<string, keyof Fixture> = {
  markupGroupId: "markupGroupId",
  setupMarkupGroupId: "setupMarkupGroupId",
  taxRateId: "taxRateId",
  garmentCatalogueItemId: "catalogueItemId",
  clientId: "customerId",
  contactId: "customerContactId",
  shippingAddressId: "customerAddressId",
  defaultMarkupGroupId: "markupGroupId",
  customerId: "customerId",
  vendorId: "vendorId",
  supplierVendorId: "vendorId",
  quoteId: "quoteId",
  mockId: "mockId",
  quoteGroupId: "groupId",
  quoteLineId: "lineId",
  mockIds: "mockId",
  proofIds: "proofId",
};
/** UUID body fields whose resource belongs to a service not built yet: nothing to resolve. */
const UNRESOLVED_REFERENCES: Record<string, string> = {
  decorationItemId: "a decoration catalogue item (no service keeps decoration items yet)",
  jobId: "a production job (no service keeps jobs yet)",
  ids: "a bulk target's rows: another organisation's are outcomes failed/not_found, by design",
  excludeIds: "rows a bulk target leaves out: another organisation's change nothing",
};

/**
 * Reference fields an operation keeps without resolving, because the resource lives in another
 * service whose tables it may not read (it would learn the ids from that service's events).
 */
const QUOTE_CUSTOMER_REFERENCES = {
  clientId: "a CRM customer, kept by the CRM service",
  contactId: "a CRM contact, kept by the CRM service",
  shippingAddressId: "a CRM address, kept by the CRM service",
  mockId: "a mock, kept by the proofs service",
};
const PROOF_QUOTE_REFERENCES = {
  quoteId: "a quote, kept by the quotes service",
  quoteGroupId: "a quote group, kept by the quotes service",
  quoteLineId: "a quote line, kept by the quotes service",
};
const CUSTOMER_MARKUP_REFERENCE = { defaultMarkupGroupId: "a markup group, kept by quotes" };
const TASK_QUOTE_REFERENCE = { quoteId: "a quote, kept by the quotes service" };
const ITEM_VENDOR_REFERENCE = { supplierVendorId: "a CRM vendor, kept by the CRM service" };
const CROSS_SERVICE_REFERENCES: Record<string, Record<string, string>> = {
  createQuote: QUOTE_CUSTOMER_REFERENCES,
  updateQuote: QUOTE_CUSTOMER_REFERENCES,
  createCustomer: CUSTOMER_MARKUP_REFERENCE,
  updateCustomer: CUSTOMER_MARKUP_REFERENCE,
  createMock: PROOF_QUOTE_REFERENCES,
  updateMock: PROOF_QUOTE_REFERENCES,
  createProof: PROOF_QUOTE_REFERENCES,
  updateProof: PROOF_QUOTE_REFERENCES,
  createProofItemLink: PROOF_QUOTE_REFERENCES,
  updateProofItemLink: PROOF_QUOTE_REFERENCES,
  createTask: TASK_QUOTE_REFERENCE,
  updateTask: TASK_QUOTE_REFERENCE,
  createCatalogueItem: ITEM_VENDOR_REFERENCE,
  updateCatalogueItem: ITEM_VENDOR_REFERENCE,
  createQuoteLine: { garmentCatalogueItemId: "a catalogue item, kept by the catalogue service" },
  updateQuoteLine: { garmentCatalogueItemId: "a catalogue item, kept by the catalogue service" },
};

/**
 * Valid bodies the schema alone cannot give (a value whose meaning is another resource, or a
 * rule across fields). Everything else is generated from the body schema's required fields.
 */
const VALID_BODIES: Partial<Record<string, (ids: Fixture, receiverUrl: string) => unknown>> = {
  createWebhook: (_ids, url) => ({ url, event: "quote.updated" }),
  updateWebhook: (_ids, url) => ({ url: `${url}/moved` }),
  createMock: (ids) => ({ name: "Sweep", quoteId: ids.quoteId }),
  createProof: (ids) => proofBody(ids.quoteId),
  reviseProof: () => ({ imageUrls: ["https://files.example.com/sweep-2.png"] }),
  createTaskAttachment: () => ({
    fileUrl: "https://files.example.com/sweep.pdf",
    filename: "sweep.pdf",
    mimeType: "application/pdf",
    sizeBytes: 1,
  }),
  bulkSetCustomerTier: (ids) => ({ target: { ids: [ids.customerId] }, tier: "gold" }),
  bulkTagCustomers: (ids) => ({ target: { ids: [ids.customerId] }, add: ["sweep"] }),
  bulkArchiveCustomers: (ids) => ({ target: { ids: [ids.customerId] }, archived: false }),
  bulkDeletePrebuiltItems: (ids) => ({ target: { ids: [ids.prebuiltItemId] } }),
  bulkSetPrebuiltItemStatus: (ids) => ({ target: { ids: [ids.prebuiltItemId] }, status: "draft" }),
  bulkCreateGarmentVariants: (ids) => ({
    input: [{ garmentCatalogueItemId: ids.catalogueItemId, color: "Sweep", size: "XL" }],
  }),
  reorderQuoteGroup: (ids) => ({
    items: [{ id: ids.lineId, kind: "line" }, { id: ids.decorationId, kind: "decoration" }],
  }),
};

/** A proof the sweep can send decisions, revisions and deletes at: one image, one item. */
function proofBody(quoteId: string): Json {
  return {
    quoteId,
    recipientName: "Sweep",
    recipientEmail: "sweep@example.com",
    imageUrls: ["https://files.example.com/sweep.png"],
    items: [{ description: "Sweep" }],
  };
}

const REQUEST_TIMEOUT_MS = 15_000;
let requests = 0;
const DEEP = 10_000;

/** The edge's limits on a request head: its configuration's defaults, pinned for this stack. */
const EDGE_LIMITS = {
  MAX_URL_BYTES: ConfigSchema.shape.MAX_URL_BYTES.parse(undefined),
  MAX_HEADER_BYTES: ConfigSchema.shape.MAX_HEADER_BYTES.parse(undefined),
};

const ROUTE_TABLE = new RouteTable();
/** `/openapi.json` as the stack's gateway serves it; read before the sweep's first request. */
let published: ResponseChecker | null = null;

/** A zod schema as JSON Schema: the root (for its `$defs`) and the object itself. */
function toSchema(schema: z.ZodType): JsonSchema {
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  // A schema with an id is written as a `$ref` into `$defs`; keep `$defs` beside what it names.
  return { ...deref(root, root), $defs: root.$defs };
}

/** Resolves local `$ref`s of a zod-made JSON Schema (its `$defs`). */
function deref(root: JsonSchema, schema: JsonSchema): JsonSchema {
  let at = schema;
  while (typeof at.$ref === "string") {
    const name = at.$ref.replace(/^#\/\$defs\//, "");
    at = (root.$defs as Record<string, JsonSchema>)[name]!;
  }
  return at;
}

/** The non-null variants of a property schema (zod writes nullable as anyOf with null). */
function branches(root: JsonSchema, schema: JsonSchema): JsonSchema[] {
  const s = deref(root, schema);
  const list = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (list) return list.flatMap((b) => branches(root, b)).filter((b) => b.type !== "null");
  return [s];
}

function accepts(root: JsonSchema, schema: JsonSchema, type: string): boolean {
  const s = deref(root, schema);
  const list = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (list) return list.some((b) => accepts(root, b, type));
  if (s.type === undefined) return s.const === undefined && s.enum === undefined;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  // JSON has one number type: an integer field takes the number 12345 too.
  return types.includes(type) || (type === "integer" && types.includes("number")) ||
    (type === "number" && types.includes("integer"));
}

/** A body field that names another resource, and where it sits (`input.0.garmentCatalogueItemId`). */
interface ReferencePath {
  field: string;
  path: (string | number)[];
}

/** The UUID fields of a body at any depth (in objects, and in the first row of arrays). */
function referencePaths(
  root: JsonSchema,
  schema: JsonSchema,
  prefix: (string | number)[] = [],
): ReferencePath[] {
  const found: ReferencePath[] = [];
  for (const s of branches(root, schema)) {
    for (
      const [field, prop] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)
    ) {
      const kinds = branches(root, prop);
      // A row's own id (the rows a reorder lists) is checked by that operation's own step.
      if (prefix.length > 0 && field === "id") continue;
      if (kinds.some((k) => k.format === "uuid")) {
        found.push({ field, path: [...prefix, field] });
        continue;
      }
      if (prefix.length > 4) continue;
      for (const kind of kinds) {
        if (kind.type === "object") found.push(...referencePaths(root, kind, [...prefix, field]));
        if (kind.type === "array" && kind.items) {
          const row = deref(root, kind.items as JsonSchema);
          if (row.type === "object") {
            found.push(...referencePaths(root, row, [...prefix, field, 0]));
          }
          // A list of ids (a revision's mocks): its first entry names the resource.
          if (row.format === "uuid") found.push({ field, path: [...prefix, field, 0] });
        }
      }
    }
  }
  return found;
}

/**
 * `body` with `value` at `path`. A list of ids the body does not have yet is started (a proof's
 * `mockIds`); null when another parent is missing (a row the valid body has none of).
 */
function withValueAt(body: unknown, path: (string | number)[], value: unknown): unknown | null {
  const copy = structuredClone(body) as Json;
  let at = copy as Record<string | number, unknown>;
  for (const [i, key] of path.slice(0, -1).entries()) {
    if (at[key] === undefined && i === path.length - 2 && typeof path.at(-1) === "number") {
      at[key] = [];
    }
    const next = at[key];
    if (next === null || typeof next !== "object") return null;
    at = next as Record<string | number, unknown>;
  }
  at[path.at(-1)!] = value;
  return copy;
}

/** A value the schema accepts, from its required parts only. */
function generate(root: JsonSchema, schema: JsonSchema): unknown {
  const s = branches(root, schema)[0] ?? {};
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.default !== undefined) return s.default;
  switch (s.type) {
    case "object": {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(
        ((s.required ?? []) as string[]).map((key) => [key, generate(root, props[key]!)]),
      );
    }
    case "array":
      return Array.from(
        { length: Number(s.minItems ?? 0) },
        () => generate(root, s.items as JsonSchema),
      );
    case "string":
      if (s.format === "uuid") return crypto.randomUUID();
      if (s.format === "uri" || s.format === "url") return "https://example.com/x";
      if (s.format === "date") return "2026-12-01";
      if (s.format === "date-time") return "2026-12-01T09:00:00.000Z";
      return "S".repeat(Math.max(1, Number(s.minLength ?? 1)));
    case "integer":
    case "number":
      return Math.max(1, Number(s.minimum ?? 1));
    case "boolean":
      return false;
    default:
      return null;
  }
}

interface BadValue {
  name: string;
  /** The raw JSON text of the value (1e309 cannot come from JSON.stringify). */
  json: string;
}

/** Values one body field must refuse, derived from its schema. */
function badValuesFor(root: JsonSchema, schema: JsonSchema): BadValue[] {
  const bad: BadValue[] = [];
  const wrongType = [
    ["a number", "12345", "number"],
    ["a string", '"zz-wrong-type"', "string"],
    ["a boolean", "true", "boolean"],
    ["an array", "[]", "array"],
    ["an object", "{}", "object"],
  ].find(([, , type]) => !accepts(root, schema, type!));
  if (wrongType) bad.push({ name: `wrong type (${wrongType[0]})`, json: wrongType[1]! });
  for (const s of branches(root, schema)) {
    if (s.type === "string") {
      if (typeof s.maxLength === "number") {
        bad.push({ name: "over its length", json: JSON.stringify("a".repeat(s.maxLength + 1)) });
      }
      if (s.enum === undefined && s.format === undefined) {
        bad.push({ name: "a NUL character", json: JSON.stringify("a\u0000b") });
        bad.push({ name: "a lone surrogate", json: '"a\\ud800b"' });
      }
    }
    if (s.type === "number" || s.type === "integer") {
      if (typeof s.minimum === "number") {
        bad.push({ name: "below its minimum", json: String(s.minimum === 0 ? -1 : s.minimum - 1) });
      }
      if (typeof s.maximum === "number") {
        bad.push({ name: "above its maximum", json: String(s.maximum + 1) });
      }
      bad.push({ name: "1e309", json: "1e309" });
      if (s.type === "integer") bad.push({ name: "a fraction", json: "1.5" });
    }
  }
  return bad;
}

/** The published maximum of a numeric field, which the code must accept (the document's word). */
function maximaOf(root: JsonSchema, schema: JsonSchema): number[] {
  return branches(root, schema).filter((s) =>
    (s.type === "number" || s.type === "integer") && typeof s.maximum === "number"
  ).map((s) => s.maximum as number);
}

const fill = (route: RouteDef, ids: Record<string, string>): string =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? "");

function pathIds(route: RouteDef, fixture: Fixture): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    ids[name!] = fixture[PARAM_FIXTURES[name!]!];
  }
  return ids;
}

interface Answer {
  status: number;
  body: Json;
  text: string;
  contentType: string | null;
}

interface SendOptions {
  /** The operation the request is aimed at, where its path does not name one (`%FF` as an id). */
  aimedAt?: RouteDef;
  headers?: Record<string, string>;
}

/**
 * One request with a deadline (a hang fails the sweep rather than the CI's clock), its answer
 * held to what the document publishes for the operation it was aimed at.
 */
async function send(
  stack: TestStack,
  key: string,
  method: string,
  path: string,
  body?: string,
  options: SendOptions = {},
): Promise<Answer> {
  requests++;
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers: {
      "x-api-key": key,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: Json = {};
  try {
    parsed = JSON.parse(text) as Json;
  } catch { /* asserted by the callers that need a body */ }
  const answer: Answer = {
    status: res.status,
    body: parsed,
    text,
    contentType: res.headers.get("content-type"),
  };
  const route = options.aimedAt ??
    ROUTE_TABLE.match(method, new URL(path, stack.gatewayUrl).pathname)?.route;
  assertDocumented(route, `${method} ${shortened(path)}`, answer);
  return answer;
}

const shortened = (text: string): string => text.length > 120 ? `${text.slice(0, 120)}…` : text;

/** The answer is one `/openapi.json` documents for the operation the request was aimed at. */
function assertDocumented(route: RouteDef | undefined, request: string, answer: Answer): void {
  assert(published, "the document is read before the first request");
  assert(route, `${request} is aimed at no operation, so its answer cannot be checked`);
  const problem = published.check(route, answer.status, answer.text, answer.contentType);
  assert(problem === null, `${request}: ${problem} (${shortened(answer.text)})`);
}

interface Refusal {
  name: string;
  path: string;
  headers?: Record<string, string>;
  status: number | number[];
}

/**
 * Requests aimed at the operation that a client can have refused before the operation is reached:
 * by the edge (URL or header block over its limit) or by the gateway (a compressed body declared,
 * an id that does not decode).
 */
function refusalsBefore(route: RouteDef, ids: Record<string, string>): Refusal[] {
  const path = fill(route, ids);
  return [
    {
      name: "a URL over MAX_URL_BYTES",
      path: `${path}?${"a".repeat(EDGE_LIMITS.MAX_URL_BYTES)}`,
      status: 414,
    },
    {
      name: "a header block over MAX_HEADER_BYTES",
      path,
      headers: { "x-sweep-padding": "a".repeat(EDGE_LIMITS.MAX_HEADER_BYTES) },
      status: 431,
    },
    {
      name: "a compressed body declared",
      path,
      headers: { "content-encoding": "gzip" },
      status: 415,
    },
    ...Object.keys(ids).map((name) => ({
      name: `{${name}} undecodable (%FF)`,
      path: fill(route, { ...ids, [name]: "%FF" }),
      status: [400, 404],
    })),
  ];
}

/** A refusal as the conventions promise it: a 4xx envelope, nothing of the insides. */
function assertRefused(answer: Answer, what: string, status?: number | number[]): void {
  const wanted = status === undefined ? null : Array.isArray(status) ? status : [status];
  assert(
    answer.status >= 400 && answer.status < 500 && (!wanted || wanted.includes(answer.status)),
    `${what}: expected ${wanted?.join("/") ?? "a 4xx"}, got ${answer.status} ${answer.text}`,
  );
  assertEquals(answer.body.status, false, `${what}: ${answer.text}`);
  assert(typeof answer.body.error === "string", `${what}: no error code in ${answer.text}`);
  assert(typeof answer.body.message === "string", `${what}: no message in ${answer.text}`);
  assert(
    // SQL, not a request line echoed back (`No endpoint DELETE /v1/…`).
    !/\bat \S+:\d+:\d+|\b(SELECT|INSERT|UPDATE|DELETE)\s+[^\s/]|postgres|RangeError|TypeError/
      .test(answer.text),
    `${what}: leaks internals: ${answer.text}`,
  );
}

/** Whether a 400 names the field (in a detail's path, or the message when there is none). */
function names(answer: Answer, field: string): boolean {
  const details = (answer.body.details ?? []) as { path: string }[];
  return details.some((d) => d.path === field || d.path.startsWith(`${field}.`)) ||
    (details.length === 0 && String(answer.body.message).includes(field));
}

/** Everything an organisation can read back, plus every outbox row: the "nothing written" view. */
async function snapshot(stack: TestStack, tenant: Tenant, fixture: Fixture): Promise<unknown> {
  const read = async (path: string): Promise<unknown> => {
    const answer = await send(stack, tenant.apiKey, "GET", path);
    assertEquals(answer.status, 200, `${path}: ${answer.text}`);
    return answer.body.data;
  };
  return {
    quotes: await read("/v1/quotes?limit=100"),
    markupGroups: await read("/v1/markup-groups?limit=100"),
    taxRates: await read("/v1/tax-rates?limit=100"),
    webhooks: await read("/v1/webhooks?limit=100"),
    deliveries: await read(`/v1/webhooks/${fixture.webhookId}/deliveries?limit=100`),
    catalogue: await read("/v1/catalogue?limit=100"),
    variants: await read("/v1/garment-variants?limit=100"),
    ledger: await read(`/v1/garment-variants/${fixture.garmentVariantId}/stock-adjustments`),
    catalogueSettings: await read("/v1/catalogue-settings"),
    prebuiltItems: await read("/v1/prebuilt-items?limit=100"),
    customers: await read("/v1/customers?limit=100"),
    customFields: await read("/v1/custom-fields"),
    vendors: await read("/v1/vendors?limit=100"),
    archivedVendors: await read("/v1/vendors?limit=100&isActive=false"),
    tasks: await read("/v1/tasks?limit=100"),
    taskExtras: await read(`/v1/tasks/${fixture.taskId}/extras`),
    mocks: await read(`/v1/mocks?quoteId=${fixture.quoteId}`),
    proofs: await read("/v1/proofs?limit=100"),
    proofHistory: await read(`/v1/proofs/${fixture.proofId}/history`),
  };
}

async function outboxes(stack: TestStack): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const schema of ["gateway", "quotes", "catalogue", "crm", "proofs", "webhooks"]) {
    const sql = connect(stack.db.url, { schema, max: 1 });
    try {
      all[schema] = [...await sql`SELECT id, type, aggregate_id FROM outbox ORDER BY id`];
    } finally {
      await sql.end();
    }
  }
  return all;
}

async function createFixture(
  stack: TestStack,
  tenant: Tenant,
  receiverUrl: string,
): Promise<Fixture> {
  const post = async (path: string, body: unknown): Promise<string> => {
    const answer = await send(stack, tenant.apiKey, "POST", path, JSON.stringify(body));
    assert(answer.status === 201 || answer.status === 200, `${path}: ${answer.text}`);
    return (answer.body.data as { id: string }).id;
  };
  const webhookId = await post("/v1/webhooks", { url: receiverUrl, event: "quote.created" });
  const quoteId = await post("/v1/quotes", { reference: "Sweep" });
  const groupId = await post(`/v1/quotes/${quoteId}/groups`, { name: "Front" });
  const lineId = await post(`/v1/quote-groups/${groupId}/lines`, {
    lineType: "Garment",
    productName: "Gildan 5000",
  });
  const variantId = await post(`/v1/quote-lines/${lineId}/variants`, {
    size: "M",
    colour: "Black",
    quantity: 12,
    buyPrice: 6,
    markupType: "percentage",
    markupValue: 33,
  });
  const decorationId = await post(`/v1/quote-groups/${groupId}/decorations`, {
    quantity: 12,
    unitCost: 1.2,
    markupType: "percentage",
    markupValue: 50,
  });
  const band = { from: 0, markupType: "percentage", markupValue: 40 };
  const markupGroupId = await post("/v1/markup-groups", {
    name: "Garments",
    lane: "garment",
    bands: [{ ...band, from: 1 }],
  });
  const setupMarkupGroupId = await post("/v1/markup-groups", {
    name: "Setup",
    lane: "setup",
    bands: [band],
  });
  const taxRateId = await post("/v1/tax-rates", { name: "VAT", ratePct: 20 });
  const catalogueItemId = await post("/v1/catalogue", { styleCode: "5000", name: "Tee" });
  const created = await send(
    stack,
    tenant.apiKey,
    "POST",
    "/v1/garment-variants/bulk/create",
    JSON.stringify({
      input: [{
        garmentCatalogueItemId: catalogueItemId,
        color: "Black",
        size: "M",
        stockOnHand: 5,
      }],
    }),
  );
  assertEquals(created.status, 201, created.text);
  const garmentVariantId = (created.body.data as { id: string }[])[0]!.id;
  const prebuiltItemId = await post("/v1/prebuilt-items", {
    name: "Staff polo",
    garmentCatalogueItemId: catalogueItemId,
    decorations: [{ position: "Left chest", method: "Embroidery", unitCost: 2.1 }],
  });
  const fieldId = await post("/v1/custom-fields", {
    name: "Courier",
    type: "select",
    entity: "customer",
    options: ["StarTrack", "Aramex"],
  });
  const customerId = await post("/v1/customers", {
    companyName: "Riverside Bakery",
    customFields: { [fieldId]: "Aramex" },
  });
  const customerContactId = await post(`/v1/customers/${customerId}/contacts`, {
    firstName: "Sam",
  });
  const customerAddressId = await post(`/v1/customers/${customerId}/addresses`, {
    city: "Balmain",
  });
  const vendorId = await post("/v1/vendors", {
    name: "Sweep Vendor",
    kind: "Decorator",
    serviceTypes: ["ScreenPrint"],
  });
  const vendorContactId = await post(`/v1/vendors/${vendorId}/contacts`, {
    firstName: "Lee",
    email: "lee@sweep.example",
  });
  const vendorAddressId = await post(`/v1/vendors/${vendorId}/addresses`, {
    label: "Workshop",
    city: "Marrickville",
  });
  const taskId = await post("/v1/tasks", { title: "Sweep task", customerId, vendorId, quoteId });
  const checklistItemId = await post(`/v1/tasks/${taskId}/checklist`, { text: "Check sizes" });
  const commentId = await post(`/v1/tasks/${taskId}/comments`, { body: "Hello" });
  const attachmentId = await post(`/v1/tasks/${taskId}/attachments`, {
    fileUrl: "https://files.example.com/a.pdf",
    filename: "a.pdf",
    mimeType: "application/pdf",
    sizeBytes: 1,
  });
  const mockId = await post("/v1/mocks", { quoteId, name: "Sweep" });
  const proof = await send(
    stack,
    tenant.apiKey,
    "POST",
    "/v1/proofs",
    JSON.stringify(proofBody(quoteId)),
  );
  assertEquals(proof.status, 201, proof.text);
  const proofData = proof.body.data as { id: string; items: { id: string }[] };
  const proofId = proofData.id;
  const proofItemLinkId = proofData.items[0]!.id;
  let deliveryId = "";
  await waitFor(
    "the fixture's delivery to succeed",
    async () => {
      const answer = await send(
        stack,
        tenant.apiKey,
        "GET",
        `/v1/webhooks/${webhookId}/deliveries`,
      );
      const items = (answer.body.data as { items: { id: string; status: string }[] }).items;
      deliveryId = items.find((d) => d.status === "succeeded")?.id ?? "";
      return deliveryId !== "";
    },
    20_000,
    100,
  );
  return {
    quoteId,
    groupId,
    lineId,
    variantId,
    decorationId,
    markupGroupId,
    setupMarkupGroupId,
    taxRateId,
    webhookId,
    deliveryId,
    catalogueItemId,
    garmentVariantId,
    prebuiltItemId,
    customerId,
    customerContactId,
    customerAddressId,
    fieldId,
    vendorId,
    vendorContactId,
    vendorAddressId,
    taskId,
    checklistItemId,
    commentId,
    attachmentId,
    mockId,
    proofId,
    proofItemLinkId,
  };
}

Deno.test("every route of the table, swept: bad input, other tenants, scopes, nothing written", async (t) => {
  await using receiver = await startWebhookReceiver();
  // Thousands of requests in seconds: the rate limit is not what this sweep is about.
  await using stack = await startTestStack({
    env: {
      RATE_LIMIT_PER_MINUTE: "1000000",
      MAX_URL_BYTES: String(EDGE_LIMITS.MAX_URL_BYTES),
      MAX_HEADER_BYTES: String(EDGE_LIMITS.MAX_HEADER_BYTES),
    },
  });
  const served = await fetch(`${stack.gatewayUrl}/openapi.json`);
  assertEquals(served.status, 200);
  published = createResponseChecker(await served.json());
  const a = await stack.tenant(ALL_SCOPES, "Sweep A");
  const b = await stack.tenant(ALL_SCOPES, "Sweep B");
  const fa = await createFixture(stack, a, receiver.url);
  const fb = await createFixture(stack, b, receiver.url);
  // One key per scope the table uses, lacking exactly that scope.
  const lacking = new Map<string, string>();
  for (const scope of [...new Set(ROUTES.map((r) => r.scope)), "costs.read"]) {
    if (scope === null) continue;
    const tenant = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${a.organizationId}/api-keys`,
      { scopes: ALL_SCOPES.filter((s) => s !== scope) },
    );
    lacking.set(scope, tenant.data.apiKey);
  }

  const before = {
    a: await snapshot(stack, a, fa),
    b: await snapshot(stack, b, fb),
    outboxes: await outboxes(stack),
  };

  await t.step("every route of the table can be swept", () => {
    const problems: string[] = [];
    for (const route of ROUTES) {
      for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
        if (!PARAM_FIXTURES[name!]) problems.push(`${route.operationId}: no fixture for {${name}}`);
      }
      if (!route.body) continue;
      const schema = toSchema(route.body);
      for (const { field, path } of referencePaths(schema, schema)) {
        if (!REFERENCE_FIELDS[field] && !UNRESOLVED_REFERENCES[field]) {
          problems.push(
            `${route.operationId}: body field "${
              path.join(".")
            }" names a resource the sweep does not know`,
          );
        }
      }
      const body = validBody(route, fa, receiver.url);
      const parsed = route.body.safeParse(body);
      if (!parsed.success) {
        problems.push(
          `${route.operationId}: no valid body (give it one in VALID_BODIES): ` +
            JSON.stringify(parsed.error.issues),
        );
      }
    }
    assertEquals(problems, []);
  });

  for (const route of ROUTES) {
    const op = `${route.operationId} (${route.method} ${route.path})`;
    await t.step(op, async (t) => {
      const path = fill(route, pathIds(route, fa));
      const takesBody = route.method !== "GET";
      const validText = route.body ? JSON.stringify(validBody(route, fa, receiver.url)) : undefined;

      await t.step("bad input", async () => {
        for (const [name] of route.path.matchAll(/\{(\w+)\}/g)) {
          const ids = { ...pathIds(route, fa), [name.slice(1, -1)]: "not-a-uuid" };
          assertRefused(
            await send(stack, a.apiKey, route.method, fill(route, ids), validText),
            `${op}: ${name} not a UUID`,
            [400, 404],
          );
        }
        const unknown = await send(stack, a.apiKey, route.method, `${path}?zzSweep=1`, validText);
        assertRefused(unknown, `${op}: unknown query parameter`, 400);
        assert(names(unknown, "zzSweep"), `${op}: the unknown parameter is named: ${unknown.text}`);
        const query = route.query ? toSchema(route.query) : null;
        const queryProps = Object.keys((query?.properties ?? {}) as Json);
        for (const param of queryProps.filter((p) => p === "limit" || p === "offset")) {
          for (const value of ["-1", "abc", "1e9", "1.5"]) {
            const answer = await send(stack, a.apiKey, route.method, `${path}?${param}=${value}`);
            assertRefused(answer, `${op}: ${param}=${value}`, 400);
            assert(names(answer, param), `${op}: ${param}=${value} is named: ${answer.text}`);
          }
        }
        if (queryProps.length > 0) {
          const param = queryProps.includes("limit") ? "limit" : queryProps[0]!;
          const answer = await send(stack, a.apiKey, route.method, `${path}?${param}=1&${param}=2`);
          assertRefused(answer, `${op}: repeated ${param}`, 400);
        }
        if (!takesBody) return;
        const deep = `{"x":${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`;
        assertRefused(
          await send(stack, a.apiKey, route.method, path, deep),
          `${op}: deep JSON`,
          400,
        );
        for (const text of ["{", "[]", "1", '"text"', "null"]) {
          assertRefused(
            await send(stack, a.apiKey, route.method, path, text),
            `${op}: body ${text}`,
            400,
          );
        }
        const guard = '"zzSweepUnknown":true';
        const unknownField = await send(stack, a.apiKey, route.method, path, `{${guard}}`);
        assertRefused(unknownField, `${op}: unknown body field`, 400);
        assert(
          names(unknownField, "zzSweepUnknown"),
          `${op}: unknown field named: ${unknownField.text}`,
        );
        if (!route.body) return;
        const schema = toSchema(route.body);
        for (const [field, prop] of Object.entries((schema.properties ?? {}) as Json)) {
          // The guard field makes every one of these a refusal, should the field's own check be
          // missing: the assertion is then that the field is named, and nothing is written.
          for (const bad of badValuesFor(schema, prop as JsonSchema)) {
            const answer = await send(
              stack,
              a.apiKey,
              route.method,
              path,
              `{"${field}":${bad.json},${guard}}`,
            );
            assertRefused(answer, `${op}: ${field} ${bad.name}`, 400);
            assert(names(answer, field), `${op}: ${field} ${bad.name} is named: ${answer.text}`);
          }
          for (const max of maximaOf(schema, prop as JsonSchema)) {
            const answer = await send(
              stack,
              a.apiKey,
              route.method,
              path,
              `{"${field}":${max},${guard}}`,
            );
            assertRefused(answer, `${op}: ${field} at its published maximum`, 400);
            assert(
              !names(answer, field),
              `${op}: ${field} = ${max} is published as allowed but refused: ${answer.text}`,
            );
          }
        }
      });

      await t.step("refused before the operation, as the document says", async () => {
        for (const refusal of refusalsBefore(route, pathIds(route, fa))) {
          const answer = await send(stack, a.apiKey, route.method, refusal.path, undefined, {
            aimedAt: route,
            headers: refusal.headers,
          });
          assertRefused(answer, `${op}: ${refusal.name}`, refusal.status);
        }
      });

      if (route.method === "PUT") {
        // Create-or-replace with a client's id: an unknown id creates a row (so it is not sent
        // here, where nothing may be written), and another organisation's id cannot be taken.
        await t.step("another organisation's id cannot be claimed", async () => {
          const theirs = await send(stack, b.apiKey, route.method, path, validText);
          assertRefused(theirs, `${op}: B puts A's id`, 409);
        });
      } else if (route.path.includes("{")) {
        await t.step("another organisation's ids are unknown ids", async () => {
          const theirs = await send(stack, b.apiKey, route.method, path, validText);
          const randomIds = Object.fromEntries(
            Object.keys(pathIds(route, fa)).map((name) => [name, crypto.randomUUID()]),
          );
          const unknown = await send(
            stack,
            b.apiKey,
            route.method,
            fill(route, randomIds),
            validText,
          );
          const shape = (answer: Answer, ids: Record<string, string>): unknown => ({
            status: answer.status,
            error: answer.body.error,
            message: Object.values(ids).reduce(
              (m, id) => m.replaceAll(id, "<id>"),
              String(answer.body.message),
            ),
          });
          assert(
            unknown.status === 404 || unknown.status < 300,
            `${op}: an unknown id is answered 404: ${unknown.text}`,
          );
          assertEquals(shape(theirs, pathIds(route, fa)), shape(unknown, randomIds), op);
          // An unknown id is 404, except where the operation declares that it succeeds (an
          // unsubscribe with nothing to remove); either way, A's is answered the same.
          if (unknown.status >= 300) assertEquals(theirs.status, 404, `${op}: ${theirs.text}`);
        });
      }

      if (route.body) {
        await t.step("another organisation's ids inside the body are refused", async () => {
          const schema = toSchema(route.body!);
          const kept = CROSS_SERVICE_REFERENCES[route.operationId] ?? {};
          const references = referencePaths(schema, schema).filter((r) =>
            REFERENCE_FIELDS[r.field] && !kept[r.field]
          );
          const ownPath = fill(route, pathIds(route, fb));
          for (const { field, path: at } of references) {
            const body = withValueAt(
              validBody(route, fb, receiver.url),
              at,
              fa[REFERENCE_FIELDS[field]!],
            );
            if (body === null) continue;
            const answer = await send(stack, b.apiKey, route.method, ownPath, JSON.stringify(body));
            assertRefused(answer, `${op}: B names A's ${at.join(".")}`, [400, 404, 409]);
          }
          if (route.operationId === "reorderQuoteGroup") {
            const answer = await send(
              stack,
              b.apiKey,
              route.method,
              ownPath,
              JSON.stringify(validBody(route, fa, receiver.url)),
            );
            assertRefused(answer, `${op}: B reorders with A's row ids`, [400, 404, 409]);
          }
        });
      }

      if (route.scope) {
        await t.step(`without ${route.scope}: 403 naming it`, async () => {
          const answer = await send(
            stack,
            lacking.get(route.scope!)!,
            route.method,
            path,
            validText,
          );
          assertRefused(answer, `${op}: without ${route.scope}`, 403);
          assertEquals(answer.body.error, "insufficient_scope");
          assert(String(answer.body.message).includes(route.scope!), answer.text);
        });
      }

      if (route.body) {
        const schema = toSchema(route.body);
        const costFields = Object.keys((schema.properties ?? {}) as Json).filter((f) =>
          (COSTS_READ_FIELDS as readonly string[]).includes(f)
        );
        if (costFields.length > 0) {
          await t.step("a cost or margin field without costs.read: 403", async () => {
            for (const field of costFields) {
              const value = generate(schema, (schema.properties as Json)[field] as JsonSchema);
              const body = { ...validBody(route, fa, receiver.url) as Json, [field]: value };
              const answer = await send(
                stack,
                lacking.get("costs.read")!,
                route.method,
                path,
                JSON.stringify(body),
              );
              assertRefused(answer, `${op}: ${field} without costs.read`, 403);
              assert(String(answer.body.message).includes(field), answer.text);
            }
          });
        }
      }
    });
  }

  await t.step("nothing was written by any refused request", async () => {
    assertEquals(await snapshot(stack, a, fa), before.a);
    assertEquals(await snapshot(stack, b, fb), before.b);
    assertEquals(await outboxes(stack), before.outboxes);
    console.log(`the sweep sent ${requests} requests over ${ROUTES.length} operations`);
  });
});

/** A body the operation accepts: an override, or the required fields the schema generates. */
function validBody(route: RouteDef, ids: Fixture, receiverUrl: string): unknown {
  const override = VALID_BODIES[route.operationId];
  if (override) return override(ids, receiverUrl);
  if (!route.body) return {};
  const schema = toSchema(route.body);
  return generate(schema, schema);
}

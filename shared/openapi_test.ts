import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { z } from "zod";
import { CreateQuoteBody } from "./contracts/quotes/mod.ts";
import {
  buildOpenApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiMethod,
  type OpenApiOperation,
  type OpenApiParameter,
  type OpenApiReference,
} from "./openapi.ts";
import { type RouteDef, ROUTES } from "./routes.ts";
import { CONNECTION_ERROR_CODES, PUBLIC_ERROR_CODES, type PublicErrorCode } from "./http/errors.ts";

const doc = buildOpenApiDocument();

function operationOf(document: OpenApiDocument, route: RouteDef): OpenApiOperation {
  const operation = document.paths[route.path]?.[route.method.toLowerCase() as OpenApiMethod];
  assert.ok(operation, `${route.method} ${route.path} is missing`);
  return operation;
}

/** Resolves a local JSON pointer such as `#/components/schemas/Quote`; undefined when dangling. */
function pointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) refsIn(item, found);
  } else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.push(value);
      else refsIn(value, found);
    }
  }
  return found;
}

function deref<T>(document: OpenApiDocument, value: T | OpenApiReference): T {
  if (typeof value === "object" && value !== null && "$ref" in value) {
    const target = pointer(document, value.$ref);
    assert.ok(target !== undefined, `dangling ${value.$ref}`);
    return deref(document, target as T | OpenApiReference);
  }
  return value;
}

function parametersOf(operation: OpenApiOperation): OpenApiParameter[] {
  return (operation.parameters ?? []).map((p) => deref<OpenApiParameter>(doc, p));
}

Deno.test("buildOpenApiDocument() lists every operation of the route table", () => {
  assert.equal(doc.openapi, "3.1.0");
  assert.deepEqual(doc.info, { ...doc.info, title: "Print Shop API", version: "1.0.0" });
  assert.deepEqual(doc.servers, [{ url: "/" }]);
  for (const route of ROUTES) {
    const operation = operationOf(doc, route);
    assert.equal(operation.operationId, route.operationId);
    assert.equal(operation.summary, route.summary);
    assert.deepEqual(operation.tags, [route.tag]);
  }
  const operationCount = Object.values(doc.paths).reduce(
    (n, item) => n + Object.keys(item).length,
    0,
  );
  assert.equal(operationCount, ROUTES.length, "no operation beyond the route table");
  assert.deepEqual(
    doc.tags.map((t) => t.name),
    [...new Set(ROUTES.map((r) => r.tag))],
  );
});

Deno.test("buildOpenApiDocument() resolves every $ref inside the document", () => {
  const refs = refsIn(doc);
  assert.ok(refs.length > 0);
  for (const ref of refs) {
    assert.notEqual(pointer(doc, ref), undefined, `dangling ${ref}`);
  }
  // Shared schemas are components, not copies: Quote is referenced by create, list and get.
  const quoteRefs = refs.filter((r) => r === "#/components/schemas/Quote");
  assert.ok(quoteRefs.length >= 3, `Quote referenced ${quoteRefs.length} times`);
  for (const id of ["Quote", "QuoteGroup", "ErrorEnvelope", "CreateQuoteBody", "Me", "Limits"]) {
    assert.ok(doc.components.schemas[id], `component ${id}`);
    assert.equal(doc.components.schemas[id]?.$id, undefined, "no fragment $id in a component");
  }
});

Deno.test("buildOpenApiDocument() declares path parameters exactly as the template names them", () => {
  for (const route of ROUTES) {
    const templateNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const pathParams = parametersOf(operationOf(doc, route)).filter((p) => p.in === "path");
    assert.deepEqual(pathParams.map((p) => p.name), templateNames, route.operationId);
    for (const param of pathParams) {
      assert.equal(param.required, true);
      assert.deepEqual(param.schema, { type: "string", format: "uuid" });
    }
  }
});

Deno.test("buildOpenApiDocument() output validates as OpenAPI 3.1", async () => {
  const validator = new Validator();
  // Validate the JSON text clients receive, not the in-memory object.
  const served: Record<string, unknown> = JSON.parse(JSON.stringify(doc));
  const result = await validator.validate(served);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, "3.1");
});

Deno.test("the OpenAPI validator used above does reject a broken document", async () => {
  const broken = structuredClone(doc);
  // A path parameter must be required; a document that says otherwise is invalid.
  const param = broken.paths["/v1/quotes/{quoteId}"]!.get!.parameters![0] as OpenApiParameter;
  param.required = false;
  const result = await new Validator().validate(JSON.parse(JSON.stringify(broken)));
  assert.equal(result.valid, false);
});

Deno.test("buildOpenApiDocument() refuses additional properties in the quote creation body", () => {
  const createQuote = ROUTES.find((r) => r.operationId === "createQuote")!;
  const body = operationOf(doc, createQuote).requestBody;
  assert.ok(body);
  const schema = deref<JsonSchema>(doc, body.content["application/json"]!.schema);
  assert.equal(schema.additionalProperties, false);
  assert.equal(CreateQuoteBody.safeParse({ unknownField: 1 }).success, false, "zod agrees");
  // Every field is optional, and the gateway reads an empty body as {}.
  assert.equal(body.required, false);
  assert.equal(schema.required, undefined);
});

Deno.test("buildOpenApiDocument() wraps success data in the envelope and errors in ErrorEnvelope", () => {
  for (const route of ROUTES) {
    const operation = operationOf(doc, route);
    for (const status of Object.keys(route.responses)) {
      const response = deref(doc, operation.responses[status]!);
      const envelope = response.content?.["application/json"]?.schema;
      assert.ok(envelope, `${route.operationId} ${status}`);
      assert.deepEqual(envelope.required, ["status", "message", "data"]);
      assert.deepEqual(Object.keys(envelope.properties as object), ["status", "message", "data"]);
    }
    const errors = Object.keys(operation.responses).filter((s) => Number(s) >= 400);
    for (const status of errors) {
      const response = deref(doc, operation.responses[status]!);
      assert.deepEqual(response.content?.["application/json"]?.schema, {
        $ref: "#/components/schemas/ErrorEnvelope",
      }, `${route.operationId} ${status}`);
    }
  }
  // No operation answers 405 (it is for a method a path does not take): the introduction says so.
  assert.equal(doc.components.responses.MethodNotAllowed, undefined);
  assert.match(doc.info.description, /405 `method_not_allowed`/);
});

/** The codes an operation lists for each error status it documents. */
function errorCodesOf(operation: OpenApiOperation): Map<number, string[]> {
  const codes = new Map<number, string[]>();
  for (const [status, reference] of Object.entries(operation.responses)) {
    if (Number(status) < 400) continue;
    const response = deref(doc, reference);
    const listed = response["x-error-codes"] ?? [];
    // The description says the same to a reader as `x-error-codes` to a tool.
    assert.match(
      response.description,
      new RegExp(`is one of: ${listed.map((c) => `\`${c}\``).join(", ")}\\.$`),
    );
    codes.set(Number(status), listed);
  }
  return codes;
}

Deno.test("buildOpenApiDocument() lists every status and code a client can receive under every operation", () => {
  // Every code of the app and the edge can meet any request, whatever it is aimed at (the
  // edge's refusals come before an operation is chosen; an undecodable id is route_not_found;
  // every operation is authenticated, so rate limited), but for these three kinds.
  const meets = (route: RouteDef, code: PublicErrorCode): boolean => {
    // For a method the path does not take: no operation of the document.
    if (code === "method_not_allowed") return false;
    // An id the path names may be missing, unless the operation declares that it succeeds.
    if (code === "not_found") return route.path.includes("{") && !route.unknownIdSucceeds;
    // A write can clash with the row's state or an earlier use of its Idempotency-Key.
    if (PUBLIC_ERROR_CODES[code] === 409) return route.method !== "GET";
    return true;
  };
  const codes = Object.keys(PUBLIC_ERROR_CODES) as PublicErrorCode[];
  for (const route of ROUTES) {
    const expected = new Map<number, string[]>();
    for (const code of codes.filter((c) => meets(route, c))) {
      const status = PUBLIC_ERROR_CODES[code];
      expected.set(status, [...expected.get(status) ?? [], code]);
    }
    const operation = operationOf(doc, route);
    assert.deepEqual(errorCodesOf(operation), expected, route.operationId);
    for (const status of [...Object.values(CONNECTION_ERROR_CODES), 404, 413, 429, 503]) {
      assert.ok(expected.has(status), `${route.operationId} lists ${status}`);
    }
    const tooMany = deref(doc, operation.responses["429"]!);
    assert.ok(tooMany.headers?.["Retry-After"], `${route.operationId}: 429 says when to retry`);
  }
  // The introduction no longer keeps the edge's refusals to itself.
  assert.match(doc.info.description, /every operation lists these statuses too/);
});

Deno.test("buildOpenApiDocument() lists not_found for an id that may be missing, not for an unsubscribe", () => {
  const codesOf = (operationId: string, status: number): string[] => {
    const route = ROUTES.find((r) => r.operationId === operationId)!;
    return errorCodesOf(operationOf(doc, route)).get(status) ?? [];
  };
  assert.deepEqual(codesOf("getQuote", 404), ["not_found", "route_not_found"]);
  assert.deepEqual(codesOf("listQuotes", 404), ["route_not_found"], "no id, nothing to miss");
  assert.deepEqual(codesOf("getMe", 404), ["route_not_found"]);
  assert.deepEqual(codesOf("deleteWebhook", 404), ["route_not_found"], "unsubscribing is a 200");
  assert.deepEqual(codesOf("getQuote", 409), [], "a read conflicts with nothing");
  assert.ok(codesOf("deleteQuote", 409).includes("idempotency_key_reused"));
});

Deno.test("buildOpenApiDocument() marks scope, security and the Idempotency-Key header", () => {
  const schemes = doc.components.securitySchemes;
  assert.deepEqual(schemes.TenantKey, { ...schemes.TenantKey, type: "apiKey", name: "X-API-Key" });
  for (const route of ROUTES) {
    const operation = operationOf(doc, route);
    assert.equal(operation["x-required-scope"], route.scope ?? undefined);
    if (route.scope) assert.match(operation.description, new RegExp(`\`${route.scope}\``));
    for (const requirement of operation.security) {
      for (const name of Object.keys(requirement)) assert.ok(schemes[name], name);
    }
    const idempotency = parametersOf(operation).find((p) => p.name === "Idempotency-Key");
    if (route.method === "GET") {
      assert.equal(idempotency, undefined);
    } else {
      assert.ok(idempotency, route.operationId);
      assert.equal(idempotency.in, "header");
      assert.equal(idempotency.required, false);
      assert.deepEqual(idempotency.schema, { type: "string", minLength: 1, maxLength: 200 });
    }
  }
  const partner = doc.paths["/v1/quotes"]!.get!.security[1]!;
  assert.deepEqual(Object.keys(partner).map((n) => schemes[n]), [
    { ...schemes.PartnerClientId, type: "apiKey", in: "header", name: "X-API-Key" },
    { ...schemes.PartnerClientSecret, type: "apiKey", in: "header", name: "X-API-Secret" },
    { ...schemes.PartnerToken, type: "http", scheme: "bearer", bearerFormat: "JWT" },
    {
      ...schemes.PartnerOrganization,
      type: "apiKey",
      in: "header",
      name: "X-Service-Organization-Id",
    },
  ]);
});

Deno.test("buildOpenApiDocument() turns each query key into a parameter, as the client sends it", () => {
  const listQuotes = ROUTES.find((r) => r.operationId === "listQuotes")!;
  const query = parametersOf(operationOf(doc, listQuotes)).filter((p) => p.in === "query");
  assert.deepEqual(query.map((p) => p.name), [
    "limit",
    "offset",
    "count",
    "clientId",
    "status",
    "externalId",
    "search",
    "sortField",
    "sortDirection",
    "filters",
  ]);
  assert.ok(query.every((p) => p.required === false));
  // limit is parsed from a string; the input side documents the string, not the number.
  assert.deepEqual(query[0]!.schema, { type: "string", pattern: "^\\d{1,9}$" });
});

Deno.test("buildOpenApiDocument() gives an id's input shape its own component when it differs", () => {
  const Amount = z.string().transform(Number).pipe(z.number()).meta({ id: "TestAmount" });
  const Holder = z.object({ amount: Amount, note: z.string().optional() });
  const routes: RouteDef[] = [
    {
      operationId: "readAmount",
      method: "GET",
      path: "/v1/amounts/{amountId}",
      service: "gateway",
      scope: null,
      summary: "Read",
      tag: "Test",
      query: z.object({ required: z.string(), optional: z.string().optional() }),
      responses: { 200: Holder },
    },
    {
      operationId: "writeAmount",
      method: "PUT",
      path: "/v1/amounts/{amountId}",
      service: "gateway",
      scope: "quotes.write",
      summary: "Write",
      tag: "Test",
      body: Holder,
      responses: { 204: z.never() },
    },
  ];
  const test = buildOpenApiDocument(routes);
  assert.deepEqual(test.components.schemas.TestAmount, { type: "number" });
  assert.deepEqual(test.components.schemas.TestAmountInput, { type: "string" });
  const put = test.paths["/v1/amounts/{amountId}"]!.put!;
  const body = put.requestBody!.content["application/json"]!.schema;
  assert.deepEqual(asProps(body).amount, { $ref: "#/components/schemas/TestAmountInput" });
  assert.equal(put.requestBody!.required, true);
  const noContent = put.responses["204"] as {
    description: string;
    content?: unknown;
    headers?: Record<string, unknown>;
  };
  assert.equal(noContent.description, "No content");
  assert.equal(noContent.content, undefined);
  assert.ok(noContent.headers?.["Idempotency-Replayed"], "writes document the replay header");
  const get = test.paths["/v1/amounts/{amountId}"]!.get!;
  const okSchema = get.responses["200"] as { content: Record<string, { schema: JsonSchema }> };
  const data = asProps(okSchema.content["application/json"]!.schema).data as JsonSchema;
  assert.deepEqual(asProps(data).amount, { $ref: "#/components/schemas/TestAmount" });
  const query = parametersOf(get).filter((p) => p.in === "query");
  assert.deepEqual(query.map((p) => [p.name, p.required]), [["required", true], [
    "optional",
    false,
  ]]);
  for (const ref of refsIn(test)) assert.notEqual(pointer(test, ref), undefined, ref);
});

Deno.test("buildOpenApiDocument() refuses a route table with a repeated operationId", () => {
  const route = ROUTES[0]!;
  assert.throws(
    () => buildOpenApiDocument([route, { ...route, path: "/v1/other" }]),
    /operationId "getMe" is used twice/,
  );
});

function asProps(schema: JsonSchema): Record<string, unknown> {
  return schema.properties as Record<string, unknown>;
}

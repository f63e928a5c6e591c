import type { z } from "zod";
import { asRecord, type JsonSchema, SCHEMA_REF, SchemaSet } from "./json_schema.ts";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "./limits.ts";
import { ErrorEnvelope, successEnvelope } from "./contracts/common.ts";
import { ERROR_CODES, type ErrorCode, type ErrorStatus } from "./http/errors.ts";
import { type HttpMethod, type RouteDef, ROUTES } from "./routes.ts";

/** A JSON Schema (draft 2020-12, the OpenAPI 3.1 dialect) as emitted by `z.toJSONSchema`. */
export type { JsonSchema } from "./json_schema.ts";

export interface OpenApiReference {
  $ref: string;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
}

export interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiHeader {
  description: string;
  schema: JsonSchema;
}

export interface OpenApiRequestBody {
  description?: string;
  required: boolean;
  content: Record<string, OpenApiMediaType>;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}

/** Scheme names to the roles they need; every entry of one object is required together. */
export type OpenApiSecurityRequirement = Record<string, string[]>;

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: OpenApiSecurityRequirement[];
  /** The route table's scope; absent when any valid credential will do. */
  "x-required-scope"?: string;
  parameters?: (OpenApiParameter | OpenApiReference)[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse | OpenApiReference>;
}

export type OpenApiMethod = "get" | "post" | "put" | "patch" | "delete";
export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

export type OpenApiSecurityScheme =
  | { type: "apiKey"; in: "header"; name: string; description: string }
  | { type: "http"; scheme: "bearer"; bearerFormat: string; description: string };

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description?: string }[];
  tags: { name: string }[];
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
    parameters: Record<string, OpenApiParameter>;
    securitySchemes: Record<string, OpenApiSecurityScheme>;
  };
}

const WRITE_METHODS: ReadonlySet<HttpMethod> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const SECURITY_SCHEMES: Record<string, OpenApiSecurityScheme> = {
  TenantKey: {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "A tenant API key issued to one organisation. It may also send " +
      "X-Service-Organization-Id naming that same organisation; any other is refused with 403 " +
      "`organization_not_allowed`.",
  },
  PartnerClientId: {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "Partner credential, part 1 of 4: the partner's client id.",
  },
  PartnerClientSecret: {
    type: "apiKey",
    in: "header",
    name: "X-API-Secret",
    description: "Partner credential, part 2 of 4: the partner's client secret.",
  },
  PartnerToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Partner credential, part 3 of 4: a signed JWT from the partner's issuer.",
  },
  PartnerOrganization: {
    type: "apiKey",
    in: "header",
    name: "X-Service-Organization-Id",
    description: "Partner credential, part 4 of 4: the UUID of the organisation acted for.",
  },
};

// Alternatives: a tenant key alone, or all four partner parts together (one requirement object).
const SECURITY: OpenApiSecurityRequirement[] = [
  { TenantKey: [] },
  { PartnerClientId: [], PartnerClientSecret: [], PartnerToken: [], PartnerOrganization: [] },
];

/** Component name and summary for each error status; keyed by ErrorStatus so a new one fails to compile. */
const ERROR_RESPONSES: Record<ErrorStatus, { name: string; title: string }> = {
  400: { name: "BadRequest", title: "The request is malformed or fails validation" },
  401: { name: "Unauthorized", title: "The credential is missing, malformed or revoked" },
  403: { name: "Forbidden", title: "The credential may not do this" },
  404: { name: "NotFound", title: "No such endpoint or resource" },
  405: {
    name: "MethodNotAllowed",
    title: "The path exists, but not with this method; `Allow` lists the methods it takes",
  },
  409: { name: "Conflict", title: "Conflicts with the resource's state or an idempotent request" },
  413: { name: "PayloadTooLarge", title: "The request body is over the size limit" },
  415: {
    name: "UnsupportedMediaType",
    title: "The body is compressed (Content-Encoding); bodies are taken uncompressed",
  },
  429: { name: "TooManyRequests", title: "The credential's rate limit is exhausted" },
  500: { name: "InternalError", title: "An unexpected failure" },
  503: { name: "ServiceUnavailable", title: "A service behind the gateway is not answering" },
};

const ERROR_HEADERS: Partial<Record<ErrorStatus, Record<string, OpenApiHeader>>> = {
  401: {
    "WWW-Authenticate": { description: "The expected credential.", schema: { type: "string" } },
  },
  405: {
    Allow: { description: "The methods the path takes.", schema: { type: "string" } },
  },
  409: {
    "Retry-After": {
      description: "Sent with idempotency_request_in_flight: seconds before retrying.",
      schema: { type: "integer", minimum: 0 },
    },
  },
  429: {
    "Retry-After": {
      description: "Whole seconds until the credential's bucket holds a token again.",
      schema: { type: "integer", minimum: 0 },
    },
  },
  503: {
    "Retry-After": {
      description: "Seconds to wait before retrying.",
      schema: { type: "integer", minimum: 0 },
    },
  },
};

/** Headers on every authenticated response. */
const SUCCESS_HEADERS: Record<string, OpenApiHeader> = {
  "RateLimit-Policy": {
    description: 'The credential\'s policy, e.g. `"default";q=600;w=60`.',
    schema: { type: "string" },
  },
  "RateLimit": {
    description: 'What is left, e.g. `"default";r=598;t=1` (remaining; seconds until full).',
    schema: { type: "string" },
  },
  "X-Request-Id": { description: "The request's id, as logged.", schema: { type: "string" } },
};

const REPLAY_HEADER: Record<string, OpenApiHeader> = {
  "Idempotency-Replayed": {
    description: "`true` when this is the stored response of an earlier request with this key.",
    schema: { type: "string", enum: ["true"] },
  },
};

/**
 * Builds the OpenAPI 3.1 document of the public API from the route table. Schemas given an id
 * with `.meta({ id })` become `components/schemas` entries, everything else is inlined.
 */
export function buildOpenApiDocument(routes: readonly RouteDef[] = ROUTES): OpenApiDocument {
  assertUnique(routes);

  // Responses are what the API sends (`io: "output"`); bodies and queries are what a client
  // sends (`io: "input"`), which differs wherever a schema transforms or defaults.
  const output = new SchemaSet({ io: "output", document: "OpenAPI" });
  const input = new SchemaSet({ io: "input", document: "OpenAPI" });
  const errorRoot = output.add(ErrorEnvelope);
  const plans = routes.map((route) => ({
    route,
    body: route.body ? input.add(route.body) : undefined,
    query: route.query ? input.add(route.query) : undefined,
    responses: Object.entries(route.responses).map(([status, data]) => ({
      status,
      root: status === "204" ? undefined : output.add(successEnvelope(data)),
    })),
  }));

  const outputResult = output.emit(() => null);
  let inputResult = input.emit(() => null);
  // The same id can mean different JSON on each side (a transform, a default); the input side
  // then gets its own `<id>Input` component rather than silently documenting the output shape.
  const renamed = new Map<string, string>();
  for (const [id, schema] of Object.entries(inputResult.components)) {
    const other = outputResult.components[id];
    if (other !== undefined && !sameJson(other, schema)) renamed.set(id, `${id}Input`);
  }
  if (renamed.size > 0) inputResult = input.emit((id) => renamed.get(id) ?? null);

  const schemas: Record<string, JsonSchema> = { ...outputResult.components };
  for (const [id, schema] of Object.entries(inputResult.components)) {
    const name = renamed.get(id) ?? id;
    if (name !== id && name in schemas) {
      throw new Error(`OpenAPI: component "${name}" exists, so the input side of "${id}" clashes`);
    }
    schemas[name] = schema;
  }

  const paths: Record<string, OpenApiPathItem> = {};
  for (const plan of plans) {
    const { route } = plan;
    const parameters: (OpenApiParameter | OpenApiReference)[] = pathParameters(route.path);
    if (plan.query !== undefined) {
      const query = resolve(inputResult.roots[plan.query]!, schemas);
      parameters.push(...queryParameters(route, query));
    }
    if (WRITE_METHODS.has(route.method)) {
      parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
    }

    const responses: Record<string, OpenApiResponse | OpenApiReference> = {};
    for (const { status, root } of plan.responses) {
      const headers = WRITE_METHODS.has(route.method)
        ? { ...SUCCESS_HEADERS, ...REPLAY_HEADER }
        : SUCCESS_HEADERS;
      responses[status] = root === undefined ? { description: "No content", headers } : {
        description: status === "201" ? "Created" : "OK",
        headers,
        content: { "application/json": { schema: outputResult.roots[root]! } },
      };
    }
    for (const status of errorStatuses(route)) {
      responses[String(status)] = {
        $ref: `#/components/responses/${ERROR_RESPONSES[status].name}`,
      };
    }

    const operation: OpenApiOperation = {
      operationId: route.operationId,
      summary: route.summary,
      description: route.scope === null
        ? "Any valid credential may call this; no scope is needed."
        : `Requires scope \`${route.scope}\`.`,
      tags: [route.tag],
      security: SECURITY,
      ...(route.scope === null ? {} : { "x-required-scope": route.scope }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body !== undefined && plan.body !== undefined
        ? {
          requestBody: {
            required: !acceptsEmptyBody(route.body),
            content: { "application/json": { schema: inputResult.roots[plan.body]! } },
          },
        }
        : {}),
      responses,
    };
    const item = paths[route.path] ??= {};
    item[toOpenApiMethod(route.method)] = operation;
  }

  const errorSchema = outputResult.roots[errorRoot]!;
  return {
    openapi: "3.1.0",
    info: {
      title: "Print Shop API",
      version: "1.0.0",
      description: [
        "Every response is JSON. Success bodies are `{ status, message, data }`; failures are an",
        "`ErrorEnvelope` whose `error` code never changes meaning. Writes accept an optional",
        "`Idempotency-Key` header so that a retried request can be recognised.",
      ].join(" "),
    },
    servers: [{ url: "/" }],
    tags: uniqueTags(routes),
    paths,
    components: {
      schemas: sortKeys(schemas),
      responses: errorResponses(errorSchema),
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "Client-chosen key that identifies this write, so that a retry is not " +
            "applied twice. Reusing a key for a different request is refused with 409 " +
            "`idempotency_key_reused`; repeating one still in progress, with 409 " +
            "`idempotency_request_in_flight`.",
          schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

function assertUnique(routes: readonly RouteDef[]): void {
  const ids = new Set<string>();
  const endpoints = new Set<string>();
  for (const route of routes) {
    if (ids.has(route.operationId)) {
      throw new Error(`OpenAPI: operationId "${route.operationId}" is used twice`);
    }
    ids.add(route.operationId);
    const endpoint = `${route.method} ${route.path}`;
    if (endpoints.has(endpoint)) throw new Error(`OpenAPI: ${endpoint} is defined twice`);
    endpoints.add(endpoint);
  }
}

/** The gateway reads an empty body as `{}`, so a body is optional exactly when `{}` is valid. */
function acceptsEmptyBody(schema: z.ZodType): boolean {
  try {
    return schema.safeParse({}).success;
  } catch {
    // An async refinement cannot run synchronously; call the body required rather than guess.
    return false;
  }
}

function toOpenApiMethod(method: HttpMethod): OpenApiMethod {
  return method.toLowerCase() as OpenApiMethod;
}

function pathParameters(path: string): OpenApiParameter[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1]!,
    in: "path",
    required: true,
    schema: { type: "string", format: "uuid" },
  }));
}

function queryParameters(route: RouteDef, query: JsonSchema): OpenApiParameter[] {
  if (query.type !== "object" || typeof query.properties !== "object") {
    throw new Error(`OpenAPI: the query schema of ${route.operationId} must be a zod object`);
  }
  const required = new Set(Array.isArray(query.required) ? query.required : []);
  return Object.entries(asRecord(query.properties)).map(([name, value]) => {
    const schema = asRecord(value);
    return {
      name,
      in: "query",
      required: required.has(name),
      ...(typeof schema.description === "string" ? { description: schema.description } : {}),
      schema,
    };
  });
}

function errorStatuses(route: RouteDef): ErrorStatus[] {
  const statuses: ErrorStatus[] = [400, 401, 403, 404];
  // Writes can clash with state or with an idempotency key; only a body can be too large.
  if (WRITE_METHODS.has(route.method)) statuses.push(409);
  if (route.body) statuses.push(413);
  statuses.push(429, 500, 503);
  return statuses;
}

function errorResponses(errorSchema: JsonSchema): Record<string, OpenApiResponse> {
  const codesByStatus = new Map<ErrorStatus, ErrorCode[]>();
  for (const [code, status] of Object.entries(ERROR_CODES) as [ErrorCode, ErrorStatus][]) {
    codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, { name, title }] of Object.entries(ERROR_RESPONSES)) {
    const codes = codesByStatus.get(Number(status) as ErrorStatus) ?? [];
    const headers = ERROR_HEADERS[Number(status) as ErrorStatus];
    responses[name] = {
      description: `${title}. \`error\` is one of: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      ...(headers ? { headers } : {}),
      content: { "application/json": { schema: errorSchema } },
    };
  }
  return responses;
}

function uniqueTags(routes: readonly RouteDef[]): { name: string }[] {
  return [...new Set(routes.map((r) => r.tag))].map((name) => ({ name }));
}

/** Follows a `$ref` into `components/schemas`, for the few places that need the schema's shape. */
function resolve(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const target = ref.startsWith(SCHEMA_REF) ? components[ref.slice(SCHEMA_REF.length)] : undefined;
  if (target === undefined) throw new Error(`OpenAPI: unresolvable reference ${ref}`);
  return resolve(target, components);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

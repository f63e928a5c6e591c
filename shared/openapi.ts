import type { z } from "zod";
import { asRecord, type JsonSchema, SCHEMA_REF, SchemaSet } from "./json_schema.ts";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "./limits.ts";
import { COSTS_READ_FIELDS } from "./costs.ts";
import { COSTS_READ } from "./scopes.ts";
import { ErrorEnvelope, successEnvelope } from "./contracts/common.ts";
import type { SuccessStatus, TagDescriptions } from "./contracts/operation.ts";
import { gatewayContract, SERVICE_CONTRACTS } from "./contracts/platform.ts";
import {
  CONNECTION_ERROR_CODES,
  PUBLIC_ERROR_CODES,
  type PublicErrorCode,
  type PublicErrorStatus,
} from "./http/errors.ts";
import { type HttpMethod, type RouteDef, ROUTES } from "./routes.ts";
import {
  buildWebhooks,
  type OpenApiWebhooks,
  planWebhooks,
  WEBHOOK_HEADERS,
} from "./openapi_webhooks.ts";

/** A JSON Schema (draft 2020-12, the OpenAPI 3.1 dialect) as emitted by `z.toJSONSchema`. */
export type { JsonSchema } from "./json_schema.ts";
export type { OpenApiWebhookOperation, OpenApiWebhooks } from "./openapi_webhooks.ts";

export interface OpenApiReference {
  $ref: string;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
  /** What a client sends or receives; the tests check it against `schema`. */
  example?: unknown;
}

export interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
  example?: unknown;
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
  /** An error answer's possible `error` codes, as its description lists them, for tools. */
  "x-error-codes"?: PublicErrorCode[];
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
  /** How a list pages (paginationOf), for generators and the integrators' own loops. */
  "x-pagination"?: Pagination;
  /** Scopes needed besides `x-required-scope` (the pricing preview's `costs.read`). */
  "x-also-required-scopes"?: string[];
  parameters?: (OpenApiParameter | OpenApiReference)[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse | OpenApiReference>;
}

/**
 * A list's paging, in one shape for every list: which parameters move through it and where an
 * answer holds its rows and what comes next. Offset lists count every match (`total`, null when
 * the request said `count=false`) and say whether more follow (`hasMore`); cursor
 * lists hand back the next page's cursor (`next`), null on the last page; the event log hands
 * back the last event's id (`next`, to poll from later) and says whether more follow (`hasMore`).
 */
export type Pagination =
  | {
    style: "offset";
    limitParameter: "limit";
    offsetParameter: "offset";
    items: "data.items";
    total: "data.totalCount";
    hasMore: "data.hasMore";
  }
  | {
    style: "cursor";
    limitParameter: "limit";
    cursorParameter: "cursor" | "after";
    items: "data.items";
    next: "data.nextCursor" | "data.lastEventId";
    hasMore?: "data.hasMore";
  };

/**
 * The paging of an operation, read from its query's declaration (offsetListQuery,
 * cursorListQuery, the event log's `after`).
 */
export function paginationOf(query: z.ZodObject | undefined): Pagination | null {
  const shape = query?.shape ?? {};
  if (!("limit" in shape)) return null;
  if ("after" in shape) return EVENT_LOG_PAGING;
  if ("cursor" in shape) return CURSOR_PAGING;
  if ("offset" in shape) return OFFSET_PAGING;
  return null;
}

const OFFSET_PAGING: Pagination = {
  style: "offset",
  limitParameter: "limit",
  offsetParameter: "offset",
  items: "data.items",
  total: "data.totalCount",
  hasMore: "data.hasMore",
};
const CURSOR_PAGING: Pagination = {
  style: "cursor",
  limitParameter: "limit",
  cursorParameter: "cursor",
  items: "data.items",
  next: "data.nextCursor",
};
const EVENT_LOG_PAGING: Pagination = {
  style: "cursor",
  limitParameter: "limit",
  cursorParameter: "after",
  items: "data.items",
  next: "data.lastEventId",
  hasMore: "data.hasMore",
};

export type OpenApiMethod = "get" | "post" | "put" | "patch" | "delete";
export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

export type OpenApiSecurityScheme =
  | { type: "apiKey"; in: "header"; name: string; description: string }
  | { type: "http"; scheme: "bearer"; bearerFormat: string; description: string };

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description?: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, OpenApiPathItem>;
  /** What a subscription's URL is sent: one entry per event an integrator can subscribe to. */
  webhooks: OpenApiWebhooks;
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

interface ErrorResponseSpec {
  /** Its name under `components/responses`. */
  name: string;
  title: string;
  /** A typical answer; without one, the ErrorEnvelope schema's own example (a 400) is shown. */
  example?: { error: PublicErrorCode; message: string };
  /** The codes it carries, where fewer than every code of its status. */
  codes?: readonly PublicErrorCode[];
}

/**
 * Component name, summary and a typical answer of each error status; keyed by status so a new
 * one fails to compile. A status no operation can answer (405 is for a method the path does not
 * take, so no operation of the document) gets no component: the introduction tells of it.
 */
const ERROR_RESPONSES: Record<PublicErrorStatus, ErrorResponseSpec> = {
  400: { name: "BadRequest", title: "The request is malformed or fails validation" },
  401: {
    name: "Unauthorized",
    title: "The credential is missing, malformed or revoked",
    example: { error: "unauthenticated", message: "Invalid or revoked API key" },
  },
  403: {
    name: "Forbidden",
    title: "The credential may not do this: it lacks the operation's scope (or `costs.read` " +
      "for a cost or margin field), or names an organisation it may not act for",
    example: {
      error: "insufficient_scope",
      message: 'Setting "buyPrice" needs scope "costs.read"',
    },
  },
  404: {
    name: "NotFound",
    title: "No such row in this organisation (another organisation's looks exactly the same), " +
      "or a path that names no operation (an id that does not decode, such as `%FF`)",
    example: {
      error: "not_found",
      message: 'Quote "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60" was not found',
    },
  },
  405: {
    name: "MethodNotAllowed",
    title: "The path exists, but not with this method; `Allow` lists the methods it takes",
  },
  408: {
    name: "RequestTimeout",
    title: "The request's head or body did not arrive in time; the connection is closed",
    example: {
      error: "request_timeout",
      message: "The request head did not arrive within 10000 ms",
    },
  },
  409: {
    name: "Conflict",
    title: "Conflicts with the resource's state, or with an earlier request under the same " +
      "`Idempotency-Key`",
    example: {
      error: "conflict",
      message: 'Quote "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60" is sent; reopen it (status draft) ' +
        "before changing its rows",
    },
  },
  413: {
    name: "PayloadTooLarge",
    title: "The request body is over `maxBodyBytes` (GET /v1/reference/limits)",
    example: {
      error: "payload_too_large",
      message: "Request body exceeds the limit of 1048576 bytes",
    },
  },
  414: {
    name: "UriTooLong",
    title: "The URL (path and query) is longer than the gateway takes; the connection is closed",
    example: {
      error: "uri_too_long",
      message: "The URL is longer than 16384 bytes; send long filters in a request body",
    },
  },
  415: {
    name: "UnsupportedMediaType",
    title:
      "The request declares a compressed body (Content-Encoding); bodies are taken uncompressed",
    example: {
      error: "unsupported_media_type",
      message: 'Request bodies are accepted uncompressed only; drop Content-Encoding "gzip" and ' +
        "send the JSON as it is",
    },
  },
  429: {
    name: "TooManyRequests",
    title: "The credential's rate limit is exhausted, or its address has tried too many unknown " +
      "credentials; retry after `Retry-After` seconds",
    example: { error: "rate_limited", message: "Rate limit of 600 requests per minute exceeded" },
  },
  431: {
    name: "RequestHeaderFieldsTooLarge",
    title: "The request's header fields are too large or too many; the connection is closed",
    example: {
      error: "request_header_fields_too_large",
      message: "The request's header fields exceed 32768 bytes or 100 fields; send fewer or " +
        "shorter headers",
    },
  },
  500: {
    name: "InternalError",
    title: "An unexpected failure, logged under the request id; a retry may succeed",
    example: {
      error: "internal_error",
      message: "Unexpected server error (request id 0193a1b4-5d6e-7f80-9a1b-2c3d4e5f6a7b)",
    },
  },
  503: {
    name: "ServiceUnavailable",
    title: "A service behind the gateway, or the partner identity provider, is not answering, or " +
      "the gateway is at its connection limit",
    example: { error: "service_unavailable", message: "The quotes service is unavailable" },
  },
};

/**
 * The 404 of an operation that looks no id up (or answers an unknown one with success): only a
 * path that names no operation, such as the operation's own spelt otherwise (a trailing slash,
 * a percent-encoded letter), since the gateway matches paths as sent.
 */
const ROUTE_NOT_FOUND: ErrorResponseSpec = {
  name: "RouteNotFound",
  title: "The path names no operation: it is matched as sent, so spell it as the document does",
  codes: ["route_not_found"],
  example: {
    error: "route_not_found",
    message: "No endpoint GET /v1/quotes/; the operations are listed at /docs",
  },
};

/**
 * Statuses every request can be answered with, whatever operation it is aimed at: the edge's own
 * refusals before an operation is chosen (CONNECTION_ERROR_CODES), and what the edge and the
 * gateway check of every request (gateway/edge/, gateway/app.ts): a declared or actual body over
 * the limit or compressed (a GET can send either header), validation (an undeclared query
 * parameter or body too), the credential, its scope or organisation, the rate limit (the
 * credential's, or its address's unknown credentials), a bug, a service down or the connection cap.
 */
const EVERY_REQUEST: ReadonlySet<PublicErrorStatus> = new Set([
  ...Object.values(CONNECTION_ERROR_CODES),
  400,
  401,
  403,
  413,
  415,
  429,
  500,
  503,
]);

const ERROR_HEADERS: Partial<Record<PublicErrorStatus, Record<string, OpenApiHeader>>> = {
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
      description: "Whole seconds until the credential's bucket (or, after unknown " +
        "credentials, its address's) holds a token again.",
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
  // Event data is sent as answers are, and is mostly the same schemas (Quote, Task, …).
  const webhookPlans = planWebhooks(output);

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
  annotateCostFields([...Object.values(schemas), ...outputResult.roots, ...inputResult.roots]);

  const paths: Record<string, OpenApiPathItem> = {};
  /** The error components some operation refers to, by name. */
  const answered = new Map<string, [PublicErrorStatus, ErrorResponseSpec]>();
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
    const answers: JsonSchema[] = [];
    for (const { status, root } of plan.responses) {
      const headers = WRITE_METHODS.has(route.method)
        ? { ...SUCCESS_HEADERS, ...REPLAY_HEADER }
        : SUCCESS_HEADERS;
      if (root === undefined) {
        responses[status] = { description: "No content", headers };
        continue;
      }
      const schema = outputResult.roots[root]!;
      answers.push(schema);
      const data = route.examples?.responses?.[Number(status) as SuccessStatus];
      const example = envelopeExample(schema, data, schemas);
      responses[status] = {
        description: status === "201" ? "Created" : "OK",
        headers,
        content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } },
      };
    }
    for (const [status, spec] of errorAnswers(route)) {
      answered.set(spec.name, [status, spec]);
      responses[String(status)] = { $ref: `#/components/responses/${spec.name}` };
    }

    const body = plan.body === undefined ? undefined : inputResult.roots[plan.body]!;
    const bodyExample = route.examples?.body ??
      (body === undefined ? undefined : exampleOf(body, schemas));
    const bodyDescription = body === undefined ? undefined : resolve(body, schemas).description;
    const pagination = paginationOf(route.query);
    const operation: OpenApiOperation = {
      operationId: route.operationId,
      summary: route.summary,
      description: operationDescription(
        route,
        costFieldsIn(body === undefined ? answers : [body, ...answers], schemas),
      ),
      tags: [route.tag],
      security: SECURITY,
      ...(route.scope === null ? {} : { "x-required-scope": route.scope }),
      ...(route.alsoRequires ? { "x-also-required-scopes": [...route.alsoRequires] } : {}),
      ...(pagination === null ? {} : { "x-pagination": pagination }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body !== undefined && body !== undefined
        ? {
          requestBody: {
            ...(typeof bodyDescription === "string" ? { description: bodyDescription } : {}),
            required: !acceptsEmptyBody(route.body),
            content: {
              "application/json": {
                schema: body,
                ...(bodyExample === undefined ? {} : { example: bodyExample }),
              },
            },
          },
        }
        : {}),
      responses,
    };
    const item = paths[route.path] ??= {};
    item[toOpenApiMethod(route.method)] = operation;
  }

  const webhooks = buildWebhooks(webhookPlans, outputResult.roots, routes, {
    example: (schema) => exampleOf(schema, schemas),
    costFields: (schema) => costFieldsIn([schema], schemas),
    components: schemas,
  });
  const tags = uniqueTags(routes);
  for (const { post } of Object.values(webhooks)) {
    for (const name of post.tags) {
      if (tags.some((t) => t.name === name)) continue;
      const description = [...TAGS_BY_OWNER.values()].find((owned) => name in owned)?.[name];
      tags.push({ name, ...(description === undefined ? {} : { description }) });
    }
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
        costFieldsNote(),
        unansweredNote(new Set([...answered.values()].map(([status]) => status))),
      ].join(" "),
    },
    servers: [{ url: "/" }],
    tags,
    paths,
    webhooks,
    components: {
      schemas: sortKeys(schemas),
      responses: errorResponses(errorSchema, answered, schemas),
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
        ...WEBHOOK_HEADERS,
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
    // `markupGroupId` → "The markup group's id".
    description: `The ${
      match[1]!.replace(/Id$/, "").replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase()
    }'s id`,
    schema: { type: "string", format: "uuid" },
  }));
}

function queryParameters(route: RouteDef, query: JsonSchema): OpenApiParameter[] {
  if (query.type !== "object" || typeof query.properties !== "object") {
    throw new Error(`OpenAPI: the query schema of ${route.operationId} must be a zod object`);
  }
  const required = new Set(Array.isArray(query.required) ? query.required : []);
  return Object.entries(asRecord(query.properties)).map(([name, value]) => {
    // The description is the parameter's; its schema need not say it again.
    const { description, ...schema } = asRecord(value);
    const example = route.examples?.query?.[name];
    return {
      name,
      in: "query",
      required: required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema,
      ...(example === undefined ? {} : { example }),
    };
  });
}

/**
 * The error answers an operation can give, in status order: what every request can meet, and
 * what its declaration adds (an id to look up, a write).
 */
function errorAnswers(route: RouteDef): [PublicErrorStatus, ErrorResponseSpec][] {
  const statuses = new Set(EVERY_REQUEST);
  // A path that names no operation is 404 whatever it was aimed at; an id in the path may also
  // name nothing this organisation has.
  statuses.add(404);
  const looksUpId = /\{\w+\}/.test(route.path) && route.unknownIdSucceeds !== true;
  // A write can clash with the row's state or with an earlier use of its Idempotency-Key.
  if (WRITE_METHODS.has(route.method)) statuses.add(409);
  return [...statuses].sort((a, b) => a - b).map((status) => [
    status,
    status === 404 && !looksUpId ? ROUTE_NOT_FOUND : ERROR_RESPONSES[status],
  ]);
}

function errorCodesOf(status: PublicErrorStatus): PublicErrorCode[] {
  return (Object.keys(PUBLIC_ERROR_CODES) as PublicErrorCode[]).filter((code) =>
    PUBLIC_ERROR_CODES[code] === status
  );
}

/** A component for each error answer some operation gives, with a typical answer as its example. */
function errorResponses(
  errorSchema: JsonSchema,
  answered: ReadonlyMap<string, [PublicErrorStatus, ErrorResponseSpec]>,
  components: Record<string, JsonSchema>,
): Record<string, OpenApiResponse> {
  const responses: Record<string, OpenApiResponse> = {};
  const byStatus = [...answered.values()].sort(([a], [b]) => a - b);
  for (const [status, { name, title, example, codes: only }] of byStatus) {
    const codes = only === undefined ? errorCodesOf(status) : [...only];
    const headers = ERROR_HEADERS[status];
    const shown = example === undefined
      ? exampleOf(errorSchema, components)
      : { ...example, status: false };
    responses[name] = {
      description: `${title}. \`error\` is one of: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      "x-error-codes": codes,
      ...(headers ? { headers } : {}),
      content: {
        "application/json": {
          schema: errorSchema,
          ...(shown === undefined ? {} : { example: shown }),
        },
      },
    };
  }
  return responses;
}

/**
 * The document's word on statuses no operation answers (405), and on the edge's own refusals,
 * which every operation lists but which end the connection too.
 */
function unansweredNote(answered: ReadonlySet<PublicErrorStatus>): string {
  const unanswered = (Object.keys(ERROR_RESPONSES).map(Number) as PublicErrorStatus[])
    .filter((status) => !answered.has(status))
    .map((status) => {
      const codes = errorCodesOf(status).map((c) => `\`${c}\``).join(", ");
      return `${status} ${codes} (${ERROR_RESPONSES[status].title})`;
    });
  const edge = Object.entries(CONNECTION_ERROR_CODES).map(([code, status]) =>
    `${status} \`${code}\``
  );
  return [
    ...(unanswered.length > 0
      ? [`Beyond what each operation lists: ${unanswered.join("; ")}.`]
      : []),
    `The gateway's edge may answer ${
      edge.join(", ")
    } before a request reaches an operation, and then closes the connection; every operation ` +
    "lists these statuses too.",
  ].join(" ");
}

/** The fields costs.read governs, matched by name at any depth as shared/costs.ts matches them. */
const RESTRICTED_FIELDS: ReadonlySet<string> = new Set(COSTS_READ_FIELDS);

function costFieldsNote(): string {
  return `Cost and margin fields (${
    COSTS_READ_FIELDS.map((f) => `\`${f}\``).join(", ")
  }) are answered and accepted only with scope \`${COSTS_READ}\`: without it they are absent ` +
    `from every answer, webhook and event log entry, and a write that sets one is refused with ` +
    `403 \`insufficient_scope\`.`;
}

/** Appends the costs.read rule to each cost or margin property's description, wherever it is. */
function annotateCostFields(schemas: readonly JsonSchema[]): void {
  const seen = new WeakSet<object>();
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const schema = node as JsonSchema;
    for (const [name, value] of Object.entries(asRecord(schema.properties))) {
      const property = asRecord(value);
      if (!RESTRICTED_FIELDS.has(name)) {
        visit(property);
        continue;
      }
      // Nothing inside a restricted field is visible without the scope either, so the note on
      // the field itself is enough.
      const note =
        `needs scope \`${COSTS_READ}\` (absent without it; setting it without it is 403)`;
      property.description = typeof property.description === "string"
        ? `${property.description}; ${note}`
        : note.charAt(0).toUpperCase() + note.slice(1);
    }
    for (const key of ["items", "prefixItems", "anyOf", "oneOf", "allOf", "additionalProperties"]) {
      visit(schema[key]);
    }
  };
  for (const schema of schemas) visit(schema);
}

/** The cost and margin fields an operation's body or answers contain, in the list's order. */
function costFieldsIn(
  roots: readonly JsonSchema[],
  components: Record<string, JsonSchema>,
): string[] {
  const found = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const schema = node as JsonSchema;
    if (typeof schema.$ref === "string") visit(resolve(schema, components));
    for (const [name, value] of Object.entries(asRecord(schema.properties))) {
      if (RESTRICTED_FIELDS.has(name)) found.add(name);
      visit(value);
    }
    for (const key of ["items", "prefixItems", "anyOf", "oneOf", "allOf", "additionalProperties"]) {
      visit(schema[key]);
    }
  };
  for (const root of roots) visit(root);
  return COSTS_READ_FIELDS.filter((field) => found.has(field));
}

/** Who may call the operation, in words (the same as `x-required-scope`), and its cost fields. */
function operationDescription(route: RouteDef, costFields: readonly string[]): string {
  const scope = route.scope === null
    ? "Any valid credential may call this; no scope is needed."
    : `Requires scope \`${route.scope}\`.${
      (route.alsoRequires ?? []).map((also) => ` It needs \`${also}\` as well.`).join("")
    }`;
  // An operation that needs costs.read outright has no fields apart that need it.
  if (costFields.length === 0 || route.alsoRequires?.includes(COSTS_READ)) return scope;
  return `${scope} Its cost and margin fields (${
    costFields.map((f) => `\`${f}\``).join(", ")
  }) are answered and accepted only with \`${COSTS_READ}\` as well.`;
}

/**
 * An example of a schema from the examples its parts declare: the schema's own first example,
 * else one put together from its properties and items. Undefined when a required part has none,
 * so a missing example shows in the tests instead of one made up from the schema's limits.
 */
function exampleOf(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  refs: ReadonlySet<string> = new Set(),
): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const ref = schema.$ref;
  if (typeof ref === "string") {
    // A recursive schema has no finite example of its own making.
    if (refs.has(ref)) return undefined;
    return exampleOf(resolve(schema, components), components, new Set([...refs, ref]));
  }
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const branches = [
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : []),
  ].map(asRecord);
  if (branches.length > 0) {
    for (const branch of branches) {
      if (branch.type === "null") continue;
      const example = exampleOf(branch, components, refs);
      if (example !== undefined) return example;
    }
    return branches.some((b) => b.type === "null") ? null : undefined;
  }
  if (schema.type === "object" && typeof schema.properties === "object") {
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const example: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(asRecord(schema.properties))) {
      const part = exampleOf(asRecord(value), components, refs);
      if (part !== undefined) example[name] = part;
      else if (required.has(name)) return undefined;
    }
    return example;
  }
  if (schema.type === "array" && typeof schema.items === "object") {
    const item = exampleOf(asRecord(schema.items), components, refs);
    return item === undefined ? undefined : [item];
  }
  return undefined;
}

/** The success envelope's example: `data` as the operation declares it, else its schema's. */
function envelopeExample(
  envelope: JsonSchema,
  data: unknown,
  components: Record<string, JsonSchema>,
): unknown {
  const properties = asRecord(envelope.properties);
  const example = {
    status: exampleOf(asRecord(properties.status), components),
    message: exampleOf(asRecord(properties.message), components),
    data: data ?? exampleOf(asRecord(properties.data), components),
  };
  return Object.values(example).some((part) => part === undefined) ? undefined : example;
}

/** Each owner's declared tags: a tag's description is the one its own service gives it. */
const TAGS_BY_OWNER: ReadonlyMap<string, TagDescriptions> = new Map(
  [gatewayContract, ...SERVICE_CONTRACTS].map((c) => [c.service, c.tags]),
);

/** The document's tags in the order the operations first use them, each described by its owner. */
function uniqueTags(routes: readonly RouteDef[]): { name: string; description?: string }[] {
  const first = new Map<string, RouteDef>();
  for (const route of routes) if (!first.has(route.tag)) first.set(route.tag, route);
  return [...first].map(([name, route]) => {
    const description = TAGS_BY_OWNER.get(route.service)?.[name];
    return { name, ...(description === undefined ? {} : { description }) };
  });
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

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
 * made valid, a body field naming a resource the sweep does not know) fails the sweep by name.
 * What it knows per resource is its service's: each service's module in `e2e/sweep/` gives the
 * fixtures it creates, which fixture each path parameter and id-holding body field names, and
 * the valid bodies its schemas cannot give.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { z } from "zod";
import { type RouteDef, ROUTES, RouteTable, SERVICES } from "@printshop/shared/routes";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { COSTS_READ_FIELDS } from "@printshop/shared/costs";
import { connect } from "@printshop/shared/db";
import {
  startTestStack,
  startWebhookReceiver,
  type Tenant,
  type TestStack,
} from "@printshop/shared/testing";
import { ConfigSchema } from "../gateway/config.ts";
import { createResponseChecker, type ResponseChecker } from "../gateway/response_checks.ts";
import { assertTenantVisibility } from "./tenancy.ts";
import {
  Fixture,
  type ServiceSweep,
  type SweepClient,
  SWEEPS,
  UNRESOLVED_EVERYWHERE,
} from "./sweep/mod.ts";

type Json = Record<string, unknown>;
type JsonSchema = Json;

const SWEEP_OF: ReadonlyMap<string, ServiceSweep> = new Map(SWEEPS.map((m) => [m.service, m]));

/**
 * What the sweep knows of the route's service, from its module. The gateway's own operations
 * have no path ids and no bodies, so it has none.
 */
const sweepOf = (route: RouteDef): Partial<ServiceSweep> => SWEEP_OF.get(route.service) ?? {};

/** Where a module is, for the messages that ask for one of its facts. */
const moduleOf = (route: RouteDef): string => `e2e/sweep/${route.service}.ts`;

/** Whether a UUID body field of the route's service names nothing the sweep can resolve. */
const unresolved = (route: RouteDef, field: string): boolean =>
  UNRESOLVED_EVERYWHERE[field] !== undefined || sweepOf(route).unresolved?.[field] !== undefined;

const REQUEST_TIMEOUT_MS = 15_000;
let requests = 0;
/** Ids of A's that B put as its own (PUT), whose events the final comparison leaves out. */
const claimedIds = new Set<string>();
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
    ids[name!] = fixture.id(sweepOf(route).params?.[name!] ?? `{${name}}`);
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

/** Calls as `tenant`, through `send`, for the modules that create and read back fixtures. */
function clientOf(stack: TestStack, tenant: Tenant): SweepClient {
  const post = (path: string, body: unknown): Promise<Answer> =>
    send(stack, tenant.apiKey, "POST", path, JSON.stringify(body));
  return {
    async create(path, body) {
      const answer = await post(path, body);
      assert(answer.status === 201 || answer.status === 200, `${path}: ${answer.text}`);
      return (answer.body.data as { id: string }).id;
    },
    async post(path, body, status) {
      const answer = await post(path, body);
      assertEquals(answer.status, status, answer.text);
      return answer.body.data;
    },
    async get(path) {
      const answer = await send(stack, tenant.apiKey, "GET", path);
      assertEquals(answer.status, 200, `${path}: ${answer.text}`);
      return answer.body.data;
    },
  };
}

/** Everything an organisation can read back, by service: the "nothing written" view. */
async function snapshot(stack: TestStack, tenant: Tenant, fixture: Fixture): Promise<unknown> {
  const client = clientOf(stack, tenant);
  const view: Record<string, Record<string, unknown>> = {};
  for (const sweep of SWEEPS) {
    const reads: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(sweep.snapshot(fixture))) {
      reads[name] = await client.get(path);
    }
    view[sweep.service] = reads;
  }
  return view;
}

async function outboxes(stack: TestStack): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const schema of ["gateway", ...SERVICES]) {
    const sql = connect(stack.db.url, { schema, max: 1 });
    try {
      all[schema] = [...await sql`SELECT id, type, aggregate_id FROM outbox ORDER BY id`];
    } finally {
      await sql.end();
    }
  }
  return all;
}

/** One organisation's fixtures: each module's, in the order `SWEEPS` lists them, then settled. */
async function createFixture(
  stack: TestStack,
  tenant: Tenant,
  receiverUrl: string,
): Promise<Fixture> {
  const client = clientOf(stack, tenant);
  const ids = new Map<string, string>();
  const add = (sweep: ServiceSweep, made: Record<string, string>): void => {
    for (const [name, id] of Object.entries(made)) {
      assert(!ids.has(name), `fixture "${name}" is created by ${sweep.service} and another module`);
      ids.set(name, id);
    }
  };
  for (const sweep of SWEEPS) {
    add(sweep, await sweep.create(client, new Fixture(new Map(ids)), receiverUrl));
  }
  for (const sweep of SWEEPS) {
    if (sweep.settle) add(sweep, await sweep.settle(client, new Fixture(new Map(ids))));
  }
  return new Fixture(ids);
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
    for (const sweep of SWEEPS) {
      // An operation a module names that its service does not have: a typo or a leftover.
      const own = new Set(
        ROUTES.filter((r) => r.service === sweep.service).map((r) => r.operationId),
      );
      const named = [sweep.crossService, sweep.validBodies, sweep.rowIdBodies].flatMap((table) =>
        Object.keys(table ?? {})
      );
      for (const operationId of named.filter((id) => !own.has(id))) {
        problems.push(
          `e2e/sweep/${sweep.service}.ts names ${operationId}, not one of its operations`,
        );
      }
    }
    for (const route of ROUTES) {
      const sweep = sweepOf(route);
      for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
        const fixture = sweep.params?.[name!];
        if (!fixture) {
          problems.push(`${route.operationId}: no fixture for {${name}} (in ${moduleOf(route)})`);
        } else if (!fa.has(fixture)) {
          problems.push(
            `${route.operationId}: {${name}} takes "${fixture}", which no module creates`,
          );
        }
      }
      if (!route.body) continue;
      const schema = toSchema(route.body);
      for (const { field, path } of referencePaths(schema, schema)) {
        const fixture = sweep.references?.[field];
        if (!fixture && !unresolved(route, field)) {
          problems.push(
            `${route.operationId}: body field "${
              path.join(".")
            }" names a resource the sweep does not know (say which in ${moduleOf(route)})`,
          );
        } else if (fixture && !fa.has(fixture)) {
          problems.push(
            `${route.operationId}: "${field}" names "${fixture}", which no module creates`,
          );
        }
      }
      const body = validBody(route, fa, receiver.url);
      const parsed = route.body.safeParse(body);
      if (!parsed.success) {
        problems.push(
          `${route.operationId}: no valid body (give it one in ${moduleOf(route)}): ` +
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
        // Create-or-replace with a client's id: ids are per organisation, so B putting A's id
        // makes B's own row (A's is untouched: the final snapshot), which is then deleted again;
        // the events of that row are left out of the outbox comparison.
        await t.step("another organisation's id makes this one's own row", async () => {
          const theirs = await send(stack, b.apiKey, route.method, path, validText);
          assert(theirs.status === 201, `${op}: B puts A's id: ${theirs.status} ${theirs.text}`);
          assertEquals((theirs.body.data as Json | undefined)?.id, path.split("/").at(-1));
          const gone = await send(stack, b.apiKey, "DELETE", path);
          assert(gone.status < 300, `${op}: B deletes its own: ${gone.status} ${gone.text}`);
          claimedIds.add(path.split("/").at(-1)!);
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
          const sweep = sweepOf(route);
          const kept = sweep.crossService?.[route.operationId] ?? {};
          const references = referencePaths(schema, schema).filter((r) =>
            sweep.references?.[r.field] && !kept[r.field]
          );
          const ownPath = fill(route, pathIds(route, fb));
          for (const { field, path: at } of references) {
            const body = withValueAt(
              validBody(route, fb, receiver.url),
              at,
              fa.id(sweep.references![field]!),
            );
            if (body === null) continue;
            const answer = await send(stack, b.apiKey, route.method, ownPath, JSON.stringify(body));
            assertRefused(answer, `${op}: B names A's ${at.join(".")}`, [400, 404, 409]);
          }
          const rows = sweep.rowIdBodies?.[route.operationId];
          if (rows) {
            const answer = await send(
              stack,
              b.apiKey,
              route.method,
              ownPath,
              JSON.stringify(validBody(route, fa, receiver.url)),
            );
            assertRefused(answer, `${op}: B sends A's row ids (${rows})`, [400, 404, 409]);
          }
        });
      }

      for (const scope of [route.scope, ...(route.alsoRequires ?? [])]) {
        if (scope === null) continue;
        await t.step(`without ${scope}: 403 naming it`, async () => {
          const answer = await send(stack, lacking.get(scope)!, route.method, path, validText);
          assertRefused(answer, `${op}: without ${scope}`, 403);
          assertEquals(answer.body.error, "insufficient_scope");
          assert(String(answer.body.message).includes(scope), answer.text);
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
    // Rows of ids B made its own by PUT (and deleted) are B's events, not A's changes.
    const unclaimed = (all: Record<string, unknown[]>): Record<string, unknown[]> =>
      Object.fromEntries(
        Object.entries(all).map(([schema, rows]) => [
          schema,
          rows.filter((row) => !claimedIds.has((row as { aggregate_id: string }).aggregate_id)),
        ]),
      );
    assertEquals(unclaimed(await outboxes(stack)), unclaimed(before.outboxes));
    console.log(`the sweep sent ${requests} requests over ${ROUTES.length} operations`);
  });

  // The services answered all of the above as the runtime role, under the policies; with both
  // organisations' fixtures in place, what that role sees of each tenant table is checked too.
  await t.step(
    "every tenant table, as the runtime role: a's rows with a set, none with none",
    async () => {
      await fillTenantTables(stack, [[a, fa], [b, fb]]);
      const checked = await assertTenantVisibility(
        stack.db.url,
        stack.db.appUrl,
        a.organizationId,
        UNFILLED_TENANT_TABLES,
      );
      console.log(`${checked} tenant tables checked`);
    },
  );
});

/**
 * Tenant tables no organisation's request ever fills, each with why; the policy these have is the
 * one every tenant table has (e2e/tenancy_test.ts).
 */
const UNFILLED_TENANT_TABLES: Readonly<Record<string, string>> = {
  "webhooks.outbox": "the webhooks service writes no events; every schema has the outbox table",
};

/**
 * What the fixtures leave empty, made for each organisation after the sweep (whose snapshots it
 * would change): catalogue settings, a proof showing a mock and sent (mail, its proofs, the
 * approval link, history), a partner grant and a revoked key (the gateway's outbox and grants,
 * and the webhooks service's record of both, which its consumer writes a moment later).
 */
async function fillTenantTables(
  stack: TestStack,
  tenants: readonly [Tenant, Fixture][],
): Promise<void> {
  const app = await stack.admin<{ data: { id: string } }>("POST", "/admin/partner-apps", {
    name: "Sweep partner",
    scopes: ["quotes.read"],
  });
  for (const [tenant, fixture] of tenants) {
    const call = async (
      method: string,
      path: string,
      body: unknown,
      status: number,
    ): Promise<{ data: { id: string } }> => {
      const res = await stack.call(tenant.apiKey, method, path, body);
      const text = await res.text();
      assertEquals(res.status, status, `${method} ${path}: ${text}`);
      return JSON.parse(text) as { data: { id: string } };
    };
    await call("PATCH", "/v1/catalogue-settings", { allowNegativeStock: true }, 200);
    const proof = await call("POST", "/v1/proofs", {
      quoteId: fixture.id("quoteId"),
      recipientName: "Sweep",
      recipientEmail: "sweep@example.com",
      mockIds: [fixture.id("mockId")],
    }, 201);
    await call("POST", `/v1/proofs/${proof.data.id}/send`, {}, 200);
    await stack.admin("POST", `/admin/partner-apps/${app.data.id}/grants`, {
      organizationId: tenant.organizationId,
      scopes: ["quotes.read"],
    });
    const key = await stack.admin<{ data: { id: string } }>(
      "POST",
      `/admin/organizations/${tenant.organizationId}/api-keys`,
      { scopes: ["quotes.read"] },
    );
    await stack.admin("DELETE", `/admin/api-keys/${key.data.id}`);
  }
  const sql = connect(stack.db.url, { schema: "webhooks", max: 1 });
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [row] = await sql<{ grants: number; revoked: number }[]>`
        SELECT (SELECT count(DISTINCT organization_id) FROM partner_grant_versions)::int AS grants,
          (SELECT count(DISTINCT organization_id) FROM revoked_credentials)::int AS revoked`;
      if (row!.grants >= tenants.length && row!.revoked >= tenants.length) break;
      assert(Date.now() < deadline, `the webhooks consumer did not record: ${JSON.stringify(row)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await sql.end();
  }
}

/** A body the operation accepts: an override, or the required fields the schema generates. */
function validBody(route: RouteDef, fixture: Fixture, receiverUrl: string): unknown {
  const override = sweepOf(route).validBodies?.[route.operationId];
  if (override) return override(fixture, receiverUrl);
  if (!route.body) return {};
  const schema = toSchema(route.body);
  return generate(schema, schema);
}

import { missingScope } from "@printshop/shared/scopes";
import { type Context, Hono } from "hono";
import type { Sql } from "@printshop/shared/db";
import { ApiError, envelope, errorBody, insufficientScope, ok } from "@printshop/shared/http";
import { assertMatches, CONTRACT_CHECKS } from "@printshop/shared/contract-checks";
import type { Logger } from "@printshop/shared/log";
import {
  type RouteDef,
  type RouteMatch,
  ROUTES,
  RouteTable,
  type ServiceName,
  SERVICES,
} from "@printshop/shared/routes";
import type { gatewayContract } from "@printshop/shared/contracts/gateway";
import type { DataOf } from "@printshop/shared/contracts";
import { parseOperationInput } from "@printshop/shared/http/operation-input";
import {
  errorToResponse,
  requestContext,
  type RequestVariables,
} from "@printshop/shared/service-defaults";
import type { ContextKey } from "@printshop/shared/internal-context";
import type { Config } from "./config.ts";
import type { Authenticator, Principal } from "./auth.ts";
import { idempotencyKeyOf, withIdempotency } from "./idempotency.ts";
import { rateLimitHeaders, retryAfterSeconds } from "./domain/token_bucket.ts";
import type { RateLimiter } from "./rate_limiter.ts";
import { assertIdentityEncoding, assertJson, readLimitedBody } from "./body.ts";
import { proxyToService } from "./proxy.ts";
import { describeCaller, describeLimits } from "./routes/account.ts";
import { docsRoutes } from "./routes/docs.ts";
import { checkServices } from "./health.ts";
import { addPublicPages } from "./pages.ts";
import {
  EDGE_CLIENT_HEADER,
  type StampedConnection,
  stampedConnection,
} from "./edge/client_stamp.ts";
import { cidrMatcher } from "./domain/cidr.ts";
import { forwardedClient } from "./domain/forwarded.ts";
import { rateLimitRefusals } from "@printshop/shared/metrics";
import { addressGroup } from "./domain/address_group.ts";
import type { ResponseChecker } from "./response_checks.ts";

// Loaded only under contract checks: production never pays for validating its answers.
const responseChecker: ResponseChecker | null = CONTRACT_CHECKS
  ? (await import("./response_checks.ts")).createResponseChecker()
  : null;

export interface GatewayDeps {
  config: Config;
  sql: Sql;
  logger: Logger;
  contextKey: ContextKey;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  /** Where customers reach the gateway (PUBLIC_URL, or the public port's address). */
  publicUrl: () => string;
  /** The token of the edge's client stamp (edge/client_stamp.ts), when the app is behind it. */
  clientToken?: string;
  fetch?: typeof fetch;
}

export type GatewayEnv = { Variables: RequestVariables & { principal?: Principal } };

/** Who sent a request. */
export interface RequestClient {
  /**
   * The connection's client: the peer, or the client a trusted proxy's PROXY header named. What
   * per-address limits count by.
   */
  connection: string | null;
  /**
   * The request's client: the connection's, or, through a trusted proxy, the one its
   * `Forwarded` / `X-Forwarded-For` names. What the access line and approval evidence record.
   */
  request: string | null;
}

/** The gateway's own operations, answered from the caller's principal (one per declaration). */
type LocalHandlers = {
  [K in keyof GatewayOperations]: (
    principal: Principal,
  ) => DataOf<GatewayOperations[K], 200>;
};
type GatewayOperations = typeof gatewayContract.operations;

/**
 * The route table split by method and number of path segments, the only routes a path can
 * match: the same answers as the whole table's (literal segments still beat parameters), from a
 * scan of a few routes rather than all of them. `methodsAt` (the 405's Allow) asks the whole.
 */
export class RouteIndex {
  #byShape = new Map<string, RouteTable>();

  constructor(private readonly table: RouteTable, routes: readonly RouteDef[] = ROUTES) {
    const groups = new Map<string, RouteDef[]>();
    for (const route of routes) {
      const shape = `${route.method} ${route.path.split("/").length}`;
      const group = groups.get(shape);
      if (group) group.push(route);
      else groups.set(shape, [route]);
    }
    for (const [shape, group] of groups) this.#byShape.set(shape, new RouteTable(group));
  }

  match(method: string, path: string): RouteMatch | null {
    return this.#byShape.get(`${method} ${path.split("/").length}`)?.match(method, path) ?? null;
  }

  methodsAt(path: string): string[] {
    return this.table.methodsAt(path);
  }
}

export function serviceUrls(config: Config): Record<ServiceName, string> {
  return {
    quotes: config.QUOTES_URL,
    catalogue: config.CATALOGUE_URL,
    crm: config.CRM_URL,
    proofs: config.PROOFS_URL,
    webhooks: config.WEBHOOKS_URL,
  };
}

/**
 * The public gateway. Each /v1 request passes, in order: body limit (413), credential (401, or
 * 429 for a credential it does not know from an address that has failed too often),
 * organisation header (403), route lookup (404), scope (403), JSON check (400), then either a
 * gateway-owned handler or the owning service with a signed internal context.
 */
export function createGatewayApp(deps: GatewayDeps): Hono<GatewayEnv> {
  const { config, sql, contextKey } = deps;
  const trustedProxy = cidrMatcher(config.TRUSTED_PROXIES);
  /**
   * Who sent a request, as this app knows it: every per-address rule (failed credentials, the
   * public pages) and every record of a client (the access line, approval evidence) asks here
   * and nowhere else.
   */
  const clientOf = (c: Context): RequestClient => {
    // Through the edge the peer is the edge itself; the edge stamps who the client is.
    let stamped: StampedConnection | null = null;
    if (deps.clientToken !== undefined) {
      stamped = stampedConnection(c.req.header(EDGE_CLIENT_HEADER) ?? null, deps.clientToken);
    } else {
      const remote = (c.env as Deno.ServeHandlerInfo | undefined)?.remoteAddr;
      if (remote?.transport === "tcp") {
        stamped = { address: remote.hostname, proxied: trustedProxy(remote.hostname) };
      }
    }
    if (stamped === null) return { connection: null, request: null };
    if (!stamped.proxied) return { connection: stamped.address, request: stamped.address };
    const forwarded = {
      forwarded: c.req.header("forwarded") ?? null,
      xForwardedFor: c.req.header("x-forwarded-for") ?? null,
    };
    return {
      connection: stamped.address,
      request: forwardedClient(forwarded, trustedProxy, stamped.address),
    };
  };
  const app = new Hono<GatewayEnv>();
  const table = new RouteTable();
  const routes = new RouteIndex(table);
  const urls = serviceUrls(config);
  const local: LocalHandlers = {
    getMe: (principal) => describeCaller(principal),
    getLimits: (principal) => describeLimits(config, principal),
  };
  /**
   * The gateway's own answers, by principal: each is a function of the principal alone, and a
   * principal is one object for as long as the authenticator keeps it, so a busy caller's answer
   * is serialized once rather than on every request.
   */
  const answers = new WeakMap<Principal, Map<string, string>>();
  /** Operations whose empty input (no parameter, query or body) has passed validation once. */
  const acceptsNothing = new Set<string>();

  /** The JSON text of a gateway-owned operation's answer, its input validated first. */
  const answerLocally = (
    route: RouteDef,
    params: Record<string, string>,
    search: string,
    body: Uint8Array | null,
    principal: Principal,
  ): string => {
    const empty = search === "" && body === null && Object.keys(params).length === 0;
    if (!(empty && acceptsNothing.has(route.operationId))) {
      // Validated as a service validates its own operations: no undeclared query or body.
      parseOperationInput(route, {
        params,
        query: search,
        body: body ? new TextDecoder().decode(body) : "",
      });
      // Validation is a function of the input: the same empty input passes every time.
      if (empty) acceptsNothing.add(route.operationId);
    }
    let byOperation = answers.get(principal);
    const cached = byOperation?.get(route.operationId);
    if (cached !== undefined && !CONTRACT_CHECKS) return cached;
    const handler = local[route.operationId as keyof GatewayOperations];
    const data = handler(principal);
    if (CONTRACT_CHECKS) {
      assertMatches(route.responses[200]!, data, `The 200 answer of ${route.operationId}`);
    }
    const text = JSON.stringify(envelope(data));
    if (!byOperation) answers.set(principal, byOperation = new Map());
    byOperation.set(route.operationId, text);
    return text;
  };

  // The access line names the client, as proxies in front said it where they are trusted.
  app.use("*", requestContext("gateway", deps.logger, (c) => clientOf(c).request));

  app.get("/healthz", async (c) => {
    const report = await checkServices(sql, urls, deps.fetch ?? fetch);
    if (report.healthy) return ok(c, { services: report.services, database: report.database });
    return c.json(
      errorBody("service_unavailable", "Not every service is ready", report.problems),
      503,
      { "Retry-After": "5" },
    );
  });

  app.route("/", docsRoutes());

  addPublicPages(app as unknown as Hono, {
    urls,
    contextKey,
    rateLimiter: deps.rateLimiter,
    timeoutMs: config.PROXY_TIMEOUT_MS,
    publicUrl: deps.publicUrl,
    client: clientOf,
    fetch: deps.fetch,
  });

  if (responseChecker) {
    // Every answer of an operation, success or error, as the client receives it.
    app.use("/v1/*", async (c, next) => {
      await next();
      const method = c.req.method === "HEAD" ? "GET" : c.req.method;
      const match = table.match(method, new URL(c.req.url).pathname);
      if (!match) return;
      const body = c.req.method === "HEAD" ? "" : await c.res.clone().text();
      const problem = responseChecker.check(
        match.route,
        c.res.status,
        body,
        c.res.headers.get("content-type"),
      );
      if (problem === null) return;
      deps.logger.error("answer does not match the published document", { problem });
      c.res = undefined;
      c.res = c.json(errorBody("internal_error", `Contract check: ${problem}`), 500);
    });
  }

  app.all("/v1/*", async (c) => {
    const raw = c.req.raw;
    assertIdentityEncoding(raw.headers);
    const body = await readLimitedBody(raw, config.MAX_BODY_BYTES);
    const principal = await deps.authenticator.authenticate(
      raw.headers,
      () => addressGroup(clientOf(c).connection),
    );
    c.set("principal", principal);
    c.set("organizationId", principal.organizationId);
    // Every authenticated request takes a token, whatever it turns out to be, so probing unknown
    // routes is limited too; a 429 is decided before idempotency and so is never stored.
    const policy = {
      requestsPerMinute: principal.requestsPerMinute ?? config.RATE_LIMIT_PER_MINUTE,
    };
    const bucket = await deps.rateLimiter.take(principal.bucket, policy);
    const limitHeaders = rateLimitHeaders(policy, bucket);
    // Every answer from here on carries the fields: one built here is given them directly, one
    // made through the context (an error's envelope) takes them from it.
    const limitsInContext = (): void => {
      c.header("RateLimit-Policy", limitHeaders["RateLimit-Policy"]);
      c.header("RateLimit", limitHeaders["RateLimit"]);
    };
    // The contract check may answer in place of the handler's Response.
    if (CONTRACT_CHECKS) limitsInContext();
    try {
      return await authorized();
    } catch (error) {
      limitsInContext();
      throw error;
    }

    async function authorized(): Promise<Response> {
      if (!bucket.admitted) {
        rateLimitRefusals.add(1);
        throw new ApiError(
          "rate_limited",
          `Rate limit of ${policy.requestsPerMinute} requests per minute exceeded`,
          undefined,
          { "Retry-After": String(retryAfterSeconds(policy, bucket.tokens)) },
        );
      }
      // The raw path: the table decodes parameters itself; the service verifies the same bytes.
      const url = new URL(raw.url);
      const path = url.pathname;
      const search = url.search;
      // HEAD is answered as GET without the body (Hono and the services drop it), so a client can
      // check that a resource exists, and what it would weigh, without reading it.
      const head = raw.method === "HEAD";
      const method = head ? "GET" : raw.method;
      const match = routes.match(method, path);
      if (!match) {
        const methods = routes.methodsAt(path);
        if (methods.length > 0) {
          throw new ApiError(
            "method_not_allowed",
            `${raw.method} is not an operation of ${c.req.path}; it takes ${methods.join(", ")}`,
            undefined,
            { Allow: methods.join(", ") },
          );
        }
        throw new ApiError(
          "route_not_found",
          `No endpoint ${raw.method} ${c.req.path}; the operations are listed at /docs`,
        );
      }
      const { route } = match;
      c.set("route", route.path);
      const lacking = missingScope(route, principal.scopes);
      if (lacking !== null) throw insufficientScope(lacking);
      if (body) assertJson(body);
      const requestId = c.get("requestId");
      const key = idempotencyKeyOf(raw);
      // Without a stored answer to replay, or a HEAD to strip, the answer is built once with every
      // header it needs (what the service's answer passes on, the rate limit, the request id).
      const direct = key === null && !head;
      const ownHeaders: [string, string][] = direct
        ? [
          ["ratelimit-policy", limitHeaders["RateLimit-Policy"]],
          ["ratelimit", limitHeaders["RateLimit"]],
          ["x-request-id", requestId],
        ]
        : [];
      const execute = async (): Promise<Response> => {
        if (route.service === "gateway") {
          const text = answerLocally(route, match.params, search, body, principal);
          return new Response(text, {
            status: 200,
            headers: [["content-type", "application/json"], ...ownHeaders],
          });
        }
        return await proxyToService(
          { service: route.service, baseUrl: urls[route.service] },
          head ? new Request(raw, { method: "GET" }) : raw,
          body,
          {
            organizationId: principal.organizationId,
            credentialKind: principal.credentialKind,
            credentialId: principal.credentialId,
            scopes: principal.scopes,
            requestId,
            issuedAt: Date.now(),
            organizationName: principal.organizationName,
            publicUrl: deps.publicUrl(),
          },
          {
            contextKey,
            timeoutMs: config.PROXY_TIMEOUT_MS,
            fetch: deps.fetch,
            target: path + search,
            responseHeaders: ownHeaders,
          },
        );
      };
      if (direct) return await execute();
      const response = key === null ? await execute() : await withIdempotency(sql, {
        principal: principal.bucket,
        key,
        request: raw,
        body,
        // A claim outlives the longest a request can take here, then lapses if we died.
        lockMs: config.PROXY_TIMEOUT_MS + 5_000,
      }, execute);
      // Hono's c.header() values apply to the returned Response only when set before c.res exists.
      const headers = new Headers(response.headers);
      // A stored answer's text is sent again: its length is counted from what is sent.
      headers.delete("content-length");
      for (const [name, value] of Object.entries(limitHeaders)) headers.set(name, value);
      headers.set("x-request-id", requestId);
      if (head) {
        // The GET's length, as RFC 9110 asks of a HEAD answer; the body itself is not sent.
        headers.set("content-length", String((await response.arrayBuffer()).byteLength));
        return new Response(null, { status: response.status, headers });
      }
      return new Response(response.body, { status: response.status, headers });
    }
  });

  app.notFound((c) => c.json(errorBody("route_not_found", "No such endpoint"), 404));
  app.onError((error, c) => errorToResponse(error, c));
  return app;
}

export { SERVICES };

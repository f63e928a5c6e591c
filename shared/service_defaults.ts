import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "./log.ts";
import { ApiError, errorBody } from "./http/errors.ts";
import { ok } from "./http/envelope.ts";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  verifyInternalContext,
  verifyInternalContextSync,
} from "./internal_context.ts";
import { routePath } from "hono/route";
import { type Span, trace } from "@opentelemetry/api";
import { currentTraceId, SpanKind, tracing, withIncomingContext, withSpan } from "./telemetry.ts";
import { requestDuration } from "./metrics.ts";
import { databaseUnavailable } from "./db/availability.ts";

/** Variables every app (services and gateway) sets per request. */
export interface RequestVariables {
  requestId: string;
  log: Logger;
  /** Known once the caller is authenticated; included in the access log line. */
  organizationId?: string;
  /**
   * The operation's path template, where the app routes by a table of its own rather than by
   * Hono's routes (the gateway's `/v1/*`): what names the request's span.
   */
  route?: string;
}

export interface ServiceVariables extends RequestVariables {
  auth: InternalContext;
}

export type ServiceEnv = { Variables: ServiceVariables };
export type ServiceContext = Context<ServiceEnv>;

export interface ServiceDefaultsOptions {
  service: string;
  logger: Logger;
  /** HMAC key of INTERNAL_SECRET; services refuse /v1 requests without a valid context. */
  contextKey: ContextKey;
  /** Extra readiness checks for /healthz, e.g. the database; throw to report unhealthy. */
  ready?: () => Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id from the caller when it is sane, else a new one; echoed on every response. */
export function requestIdOf(headers: Headers): string {
  const given = headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/**
 * The one place that wires what every service needs: request ids, the request-scoped logger,
 * a server span joined to the caller's trace, /healthz, internal-context verification, and the
 * mapping of errors to envelopes. A service's operations are added by `createServiceApp`.
 */
export function serviceDefaults(options: ServiceDefaultsOptions): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();
  const { logger, contextKey } = options;

  app.use("*", requestContext(options.service, logger));

  app.get("/healthz", async (c) => {
    try {
      await options.ready?.();
      return ok(c, { service: options.service, status: "up" });
    } catch (error) {
      c.get("log").warn("health check failed", { error: String(error) });
      return c.json(
        errorBody("service_unavailable", `Service "${options.service}" is not ready`),
        503,
        { "Retry-After": "1" },
      );
    }
  });

  app.use("/v1/*", async (c, next) => {
    const result = verifyInternalContextSync(
      contextKey,
      c.req.method,
      // The raw path and query, exactly as the gateway signed them (c.req.path is decoded).
      targetOf(c.req.url),
      c.req.header(INTERNAL_CONTEXT_HEADER),
    );
    if (!result.ok) {
      c.get("log").warn("internal context refused", { reason: result.reason });
      throw new ApiError("unauthenticated", "Request does not carry a valid internal context");
    }
    c.set("auth", result.context);
    c.set("organizationId", result.context.organizationId);
    c.set("log", c.get("log").child({ organizationId: result.context.organizationId }));
    await next();
  });

  app.notFound((c) => c.json(errorBody("route_not_found", "No such endpoint"), 404));
  app.onError((error, c) => errorToResponse(error, c));
  return app;
}

/**
 * Request id, request-scoped logger, a server span joined to the caller's trace, and one access
 * log line per request (method, path, status, duration; never headers or bodies).
 */
export function requestContext(
  service: string,
  logger: Logger,
  /** The request's client, for the access line (the gateway's; a service's peer is the gateway). */
  clientOf?: (c: Context) => string | null,
): MiddlewareHandler<{ Variables: RequestVariables }> {
  return async (c, next) => {
    const headers = c.req.raw.headers;
    const requestId = requestIdOf(headers);
    c.set("requestId", requestId);
    c.set("log", logger.child({ requestId, traceId: currentTraceId(headers) }));
    // Given before the answer exists, the id goes into every answer built through the context
    // (c.json and the like), so it need not be copied into a new Response afterwards.
    c.header("x-request-id", requestId);
    const started = performance.now();
    const method = c.req.method;
    const traced = tracing();
    const accessLogged = logger.enabled("info");
    if (traced) {
      // Deno's own server span, when it instruments Deno.serve (OTEL_DENO=true): named and
      // completed here rather than doubled by one of ours, and only when the sampler kept it (an
      // unsampled one is neither exported nor worth describing). Without one (a test's
      // app.request, a registered SDK of another kind) the span is ours.
      const serverSpan = trace.getActiveSpan();
      if (serverSpan) {
        await next();
        const route = routeOf(c);
        recordDuration(c, route, service, started);
        if (serverSpan.isRecording()) describeServerSpan(serverSpan, c, route);
      } else {
        await withIncomingContext(
          headers,
          () =>
            withSpan(method, { "service.name": service }, async (span) => {
              await next();
              const route = routeOf(c);
              recordDuration(c, route, service, started);
              describeServerSpan(span, c, route);
            }, SpanKind.SERVER),
        );
      }
    } else {
      await next();
    }
    // An answer made otherwise (a Response of the handler's own) gets the id here.
    if (c.res.headers.get("x-request-id") !== requestId) c.header("x-request-id", requestId);
    if (!accessLogged) return;
    c.get("log").info("request", {
      method,
      // Stripped of anything shaped like a token; read only here and for a recorded span.
      path: loggablePath(c.req.path),
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      organizationId: c.get("organizationId"),
      ...(clientOf ? { client: clientOf(c) } : {}),
    });
  };
}

/** The request's route template, as the OpenAPI document writes it; null when none matched. */
function routeOf(c: Context): string | null {
  const declared = (c as Context<{ Variables: RequestVariables }>).get("route");
  if (declared) return declared;
  const matched = routePath(c, -1);
  // Hono's `:id` as the OpenAPI document writes it; a catch-all (no route matched) is unnamed.
  return matched.endsWith("*") ? null : matched.replace(/:(\w+)/g, "{$1}");
}

/** Every request's duration per operation (shared/metrics.ts), sampled trace or not. */
function recordDuration(
  c: Context,
  route: string | null,
  service: string,
  startedAt: number,
): void {
  requestDuration.record((performance.now() - startedAt) / 1000, {
    "http.request.method": c.req.method,
    "http.response.status_code": c.res.status,
    "service.name": service,
    ...(route ? { "http.route": route } : {}),
  });
}

/**
 * Names a request's server span after its route template, as the HTTP conventions ask
 * (`GET /v1/quotes/{quoteId}`, `http.route`), never after the path with its ids, and writes the
 * path and query over what Deno recorded with every token-shaped run taken out (an approval
 * link's token is a credential; so may a query's value be).
 */
function describeServerSpan(span: Span, c: Context, route: string | null): void {
  span.updateName(route ? `${c.req.method} ${route}` : c.req.method);
  if (route) span.setAttribute("http.route", route);
  span.setAttributes({
    "http.request.method": c.req.method,
    "url.path": loggablePath(c.req.path),
    "http.response.status_code": c.res.status,
  });
  const query = new URL(c.req.url).search.slice(1);
  if (query) span.setAttribute("url.query", loggablePath(query));
  span.setAttribute("url.full", loggablePath(c.req.url));
}

/**
 * A run of characters shaped like a bearer token: long and opaque. A UUID has the same alphabet
 * but is an id, no secret, and stays.
 */
const TOKEN_RUN = /[A-Za-z0-9_-]{32,}/g;
const UUID_RUN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A path as logs and traces show it: a token (an approval link's) is a credential, so every
 * token-shaped run is replaced by `[token]`, wherever it sits in a segment (a mail client that
 * glued a `.` to the link must not get it logged).
 */
export function loggablePath(path: string): string {
  return path.replace(TOKEN_RUN, (run) => UUID_RUN.test(run) ? run : "[token]");
}

/**
 * The signed context of a call to a service's internal route (outside `/v1`), which must hold
 * `scope`: one no credential can hold, so only the gateway's own calls get through (401).
 */
export async function requireInternalScope(
  c: Context,
  contextKey: ContextKey,
  scope: string,
): Promise<InternalContext> {
  const result = await verifyInternalContext(
    contextKey,
    c.req.method,
    targetOf(c.req.url),
    c.req.header(INTERNAL_CONTEXT_HEADER),
  );
  if (!result.ok || !result.context.scopes.includes(scope)) {
    (c.get("log") as Logger).warn("internal context refused", {
      reason: result.ok ? "scope" : result.reason,
    });
    throw new ApiError("unauthenticated", "Request does not carry a valid internal context");
  }
  return result.context;
}

/** Path and query of a URL: the part of a request the internal context is bound to. */
export function targetOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** Maps a thrown error to its envelope; the unexpected is logged and answered without detail. */
export function errorToResponse(error: unknown, c: Context): Response {
  if (error instanceof ApiError) {
    return c.json(error.toBody(), error.status, error.headers);
  }
  // The database gone (restarting, failing over): a 503 the client can act on, logged once per
  // outage by the process's watch rather than once per request.
  const unavailable = databaseUnavailable(error);
  if (unavailable) {
    return c.json(errorBody("service_unavailable", unavailable.message), 503, {
      "Retry-After": String(unavailable.retryAfterSeconds),
    });
  }
  const requestId = c.get("requestId") as string | undefined;
  const log = c.get("log") as Logger | undefined;
  log?.error("unhandled error", { error });
  return c.json(
    errorBody(
      "internal_error",
      `Unexpected server error${requestId ? ` (request id ${requestId})` : ""}`,
    ),
    500,
  );
}

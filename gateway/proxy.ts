import { ApiError } from "@printshop/shared/http";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  signInternalContextSync,
} from "@printshop/shared/internal-context";
import type { ServiceName } from "@printshop/shared/routes";
import { propagation } from "@opentelemetry/api";
import { inRecordedTrace, propagateTrace, SpanKind, withSpan } from "@printshop/shared/telemetry";

/** Request headers a service may see; credentials and hop-by-hop headers never pass. */
const FORWARDED_REQUEST_HEADERS = ["content-type", "accept", "accept-language"];
/** Response headers passed back to the client. */
const FORWARDED_RESPONSE_HEADERS = ["content-type", "location", "retry-after", "cache-control"];

export interface ProxyTarget {
  service: ServiceName;
  baseUrl: string;
}

export interface ProxyOptions {
  contextKey: ContextKey;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** The request's raw path and query, when the caller has it already (else read from its URL). */
  target?: string;
  /**
   * Headers of the gateway's own to give the answer (rate limit, request id), so that it is
   * built once rather than copied into a new Response to add them.
   */
  responseHeaders?: readonly (readonly [string, string])[];
}

/** Requests sent within this long of each other share one timeout signal. */
const TIMEOUT_SLOT_MS = 100;
const timeoutSlots = new Map<number, { until: number; signal: AbortSignal }>();

/**
 * A signal that aborts between `timeoutMs` and `timeoutMs` + TIMEOUT_SLOT_MS from now, never
 * sooner. Shared by the requests of one slot: a signal and a timer of its own for every request,
 * each kept for the whole timeout, was garbage made at the request rate.
 */
function timeoutSignal(timeoutMs: number): AbortSignal {
  const now = performance.now();
  let slot = timeoutSlots.get(timeoutMs);
  if (slot === undefined || now >= slot.until) {
    slot = {
      until: now + TIMEOUT_SLOT_MS,
      signal: AbortSignal.timeout(timeoutMs + TIMEOUT_SLOT_MS),
    };
    timeoutSlots.set(timeoutMs, slot);
  }
  return slot.signal;
}

/** The raw path and query of an absolute URL, as `new URL(url)` reads them. */
export function targetOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** Statuses a platform or proxy in front of a service answers for it, never the service. */
const PLATFORM_GATEWAY_ERRORS = new Set([502, 504]);

export async function proxyToService(
  target: ProxyTarget,
  request: Request,
  body: Uint8Array<ArrayBuffer> | null,
  context: InternalContext,
  options: ProxyOptions,
): Promise<Response> {
  const pathAndQuery = options.target ?? targetOf(request.url);
  const method = request.method;
  const incoming = request.headers;
  // Pairs, not a Headers: fetch validates and copies a Headers object's values once more, and
  // the signed context is the longest value there is.
  let headers: [string, string][] = [];
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = incoming.get(name);
    if (value !== null) headers.push([name, value]);
  }
  headers.push(["x-request-id", context.requestId]);
  headers.push([
    INTERNAL_CONTEXT_HEADER,
    signInternalContextSync(options.contextKey, method, pathAndQuery, context),
  ]);
  const send = async (): Promise<Response> => {
    if (
      propagation.fields().length > 0 || incoming.has("traceparent") || incoming.has("tracestate")
    ) {
      // A trace to join: the caller's, or one a registered SDK propagates.
      const traced = new Headers(headers);
      propagateTrace(incoming, traced);
      headers = [...traced];
    }
    let upstream: Response;
    try {
      upstream = await (options.fetch ?? fetch)(`${target.baseUrl}${pathAndQuery}`, {
        method,
        headers,
        body: body && body.byteLength > 0 ? body : undefined,
        redirect: "manual",
        signal: timeoutSignal(options.timeoutMs),
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      throw new ApiError(
        "service_unavailable",
        timedOut
          ? `The ${target.service} service did not answer within ${options.timeoutMs} ms`
          : `The ${target.service} service is unavailable`,
        undefined,
        // A service that does not take connections is being started again (the launcher's first
        // restart is after 1 s, a container's as soon as its health check fails): try again
        // then. One that took the request and was too slow is busy: give it longer.
        { "Retry-After": timedOut ? "5" : "1" },
      );
    }
    if (PLATFORM_GATEWAY_ERRORS.has(upstream.status)) {
      // No service answers 502 or 504 itself: this is the platform in front of it (Deno Deploy
      // when the instance went away mid-request, a proxy when it is down), not an envelope.
      await upstream.body?.cancel();
      throw new ApiError(
        "service_unavailable",
        `The ${target.service} service is unavailable`,
        undefined,
        { "Retry-After": "1" },
      );
    }
    const responseHeaders: [string, string][] = [];
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) responseHeaders.push([name, value]);
    }
    // The answer's length, when its body is passed on byte for byte (fetch decodes a compressed
    // one), so it goes out framed by its length rather than in chunks the edge and the client
    // would have to follow.
    const length = upstream.headers.get("content-length");
    if (length !== null && !upstream.headers.has("content-encoding")) {
      responseHeaders.push(["content-length", length]);
    }
    if (options.responseHeaders) {
      for (const [name, value] of options.responseHeaders) responseHeaders.push([name, value]);
    }
    return new Response(upstream.body, { status: upstream.status, headers: responseHeaders });
  };
  // A span only where one is recorded: without an SDK, or in a trace the sampler dropped, it
  // would be built for nothing.
  if (!inRecordedTrace()) return await send();
  return await withSpan(
    `proxy ${target.service}`,
    {
      "server.address": target.baseUrl,
      "http.request.method": method,
    },
    send,
    SpanKind.CLIENT,
  );
}

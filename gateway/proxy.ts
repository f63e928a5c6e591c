import { ApiError } from "@printshop/shared/http";
import {
  type ContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  signInternalContext,
} from "@printshop/shared/internal-context";
import type { ServiceName } from "@printshop/shared/routes";
import { propagateTrace, SpanKind, withSpan } from "@printshop/shared/telemetry";

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
}

export async function proxyToService(
  target: ProxyTarget,
  request: Request,
  body: Uint8Array<ArrayBuffer> | null,
  context: InternalContext,
  options: ProxyOptions,
): Promise<Response> {
  const url = new URL(request.url);
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("x-request-id", context.requestId);
  headers.set(
    INTERNAL_CONTEXT_HEADER,
    await signInternalContext(
      options.contextKey,
      request.method,
      url.pathname + url.search,
      context,
    ),
  );
  return await withSpan(`proxy ${target.service}`, {
    "server.address": target.baseUrl,
    "http.request.method": request.method,
  }, async () => {
    propagateTrace(request.headers, headers);
    let upstream: Response;
    try {
      upstream = await (options.fetch ?? fetch)(`${target.baseUrl}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: body && body.byteLength > 0 ? body : undefined,
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      throw new ApiError(
        "service_unavailable",
        timedOut
          ? `The ${target.service} service did not answer within ${options.timeoutMs} ms`
          : `The ${target.service} service is unavailable`,
        undefined,
        { "Retry-After": "5" },
      );
    }
    const responseHeaders = new Headers();
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) responseHeaders.set(name, value);
    }
    return new Response(upstream.body, { status: upstream.status, headers: responseHeaders });
  }, SpanKind.CLIENT);
}

import { loopFailed, type Sql } from "@printshop/shared/db";
import { ApiError } from "@printshop/shared/http";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "@printshop/shared/limits";
import type { Logger } from "@printshop/shared/log";
import { claimKey, completeKey, purgeExpired, releaseKey } from "./store/idempotency.ts";

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Response headers replayed with a stored response. */
const REPLAYED_HEADERS = ["content-type", "location", "cache-control"];

/** The key of a write request, validated; null when the request carries none or is a read. */
export function idempotencyKeyOf(request: Request): string | null {
  if (!WRITE_METHODS.has(request.method)) return null;
  const key = request.headers.get("idempotency-key");
  if (key === null) return null;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new ApiError(
      "validation_error",
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
      [{
        path: "Idempotency-Key",
        message: `Must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
      }],
    );
  }
  return key;
}

/** SHA-256 over method, path, query and body: what makes two requests "the same". */
export async function fingerprintOf(
  request: Request,
  body: Uint8Array | null,
): Promise<Uint8Array> {
  const url = new URL(request.url);
  const head = new TextEncoder().encode(`${request.method}\n${url.pathname}\n${url.search}\n`);
  const data = new Uint8Array(head.length + (body?.length ?? 0));
  data.set(head);
  if (body) data.set(body, head.length);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

/**
 * Runs `execute` at most once per (principal, key). A completed request is replayed with
 * `Idempotency-Replayed: true`; a different request under the same key is 409
 * idempotency_key_reused; the same one still running is 409 idempotency_request_in_flight.
 * Results of 500 and above are not kept, so a retry can succeed.
 */
export async function withIdempotency(
  sql: Sql,
  options: {
    principal: string;
    key: string;
    request: Request;
    body: Uint8Array | null;
    lockMs: number;
  },
  execute: () => Promise<Response>,
): Promise<Response> {
  const { principal, key } = options;
  const outcome = await claimKey(sql, {
    principal,
    key,
    fingerprint: await fingerprintOf(options.request, options.body),
    lockMs: options.lockMs,
    retentionMs: IDEMPOTENCY_RETENTION_MS,
  });
  if (outcome.kind === "reused") {
    throw new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used for a different request; use a new key for a new request",
    );
  }
  if (outcome.kind === "in_flight") {
    throw new ApiError(
      "idempotency_request_in_flight",
      "A request with this Idempotency-Key is still being processed; retry shortly",
      undefined,
      { "Retry-After": "1" },
    );
  }
  if (outcome.kind === "completed") {
    const headers = new Headers(outcome.response.headers);
    headers.set("idempotency-replayed", "true");
    return new Response(
      outcome.response.body.length > 0 ? new Uint8Array(outcome.response.body) : null,
      { status: outcome.response.status, headers },
    );
  }
  // Until the response is stored, any failure gives the key back so a retry can run.
  try {
    const response = await execute();
    if (response.status >= 500) {
      await releaseKey(sql, principal, key);
      return response;
    }
    const body = await readResponseBody(response);
    const stored: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) stored[name] = value;
    }
    await completeKey(sql, principal, key, { status: response.status, headers: stored, body });
    return new Response(body.length > 0 ? body : null, {
      status: response.status,
      headers: response.headers,
    });
  } catch (error) {
    await releaseKey(sql, principal, key).catch(() => {});
    throw error;
  }
}

/** A body that breaks off (the service died, or the proxy timeout fired mid-body) is a 503. */
async function readResponseBody(response: Response): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return new Uint8Array(await response.arrayBuffer());
  } catch {
    throw new ApiError(
      "service_unavailable",
      "The service's response broke off; the request may be retried with the same key",
      undefined,
      { "Retry-After": "1" },
    );
  }
}

/** Purges expired records once; a failure is logged, and the next run tries again. */
export async function purgeIdempotencyOnce(sql: Sql, logger: Logger): Promise<void> {
  await purgeExpired(sql).then(
    (count) => count > 0 && logger.info("idempotency records purged", { count }),
    (error) => loopFailed(logger, "idempotency purge failed", error),
  );
}

/** Purges expired records in the background every few minutes, off the request path. */
export function startIdempotencyPurge(sql: Sql, logger: Logger, everyMs = 5 * 60_000): () => void {
  const run = (): void => void purgeIdempotencyOnce(sql, logger);
  const timer = setInterval(run, everyMs);
  run();
  return () => clearInterval(timer);
}

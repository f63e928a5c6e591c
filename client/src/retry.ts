/**
 * The `fetch` the client sends through: it gives every write an `Idempotency-Key` and retries
 * what the platform says is worth retrying (README "Writes: Idempotency-Key", "Rate limits",
 * "Errors"):
 *
 * - 429 `rate_limited` and 503 `service_unavailable`, which carry `Retry-After` (whole seconds);
 * - 409 `idempotency_request_in_flight`: the same key is still running (with `Retry-After: 1`),
 *   and asking again returns its stored answer once it finishes.
 *
 * A write is retried only with an idempotency key, which makes the gateway run it at most once
 * however often it arrives; every attempt sends the same key and the same body bytes.
 */

/** What the client calls to send one request (openapi-fetch's `fetch` option). */
export type FetchLike = (request: Request) => Promise<Response>;

/** One retry about to happen, for logging or metrics. */
export interface RetryEvent {
  /** The attempt that just failed, 1 for the first. */
  attempt: number;
  status: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  request: Request;
}

export interface RetryOptions {
  /** Attempts after the first; 0 turns retrying off. Default 3. */
  retries?: number;
  /**
   * The longest wait before a retry, in ms. An answer whose `Retry-After` asks for longer ends
   * the retries and is returned as it is: asking earlier than the server said would only be
   * refused again. Default 30 000.
   */
  maxRetryDelayMs?: number;
  /**
   * First step of the back-off used when an answer has no `Retry-After`: attempt n waits
   * between half and all of `retryBaseDelayMs · 2^(n-1)` (capped at `maxRetryDelayMs`), random
   * so that clients refused together do not come back together. Default 500.
   */
  retryBaseDelayMs?: number;
  /**
   * Give each POST, PUT, PATCH and DELETE without an `Idempotency-Key` a random one. Default
   * true; with false, such writes are sent as they are and never retried.
   */
  idempotencyKeys?: boolean;
  /** Called before each wait. */
  onRetry?: (event: RetryEvent) => void;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const IDEMPOTENCY_KEY = "Idempotency-Key";
const DEFAULT_RETRIES = 3;
const DEFAULT_MAX_DELAY_MS = 30_000;
const DEFAULT_BASE_DELAY_MS = 500;

/** Whether an answer may succeed if sent again later (the body is read only for a 409). */
async function isRetryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status !== 409) return false;
  try {
    const body: unknown = await response.clone().json();
    return typeof body === "object" && body !== null &&
      (body as { error?: unknown }).error === "idempotency_request_in_flight";
  } catch {
    return false;
  }
}

/**
 * `Retry-After` in ms: delta-seconds, as the gateway sends it, or an HTTP date (RFC 9110), which
 * intermediaries may send. Null when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The jittered back-off of attempt `attempt` (1-based) when the answer gave no `Retry-After`. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Wraps `fetch` with idempotency keys on writes and bounded, `Retry-After`-aware retries. */
export function withRetries(fetch: FetchLike, options: RetryOptions = {}): FetchLike {
  const retries = Math.max(0, Math.floor(options.retries ?? DEFAULT_RETRIES));
  const maxDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const baseDelayMs = options.retryBaseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const addKeys = options.idempotencyKeys ?? true;

  return async (request: Request): Promise<Response> => {
    const isWrite = WRITE_METHODS.has(request.method.toUpperCase());
    const headers = new Headers(request.headers);
    if (isWrite && addKeys && !headers.has(IDEMPOTENCY_KEY)) {
      headers.set(IDEMPOTENCY_KEY, crypto.randomUUID());
    }
    // Without a key the gateway may run a repeated write twice, so such a write gets one try.
    const mayRetry = !isWrite || headers.has(IDEMPOTENCY_KEY);
    // Read once, so every attempt sends exactly these bytes (a stream can be sent only once).
    const body = request.body === null ? null : await request.arrayBuffer();

    for (let attempt = 1;; attempt++) {
      const response = await fetch(new Request(request, { headers, body }));
      if (!mayRetry || attempt > retries || !(await isRetryable(response))) return response;
      const delayMs = retryAfterMs(response.headers.get("Retry-After")) ??
        backoffMs(attempt, baseDelayMs, maxDelayMs);
      if (delayMs > maxDelayMs) return response;
      // Free the connection before waiting; this answer is not returned.
      await response.body?.cancel();
      options.onRetry?.({ attempt, status: response.status, delayMs, request });
      await sleep(delayMs, request.signal);
    }
  };
}

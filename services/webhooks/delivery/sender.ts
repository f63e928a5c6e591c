/**
 * One webhook delivery attempt: a single POST through the SSRF guard, bounded in time, never
 * following redirects, with every failure turned into a reason the subscriber can act on.
 */
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { Buffer } from "node:buffer";
import { type buildConnector, Client, type Dispatcher, Pool } from "undici";
import { resolveTarget, TargetError } from "./address_guard.ts";

export interface WebhookRequest {
  url: string;
  /** Sent as given, except the framing headers the sender sets itself. */
  headers: Record<string, string>;
  body: string;
  /** Bounds the whole attempt: lookup, connect, TLS, request and response. */
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

export interface AttemptOutcome {
  succeeded: boolean;
  httpStatus: number | null;
  durationMs: number;
  failureReason: string | null;
}

export const USER_AGENT = "PrintShop-Webhooks/1.0";

/** Response bodies are read only so the exchange completes; past this much, the socket is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** How long to wait for the socket to report closed after the outcome is known. */
const CLOSE_GRACE_MS = 1_000;
const MAX_LOCATION_LENGTH = 200;
const MAX_DETAIL_LENGTH = 120;

/** Headers the sender owns: the caller may not change framing, the connection or the host. */
const RESERVED_HEADERS = new Set([
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "host",
  "user-agent",
  "expect",
]);

const DNS_ERROR_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "ENODATA"]);
// UND_ERR_SOCKET: undici's "other side closed" and the like, a connection ended mid-exchange.
const RESET_ERROR_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"]);
const CERTIFICATE_ERROR_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "HOSTNAME_MISMATCH",
]);

type Result = Omit<AttemptOutcome, "durationMs">;

function failed(failureReason: string, httpStatus: number | null = null): Result {
  return { succeeded: false, httpStatus, failureReason };
}

/** Text from the endpoint, made safe to store and show: printable, one line, bounded. */
function printable(text: string, limit: number): string {
  const oneLine = text.replace(/[^\x20-\x7e]/g, "?");
  return oneLine.length > limit ? `${oneLine.slice(0, limit)}…` : oneLine;
}

function resultForStatus(status: number, location: string | undefined): Result {
  if (status >= 200 && status < 300) {
    return { succeeded: true, httpStatus: status, failureReason: null };
  }
  if (status >= 300 && status < 400) {
    const target = location === undefined || location === ""
      ? "no location"
      : printable(location, MAX_LOCATION_LENGTH);
    return failed(`redirect not followed (HTTP ${status} to ${target})`, status);
  }
  return failed(`HTTP ${status} from endpoint`, status);
}

function tlsDetail(error: NodeJS.ErrnoException): string {
  if (error.code === "ERR_SSL_WRONG_VERSION_NUMBER") {
    return "wrong version number (the endpoint may not speak TLS on this port)";
  }
  const message = error.message.trim();
  if (message !== "") return printable(message, MAX_DETAIL_LENGTH);
  return error.code ?? "handshake failed";
}

function isTlsError(error: NodeJS.ErrnoException): boolean {
  const code = error.code ?? "";
  return code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") ||
    CERTIFICATE_ERROR_CODES.has(code) || /\b(SSL|TLS)\b/.test(error.message) ||
    // rustls's words for a peer that does not speak TLS (Deno 2.4's node:tls).
    /corrupt message|InvalidContentType/.test(error.message);
}

function resultForError(error: unknown, host: string): Result {
  if (error instanceof TargetError) return failed(error.reason);
  if (!(error instanceof Error)) return failed(`network error: ${printable(String(error), 120)}`);
  const nodeError = error as NodeJS.ErrnoException;
  const code = nodeError.code ?? "";
  if (code === "ECONNREFUSED") return failed("connection refused");
  if (DNS_ERROR_CODES.has(code)) return failed(`DNS lookup failed for "${host}"`);
  if (isTlsError(nodeError)) return failed(`TLS error: ${tlsDetail(nodeError)}`);
  if (RESET_ERROR_CODES.has(code)) return failed("connection reset");
  return failed(
    `network error: ${code !== "" ? code : printable(error.message, MAX_DETAIL_LENGTH)}`,
  );
}

function requestHeaders(given: Record<string, string>, bodyBytes: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (!RESERVED_HEADERS.has(lower)) headers[lower] = value;
  }
  headers["content-type"] = "application/json";
  headers["content-length"] = String(bodyBytes);
  headers["user-agent"] = USER_AGENT;
  return headers;
}

/**
 * Opens the attempt's one connection: to an address `resolveTarget` checked (every address the
 * name has, unless private targets are allowed), so what was checked is what is connected to,
 * whatever DNS says a moment later. TLS verifies the certificate against the name, sent as SNI.
 */
function guardedConnector(host: string, allowPrivateTargets: boolean): buildConnector.connector {
  return (options, callback) => {
    resolveTarget(host, allowPrivateTargets).then(
      (addresses) => {
        const address = addresses[0]!.address;
        const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80);
        const socket = options.protocol === "https:"
          ? tlsConnect({
            host: address,
            port,
            ...(isIP(host) === 0 ? { servername: host } : {}),
            ALPNProtocols: ["http/1.1"],
          })
          : netConnect({ host: address, port });
        const ready = options.protocol === "https:" ? "secureConnect" : "connect";
        const onError = (error: Error): void => callback(error, null);
        socket.once("error", onError);
        socket.once(ready, () => {
          socket.off("error", onError);
          socket.setNoDelay(true);
          callback(null, socket);
        });
      },
      (error: unknown) => callback(error as Error, null),
    );
  };
}

/** Where an attempt goes: its URL and the host name the guard resolves. */
interface Target {
  url: URL;
  host: string;
}

function targetOf(rawUrl: string): Target | Result {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return failed("network error: invalid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return failed(`network error: unsupported scheme ${printable(url.protocol, 20)}`);
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return { url, host };
}

/** Room past the attempt's own deadline, so undici's timers never cut an attempt first. */
const UNDICI_SLACK_MS = 1_000;

function freshClient(target: Target, allowPrivateTargets: boolean, timeoutMs: number): Client {
  return new Client(target.url.origin, {
    connect: guardedConnector(target.host, allowPrivateTargets),
    connectTimeout: timeoutMs + UNDICI_SLACK_MS,
    pipelining: 0,
  });
}

/** One exchange's outcome, and whether it was lost to a kept connection the endpoint closed. */
interface Exchange {
  result: Result;
  staleConnection: boolean;
}

/**
 * Whether `error` is a connection closed under a request before any answer, on a connection
 * that had carried an earlier exchange (undici's socket error says what the socket had read):
 * the endpoint closed it while it sat idle. A first exchange cut, or a reset of any other kind,
 * is the endpoint's answer, and is not sent again.
 */
function closedWhileKept(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, socket } = error as Error & { code?: string; socket?: { bytesRead?: number } };
  return code === "UND_ERR_SOCKET" && (socket?.bytesRead ?? 0) > 0;
}

/** One POST over `dispatcher`, bounded by `timeoutMs`; reads and drops the response body. */
async function exchange(
  dispatcher: Dispatcher,
  target: Target,
  request: WebhookRequest,
  body: Buffer,
  timeoutMs: number,
): Promise<Exchange> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  let statusResult: Result | null = null;
  try {
    const response = await dispatcher.request({
      method: "POST",
      path: `${target.url.pathname}${target.url.search}`,
      headers: requestHeaders(request.headers, body.length),
      body,
      signal: deadline.signal,
      headersTimeout: timeoutMs + UNDICI_SLACK_MS,
      bodyTimeout: timeoutMs + UNDICI_SLACK_MS,
    });
    const location = response.headers.location;
    statusResult = resultForStatus(
      response.statusCode,
      Array.isArray(location) ? location[0] : location,
    );
    // The exchange completes when the body has been read; once the status is known, a body cut
    // short, too long or too slow does not change the outcome. Leaving the loop early destroys
    // the connection, so a kept one is reused only after a whole exchange.
    let received = 0;
    for await (const chunk of response.body) {
      received += (chunk as Uint8Array).length;
      if (received > MAX_RESPONSE_BYTES) break;
    }
    return { result: statusResult, staleConnection: false };
  } catch (error) {
    if (statusResult !== null) return { result: statusResult, staleConnection: false };
    if (deadline.signal.aborted) {
      return { result: failed(`timed out after ${request.timeoutMs} ms`), staleConnection: false };
    }
    return { result: resultForError(error, target.host), staleConnection: closedWhileKept(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** Sends over a connection of its own, closed when the attempt ends. */
async function attemptFresh(
  target: Target,
  request: WebhookRequest,
  body: Buffer,
  timeoutMs: number,
): Promise<Result> {
  const client = freshClient(target, request.allowPrivateTargets, timeoutMs);
  try {
    return (await exchange(client, target, request, body, timeoutMs)).result;
  } finally {
    await closeWithin(client, CLOSE_GRACE_MS);
  }
}

/**
 * POSTs `request.body` to `request.url` once, over a connection opened for it and closed after.
 * Never throws and never follows a redirect; any 2xx is success. The response body is read (up
 * to 64 KiB) and discarded, never returned. The worker sends through a kept sender
 * (`keptSender`) instead; a manual redelivery, a rare one-off, comes here.
 *
 * Sent with undici over a socket of its own (guardedConnector) rather than with `fetch` or
 * `node:http`: with OTEL_DENO=true the runtime gives those a span recording the whole URL, and a
 * webhook URL often carries its receiver's token in the query. undici's requests are not traced
 * by the runtime; the delivery's own span (dispatch.ts) names no URL.
 */
export async function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const target = targetOf(request.url);
  const result = "url" in target
    ? await attemptFresh(target, request, Buffer.from(request.body, "utf8"), request.timeoutMs)
    : target;
  return { ...result, durationMs: Math.round(performance.now() - started) };
}

/** Sends attempts and owns the connections they leave open; `close` ends every one. */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

export interface KeptSenderOptions {
  /** Connections to one target at once, at most (the worker's concurrency). */
  connectionsPerTarget: number;
  /** How long an idle connection is kept, unless the endpoint's `Keep-Alive` asks for less. */
  keepAliveMs?: number;
  /** Targets (origin and guard setting) whose connections are kept; past it, the least recent's close. */
  maxTargets?: number;
}

const KEEP_ALIVE_MS = 4_000;
const MAX_KEPT_TARGETS = 256;
const MAX_ATTEMPTS_PER_CONNECTION = 1_000;

/**
 * A sender that keeps each target's connections open between attempts (undici's Pool per
 * origin): a connection per attempt cost the worker about 0.5 ms of CPU per attempt, a kept one
 * about 0.11 ms (2,000 attempts, 10 at a time, to a receiver on loopback), and a busy endpoint
 * gets a stream of events. Each connection is still opened through the guard, to an address it
 * checked, so a kept connection goes where a fresh one would have when it was opened; none is
 * kept past `keepAliveMs` idle or past 1,000 attempts. An endpoint may close an idle connection
 * just as an attempt is written to it: an attempt whose kept connection is closed under it before
 * a whole status line and headers came back (whenever, within its time: undici does not tell a
 * close at once from one later, nor a cut status line from none) is sent once more, at once, over
 * a connection of its own, within what is left of its time (the receiver tells the two apart, if it ever sees both, by the `webhook-id` they share,
 * as it does any redelivery).
 */
export function keptSender(options: KeptSenderOptions): WebhookSender {
  const keepAliveMs = options.keepAliveMs ?? KEEP_ALIVE_MS;
  const maxTargets = options.maxTargets ?? MAX_KEPT_TARGETS;
  /** By key, least recently used first. */
  const pools = new Map<string, Pool>();
  const closing = new Set<Promise<void>>();
  let closed = false;

  /**
   * Closes a pool once its attempts are over: an evicted target's attempts still under way run
   * to their end (each bounded by its own deadline); `close()` of the sender cuts them short.
   */
  const retire = (pool: Pool, graceMs: number | null): void => {
    const done = (graceMs === null ? pool.close().catch(() => {}) : closeWithin(pool, graceMs))
      .finally(() => closing.delete(done));
    closing.add(done);
  };

  const poolFor = (target: Target, request: WebhookRequest): Pool => {
    const key = `${request.allowPrivateTargets ? "private" : "public"} ${target.url.origin}`;
    let pool = pools.get(key);
    if (pool !== undefined) pools.delete(key);
    else {
      pool = new Pool(target.url.origin, {
        connect: guardedConnector(target.host, request.allowPrivateTargets),
        connections: options.connectionsPerTarget,
        pipelining: 1,
        keepAliveTimeout: keepAliveMs,
        keepAliveMaxTimeout: keepAliveMs,
        // A connection in steady use is still renewed now and then, so the name is looked up
        // and checked again: an endpoint that moved is followed, and no check is years old.
        maxRequestsPerClient: MAX_ATTEMPTS_PER_CONNECTION,
        connectTimeout: request.timeoutMs + UNDICI_SLACK_MS,
      });
    }
    pools.set(key, pool);
    for (const [oldKey, oldPool] of pools) {
      if (pools.size <= maxTargets) break;
      pools.delete(oldKey);
      retire(oldPool, null);
    }
    return pool;
  };

  return {
    async send(request) {
      const started = performance.now();
      const outcome = (result: Result): AttemptOutcome => ({
        ...result,
        durationMs: Math.round(performance.now() - started),
      });
      const target = targetOf(request.url);
      if (!("url" in target)) return outcome(target);
      const body = Buffer.from(request.body, "utf8");
      if (closed) return outcome(await attemptFresh(target, request, body, request.timeoutMs));
      const first = await exchange(
        poolFor(target, request),
        target,
        request,
        body,
        request.timeoutMs,
      );
      const left = request.timeoutMs - (performance.now() - started);
      if (!first.staleConnection || left <= 0) return outcome(first.result);
      return outcome(await attemptFresh(target, request, body, Math.ceil(left)));
    },
    async close() {
      closed = true;
      for (const pool of pools.values()) retire(pool, CLOSE_GRACE_MS);
      pools.clear();
      await Promise.all([...closing]);
    },
  };
}

/** Closes `dispatcher`, waiting `ms` for its exchanges to end, then destroys it (`ms` more). */
async function closeWithin(dispatcher: Client | Pool, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    dispatcher.close().catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, ms)),
  ]);
  clearTimeout(timer);
  await Promise.race([
    dispatcher.destroy().catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, ms)),
  ]);
  clearTimeout(timer);
}

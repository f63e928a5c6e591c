/**
 * One webhook delivery attempt: a single POST through the SSRF guard, bounded in time, never
 * following redirects, with every failure turned into a reason the subscriber can act on.
 */
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { Buffer } from "node:buffer";
import { type buildConnector, Client } from "undici";
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

/**
 * POSTs `request.body` to `request.url` once. Never throws and never follows a redirect; any 2xx
 * is success. The response body is read (up to 64 KiB) and discarded, never returned.
 *
 * Sent with undici over a socket of its own (guardedConnector) rather than with `fetch` or
 * `node:http`: with OTEL_DENO=true the runtime gives those a span recording the whole URL, and a
 * webhook URL often carries its receiver's token in the query. undici's requests are not traced
 * by the runtime; the delivery's own span (dispatch.ts) names no URL.
 */
export async function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const outcome = await attemptOnce(request);
  return { ...outcome, durationMs: elapsed() };
}

async function attemptOnce(request: WebhookRequest): Promise<Result> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return failed("network error: invalid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return failed(`network error: unsupported scheme ${printable(url.protocol, 20)}`);
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const body = Buffer.from(request.body, "utf8");
  const client = new Client(url.origin, {
    connect: guardedConnector(host, request.allowPrivateTargets),
    // The attempt's own deadline (below) bounds it; these only keep undici from cutting it first.
    headersTimeout: request.timeoutMs + 1_000,
    bodyTimeout: request.timeoutMs + 1_000,
    connectTimeout: request.timeoutMs + 1_000,
    pipelining: 0,
  });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), request.timeoutMs);
  let statusResult: Result | null = null;
  try {
    const response = await client.request({
      method: "POST",
      path: `${url.pathname}${url.search}`,
      headers: requestHeaders(request.headers, body.length),
      body,
      signal: deadline.signal,
    });
    const location = response.headers.location;
    statusResult = resultForStatus(
      response.statusCode,
      Array.isArray(location) ? location[0] : location,
    );
    // The exchange completes when the body has been read; once the status is known, a body cut
    // short, too long or too slow does not change the outcome.
    let received = 0;
    for await (const chunk of response.body) {
      received += (chunk as Uint8Array).length;
      if (received > MAX_RESPONSE_BYTES) break;
    }
    return statusResult;
  } catch (error) {
    if (statusResult !== null) return statusResult;
    if (deadline.signal.aborted) return failed(`timed out after ${request.timeoutMs} ms`);
    return resultForError(error, host);
  } finally {
    clearTimeout(timer);
    // No connection outlives the attempt.
    await closeWithin(client, CLOSE_GRACE_MS);
  }
}

async function closeWithin(client: Client, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    client.destroy().catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, ms)),
  ]);
  clearTimeout(timer);
}

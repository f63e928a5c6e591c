/**
 * One webhook delivery attempt: a single POST through the SSRF guard, bounded in time, never
 * following redirects, with every failure turned into a reason the subscriber can act on.
 */
import { type ClientRequest, type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { Buffer } from "node:buffer";
import {
  forbiddenAddressReason,
  guardedLookup,
  resolveTarget,
  TargetError,
  TargetRefused,
} from "./address_guard.ts";

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
const RESET_ERROR_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);
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
    CERTIFICATE_ERROR_CODES.has(code) || /\b(SSL|TLS)\b/.test(error.message);
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
 * POSTs `request.body` to `request.url` once. Never throws and never follows a redirect; any 2xx
 * is success. The response body is read (up to 64 KiB) and discarded, never returned.
 */
/**
 * Set once node:http turned down `lookup` ("Not implemented" in Deno 2.4, which Deno Deploy
 * runs): from then on each attempt resolves and checks the target itself and connects to that
 * address.
 */
let lookupMissing = false;

function lookupUnsupported(error: unknown): boolean {
  return error instanceof Error && /not implemented/i.test(error.message) &&
    error.message.includes("lookup");
}

export function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ ...failed("network error: invalid URL"), durationMs: elapsed() });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve({
      ...failed(`network error: unsupported scheme ${printable(url.protocol, 20)}`),
      durationMs: elapsed(),
    });
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  // Node connects to IP literals without calling `lookup`, so the guard checks them here.
  if (isIP(host) !== 0 && !request.allowPrivateTargets) {
    const category = forbiddenAddressReason(host);
    if (category !== null) {
      const reason = new TargetRefused(host, category, host).reason;
      return Promise.resolve({ ...failed(reason), durationMs: elapsed() });
    }
  }

  return new Promise((resolve) => {
    let result: Result | null = null;
    let durationMs = 0;
    let statusResult: Result | null = null;
    let req: ClientRequest | null = null;
    let closeGrace: ReturnType<typeof setTimeout> | undefined;

    const deadline = setTimeout(() => {
      settle(statusResult ?? failed(`timed out after ${request.timeoutMs} ms`));
    }, request.timeoutMs);

    const deliver = (): void => {
      clearTimeout(closeGrace);
      resolve({ ...(result ?? failed("connection reset")), durationMs });
    };
    // The outcome is fixed by the first event that settles it; the promise resolves once the
    // socket has closed, so no connection outlives the attempt.
    const settle = (outcome: Result): void => {
      if (result !== null) return;
      result = outcome;
      durationMs = elapsed();
      clearTimeout(deadline);
      if (req === null || (req.destroyed && req.closed)) {
        deliver();
        return;
      }
      closeGrace = setTimeout(deliver, CLOSE_GRACE_MS);
      req.destroy();
    };

    const body = Buffer.from(request.body, "utf8");
    const onResponse = (res: IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      const outcome = resultForStatus(status, location);
      statusResult = outcome;
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) settle(outcome);
      });
      res.on("end", () => settle(outcome));
      // Once the status is known, a body cut short does not change the outcome.
      res.on("error", () => settle(outcome));
      res.on("close", () => settle(outcome));
    };

    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const port = url.port === "" ? undefined : Number(url.port);
    const headers = requestHeaders(request.headers, body.length);
    /**
     * Sends to `pinned` (an address resolveTarget checked) when the runtime cannot take a
     * `lookup`: the name still goes in Host and, for TLS, in SNI, against which the
     * certificate is verified.
     */
    const start = (pinned?: string): void => {
      try {
        req = send(
          {
            protocol: url.protocol,
            hostname: pinned ?? host,
            port,
            path: `${url.pathname}${url.search}`,
            method: "POST",
            headers: pinned === undefined ? headers : { ...headers, host: url.host },
            agent: false,
            ...(pinned === undefined
              ? { lookup: guardedLookup(request.allowPrivateTargets) }
              : isIP(host) === 0
              ? { servername: host }
              : {}),
          },
          onResponse,
        );
      } catch (error) {
        if (pinned === undefined && lookupUnsupported(error)) {
          lookupMissing = true;
          return startPinned();
        }
        settle(resultForError(error, host));
        return;
      }
      req.on("error", (error) => settle(resultForError(error, host)));
      req.on("close", () => {
        if (result === null) settle(statusResult ?? failed("connection reset"));
        deliver();
      });
      req.end(body);
    };
    const startPinned = (): void =>
      void resolveTarget(host, request.allowPrivateTargets).then(
        (addresses) => result === null && start(addresses[0]!.address),
        (error) => settle(resultForError(error, host)),
      );
    if (lookupMissing) startPinned();
    else start();
  });
}

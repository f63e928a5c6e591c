/**
 * The edge's own answers, written straight onto a client connection as HTTP/1.1 bytes: the
 * project's error envelope, always with `Connection: close`, because after a refusal the edge no
 * longer knows where the client's next request would begin.
 */
import {
  CONNECTION_ERROR_CODES,
  type ConnectionErrorCode,
  ERROR_CODES,
} from "@printshop/shared/http";

/** The codes the edge may answer with; the first four only it sends. */
export type RefusalCode = ConnectionErrorCode | "payload_too_large" | "service_unavailable";

export interface Refusal {
  code: RefusalCode;
  status: number;
  message: string;
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Content Too Large",
  414: "URI Too Long",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

/** Seconds a shed client is asked to wait: connections free up as fast as requests finish. */
const RETRY_AFTER_S = 1;

export function refusal(code: RefusalCode, message: string): Refusal {
  const status = code === "payload_too_large" || code === "service_unavailable"
    ? ERROR_CODES[code]
    : CONNECTION_ERROR_CODES[code];
  return { code, status, message };
}

/** The whole response: status line, headers and the envelope as its body. */
export function refusalResponse(answer: Refusal, requestId: string, now: Date): Uint8Array {
  const body = JSON.stringify({ error: answer.code, message: answer.message, status: false });
  const encoder = new TextEncoder();
  const bodyBytes = encoder.encode(body);
  const head = `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? "Error"}\r\n` +
    "content-type: application/json\r\n" +
    `content-length: ${bodyBytes.length}\r\n` +
    "connection: close\r\n" +
    (answer.status === 503 ? `retry-after: ${RETRY_AFTER_S}\r\n` : "") +
    `x-request-id: ${requestId}\r\n` +
    `date: ${now.toUTCString()}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const response = new Uint8Array(headBytes.length + bodyBytes.length);
  response.set(headBytes);
  response.set(bodyBytes, headBytes.length);
  return response;
}

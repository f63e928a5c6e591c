import type { components } from "./schema.ts";

/** The body of every non-2xx answer (README "Errors"). */
export type ErrorEnvelope = components["schemas"]["ErrorEnvelope"];

/** One of the platform's stable error codes. */
export type ErrorCode = ErrorEnvelope["error"];

/**
 * An answer that was not a success, for the helpers that throw rather than return openapi-fetch's
 * `{ data, error }` pair (`paginate`, `unwrap`). `code` is the envelope's stable `error` code, the
 * field to branch on; the message is for people.
 */
export class PrintShopApiError extends Error {
  override readonly name = "PrintShopApiError";
  readonly status: number;
  readonly code: ErrorCode | undefined;
  /** The parsed envelope, or whatever the body was when it was not one. */
  readonly body: unknown;
  /** The envelope's `details`: which field is wrong and why (empty when it gave none). */
  readonly details: NonNullable<ErrorEnvelope["details"]>;
  /** `X-Request-Id` of the answer: quote it when asking the platform's operators about it. */
  readonly requestId: string | null;

  constructor(response: Response, body: unknown) {
    const envelope = isEnvelope(body) ? body : undefined;
    super(
      `${response.status} ${envelope?.error ?? response.statusText}: ${
        envelope?.message ?? "no error envelope"
      }`,
    );
    this.status = response.status;
    this.code = envelope?.error;
    this.body = body;
    this.details = envelope?.details ?? [];
    this.requestId = response.headers.get("X-Request-Id");
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  return typeof body === "object" && body !== null &&
    typeof (body as { error?: unknown }).error === "string" &&
    typeof (body as { message?: unknown }).message === "string";
}

/** What openapi-fetch answers: `data` on success, `error` otherwise, and the response. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The success body of an openapi-fetch result, or a `PrintShopApiError`: for code that treats
 * every failure alike and would otherwise check `error` after each call.
 */
export function unwrap<T>(result: FetchResult<T>): T {
  if (!result.response.ok) throw new PrintShopApiError(result.response, result.error);
  return result.data as T;
}

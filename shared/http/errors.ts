/** Stable error codes and the HTTP status each one is always sent with. */
export const ERROR_CODES = {
  validation_error: 400,
  invalid_json: 400,
  unauthenticated: 401,
  insufficient_scope: 403,
  forbidden: 403,
  organization_not_allowed: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_reused: 409,
  idempotency_request_in_flight: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

/**
 * Codes the gateway's edge answers itself, before a request reaches the app: a request head it
 * cannot frame, or one that came too slowly. No handler can throw them (they happen before
 * routing), so they stay out of ERROR_CODES; a client can still meet them on any operation.
 */
export const CONNECTION_ERROR_CODES = {
  bad_request: 400,
  request_timeout: 408,
  uri_too_long: 414,
  request_header_fields_too_large: 431,
} as const;

export type ConnectionErrorCode = keyof typeof CONNECTION_ERROR_CODES;

/**
 * Every code a client of the public port can receive, with its status: the app's and the edge's.
 * What the error envelope's `error` may hold, and what the OpenAPI document lists per status.
 */
export const PUBLIC_ERROR_CODES = { ...ERROR_CODES, ...CONNECTION_ERROR_CODES } as const;

export type PublicErrorCode = keyof typeof PUBLIC_ERROR_CODES;
export type PublicErrorStatus = typeof PUBLIC_ERROR_CODES[PublicErrorCode];

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorStatus = typeof ERROR_CODES[ErrorCode];

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  status: false;
  details?: ErrorDetail[];
}

/**
 * An expected failure that maps straight to an error envelope. Thrown from handlers and caught by
 * the app's single onError; anything else becomes 500 internal_error.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: ErrorStatus;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_CODES[code];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.code, message: this.message, status: false };
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }
}

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  return new ApiError(code, message, details).toBody();
}

export function errorResponse(
  code: ErrorCode,
  message: string,
  options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {},
): Response {
  return Response.json(errorBody(code, message, options.details), {
    status: ERROR_CODES[code],
    headers: options.headers,
  });
}

export const notFound = (what: string, id: string): ApiError =>
  new ApiError("not_found", `${what} "${id}" was not found`);

/**
 * A 400 listing every problem with `what` (the request body, a markup group…); the message
 * names the first: `Invalid markup group: "bands.1.from" must be … (and 2 more)`.
 */
export function invalid(what: string, details: ErrorDetail[]): ApiError {
  const first = details[0];
  if (!first) return new ApiError("validation_error", `Invalid ${what}`);
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  return new ApiError(
    "validation_error",
    `Invalid ${what}: ${first.path ? `"${first.path}" ` : ""}${
      first.message.charAt(0).toLowerCase() + first.message.slice(1)
    }${more}`,
    details,
  );
}

export const validationError = (path: string, message: string): ApiError =>
  new ApiError("validation_error", `Invalid ${path || "request"}: ${message}`, [{ path, message }]);

export const conflict = (message: string): ApiError => new ApiError("conflict", message);

/** 403 naming the scope an operation needs. */
export const insufficientScope = (scope: string): ApiError =>
  new ApiError("insufficient_scope", `This operation needs scope "${scope}"`);

/** Throws the first problem a pure rule found (a 400 naming its field); nothing when none. */
export function assertNoProblem(problem: ErrorDetail | null): void {
  if (problem) throw validationError(problem.path, problem.message);
}

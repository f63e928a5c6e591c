import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface SuccessBody<T> {
  status: boolean;
  message: string;
  data: T;
}

export function envelope<T>(data: T, message = "OK", status = true): SuccessBody<T> {
  return { status, message, data };
}

/** Sends the success envelope; `status` in the body is the operation's own result (spec 2.1). */
export function ok<T>(
  c: Context,
  data: T,
  options: { message?: string; httpStatus?: ContentfulStatusCode; result?: boolean } = {},
): Response {
  return c.json(
    envelope(data, options.message ?? "OK", options.result ?? true),
    options.httpStatus ?? 200,
  );
}

export function created<T>(c: Context, data: T, message: string): Response {
  return ok(c, data, { message, httpStatus: 201 });
}

/**
 * The success envelope's text around `dataJson`, data that is already JSON text (built by the
 * database, say): written into the body as it is, neither parsed nor stringified again. The caller
 * answers for it being one valid JSON value.
 */
export function envelopeText(dataJson: string, message = "OK", status = true): string {
  const [head, tail] = envelopeParts(message, status);
  return head + dataJson + tail;
}

/** The success envelope's text before its data and after it. */
export function envelopeParts(message = "OK", status = true): [string, string] {
  return [`{"status":${status},"message":${JSON.stringify(message)},"data":`, "}"];
}

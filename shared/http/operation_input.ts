import { z } from "zod";
import type { BodyOf, OperationSpec, ParamsOf, QueryOf } from "../contracts/operation.ts";
import { parseBodyText, parseQuery, parseUuidParam, parseWith } from "./validation.ts";

/** An operation's input as it arrived: decoded path parameters, query string, body text. */
export interface RawInput {
  params: Readonly<Record<string, string>>;
  /** The raw query string (`?…`, or empty), decoded strictly by the parser. */
  query: string;
  /** The body as text; empty when there was none. */
  body: string;
}

/** The validated input of an operation, typed by its declaration. */
export interface OperationInput<O extends OperationSpec> {
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
}

/** What an operation without a query or a body accepts: nothing (an empty body counts as `{}`). */
const Nothing = z.strictObject({});

const PARAM = /\{(\w+)\}/g;

/** The names of a path template's parameters, in order. */
export function paramNames(path: string): string[] {
  return [...path.matchAll(PARAM)].map((m) => m[1]!);
}

/**
 * Validates an operation's input against its declaration, in the order a caller reads a
 * request: path parameters (UUIDs unless declared otherwise), then the query (no parameter that
 * is not declared), then the body (none unless declared). The first part that fails is the 400.
 */
export function parseOperationInput<O extends OperationSpec>(
  operation: O,
  raw: RawInput,
): OperationInput<O> {
  const params: Record<string, string> = {};
  for (const name of paramNames(operation.path)) {
    const value = raw.params[name] ?? "";
    const schema = operation.params?.[name];
    params[name] = schema === undefined
      ? parseUuidParam(name, value)
      : parseWith(z.object({ [name]: schema }), { [name]: value }, "path")[name] as string;
  }
  const query = parseQuery(raw.query, operation.query ?? Nothing);
  const body = parseBodyText(raw.body, operation.body ?? Nothing);
  return { params, query, body } as OperationInput<O>;
}

import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, type ErrorDetail, invalid } from "./errors.ts";
import { isUuid } from "../ids.ts";
import { closestName, fieldsAt } from "./suggest.ts";
import { issueMessage, quoted, requiredMessage, typeMessage } from "./issue_messages.ts";

/**
 * How every parse here runs: where a contract gave no message, `issueMessage` says what is wrong
 * in the API's words; and each issue keeps its input, which is how a field that is absent
 * (`Required`) is told from one that came with the wrong type (zod 4 drops it unless asked).
 */
const PARSE_CONTEXT: z.core.ParseContext<z.core.$ZodIssue> = {
  error: issueMessage,
  reportInput: true,
};

/** A parse's outcome: the value, or what is wrong with it as the `details` of a 400. */
export type Validated<T> = { success: true; data: T } | { success: false; details: ErrorDetail[] };

/** Parses `value` with `schema`; anything wrong is answered as details (see issuesToDetails). */
export function validate<S extends z.ZodType>(schema: S, value: unknown): Validated<z.output<S>> {
  const result = schema.safeParse(value, PARSE_CONTEXT);
  return result.success
    ? { success: true, data: result.data }
    : { success: false, details: issuesToDetails(result.error.issues, schema) };
}

/**
 * Turns zod issues into the `details` of a 400, one entry per offending path (the first problem
 * there: a date that is not YYYY-MM-DD is not also said to be no calendar date). Given the
 * schema, an unknown field that looks like a mistyped known one says which: `Unknown field
 * "colr"; did you mean "colour"?`, and a wrong type says what the field takes, null included.
 * The issues must keep their input (`validate` asks for it); without it a type message cannot
 * tell an absent field from a wrong one, and the issue's own message is used.
 */
export function issuesToDetails(
  issues: readonly z.core.$ZodIssue[],
  schema?: z.ZodType,
): ErrorDetail[] {
  const byPath = new Map<string, { message: string; weak: boolean }>();
  const add = (path: string, message: string, weak = false): void => {
    const known = byPath.get(path);
    if (known === undefined || (known.weak && !weak)) byPath.set(path, { message, weak });
  };
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      const known = schema ? fieldsAt(schema, issue.path) : [];
      for (const key of issue.keys) {
        const meant = closestName(key, known);
        add(
          base ? `${base}.${key}` : key,
          `Unknown field ${quoted(key)}${meant ? `; did you mean "${meant}"?` : ""}`,
        );
      }
    } else if (issue.code === "invalid_type" && "input" in issue) {
      // Worked out here rather than taken from the issue: a schema's own message
      // (`z.uuid({ error: "Must be a UUID" })`) would otherwise answer for absence and type too.
      add(
        base,
        issue.input === undefined ? requiredMessage(issue.path) : typeMessage(issue, schema),
      );
    } else {
      // The safe-integer range every integer has yields to the field's own, tighter bound.
      add(base, issue.message, isSafeIntegerBound(issue));
    }
  }
  return [...byPath].map(([path, { message }]) => ({ path, message }));
}

function isSafeIntegerBound(issue: z.core.$ZodIssue): boolean {
  return (issue.code === "too_big" && issue.maximum === Number.MAX_SAFE_INTEGER) ||
    (issue.code === "too_small" && issue.minimum === Number.MIN_SAFE_INTEGER);
}

/** A value met while walking the input, and how it was reached (to name its path). */
interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null; at = at.parent) {
    if (at.key !== null) keys.push(at.key);
  }
  return keys.reverse().join(".");
}

/**
 * PostgreSQL text cannot hold U+0000, and a lone UTF-16 surrogate (`"\ud800"` in JSON) is not
 * text at all: encoded for the database it would silently become U+FFFD. Both are refused here,
 * once for every endpoint, instead of surfacing as a database error or a changed value. The walk
 * keeps its own stack, so input nested however deep (a megabyte of `[`) is walked, never a
 * stack overflow.
 */
function findBadText(input: unknown): { path: string; message: string } | null {
  const stack: Visit[] = [{ value: input, key: null, parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value === "string") {
      if (value.includes("\0")) return { path: pathOf(visit), message: NUL_MESSAGE };
      if (!value.isWellFormed()) return { path: pathOf(visit), message: SURROGATE_MESSAGE };
    } else if (Array.isArray(value)) {
      // Pushed last-first, so items are looked at in order.
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push({ value: value[i], key: String(i), parent: visit });
      }
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!;
        stack.push({ value: item, key, parent: visit });
        // A key is looked at before its value; bad text in it is reported at the object's path.
        if (key.includes("\0") || !key.isWellFormed()) {
          stack.push({ value: key, key: null, parent: visit });
        }
      }
    }
  }
  return null;
}

const NUL_MESSAGE = "Must not contain NUL characters";
const SURROGATE_MESSAGE = "Must not contain unpaired UTF-16 surrogates (\\ud800–\\udfff alone)";

export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
): z.output<S> {
  const bad = findBadText(value);
  if (bad !== null) {
    const what = bad.message === NUL_MESSAGE ? "NUL characters" : "unpaired surrogates";
    throw new ApiError("validation_error", `Invalid ${where}: text must not contain ${what}`, [
      bad,
    ]);
  }
  const result = validate(schema, value);
  if (!result.success) throw invalid(where, result.details);
  return result.data;
}

/** Parses raw text as JSON; a syntax error is 400 invalid_json, never a 500. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "Request body is not valid JSON");
  }
}

/** Validates JSON body text; an empty body counts as `{}`. */
export function parseBodyText<S extends z.ZodType>(text: string, schema: S): z.output<S> {
  const value = text.trim() === "" ? {} : parseJsonText(text);
  return parseWith(schema, value, "request body");
}

/** Reads and validates the JSON body of a request. An empty body counts as `{}`. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  return parseBodyText(await c.req.text(), schema);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });
const ESCAPE = /%([0-9A-Fa-f]{2})/y;

/**
 * Decodes one `application/x-www-form-urlencoded` component as URLSearchParams does (`+` is a
 * space, a `%` not followed by two hex digits stays as it is), except that bytes which are not
 * UTF-8 are refused rather than turned into U+FFFD: `?search=%FF` would otherwise search for
 * text nobody sent.
 */
function decodeComponent(text: string, name: string): string {
  if (!text.includes("%")) return text.replaceAll("+", " ");
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length;) {
    ESCAPE.lastIndex = i;
    const escape = ESCAPE.exec(text);
    if (escape) {
      bytes.push(parseInt(escape[1]!, 16));
      i += 3;
      continue;
    }
    const codePoint = text.codePointAt(i)!;
    const char = String.fromCodePoint(codePoint);
    bytes.push(...encoder.encode(char === "+" ? " " : char));
    i += char.length;
  }
  try {
    return UTF8.decode(new Uint8Array(bytes));
  } catch {
    throw new ApiError(
      "validation_error",
      `Invalid query: "${name}" is not UTF-8 once percent-decoded`,
      [{ path: name, message: "Must be percent-encoded UTF-8" }],
    );
  }
}

/** The parameters of a raw query string (`?a=1&b=2`, with or without the `?`), in order. */
export function decodeQueryString(search: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const part of search.replace(/^\?/, "").split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? "" : part.slice(eq + 1);
    const key = decodeComponent(rawKey, rawKey);
    pairs.push([key, decodeComponent(rawValue, key)]);
  }
  return pairs;
}

/**
 * Validates a raw query string; unknown parameters are refused so a typo never passes silently,
 * a repeated one so it is never unclear which counts.
 */
export function parseQuery<S extends z.ZodType>(search: string, schema: S): z.output<S> {
  const raw: Record<string, string> = {};
  for (const [key, value] of decodeQueryString(search)) {
    if (Object.hasOwn(raw, key)) {
      throw new ApiError("validation_error", `Invalid query: "${key}" is given more than once`, [
        { path: key, message: "Given more than once" },
      ]);
    }
    raw[key] = value;
  }
  return parseWith(schema, raw, "query");
}

/** Validates the query string of a request (see parseQuery). */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parseQuery(new URL(c.req.url).search, schema);
}

/** A path id must be a UUID; anything else is a 400 naming the parameter. Lower-cased. */
export function parseUuidParam(name: string, value: string): string {
  if (!isUuid(value)) {
    throw new ApiError("validation_error", `Invalid path: "${name}" must be a UUID`, [
      { path: name, message: "Must be a UUID" },
    ]);
  }
  return value.toLowerCase();
}

/** A path id of a request (see parseUuidParam). */
export function readUuidParam(c: Context, name: string): string {
  return parseUuidParam(name, c.req.param(name) ?? "");
}

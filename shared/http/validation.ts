import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, type ErrorDetail, invalid } from "./errors.ts";
import { isUuid } from "../ids.ts";

/** Turns zod issues into the `details` of a 400, one entry per offending path. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        details.push({ path: base ? `${base}.${key}` : key, message: `Unknown field "${key}"` });
      }
    } else {
      details.push({ path: base, message: issue.message });
    }
  }
  return details;
}

/**
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in the input is refused here, once for
 * every endpoint, instead of surfacing as a database error.
 */
function findNul(value: unknown, path: string[] = []): string | null {
  if (typeof value === "string") return value.includes("\0") ? path.join(".") : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, String(i)]);
      if (found !== null) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = findNul(key, path) ?? findNul(item, [...path, key]);
      if (found !== null) return found;
    }
  }
  return null;
}

export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
): z.output<S> {
  const nulAt = findNul(value);
  if (nulAt !== null) {
    throw new ApiError(
      "validation_error",
      `Invalid ${where}: text must not contain NUL characters`,
      [
        { path: nulAt, message: "Must not contain NUL characters" },
      ],
    );
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw invalid(where, issuesToDetails(result.error.issues));
  }
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

/** Validates a query string; unknown parameters are refused so a typo never passes silently. */
export function parseQuery<S extends z.ZodType>(params: URLSearchParams, schema: S): z.output<S> {
  const raw: Record<string, string> = {};
  for (const [key, value] of params) {
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
  return parseQuery(new URL(c.req.url).searchParams, schema);
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

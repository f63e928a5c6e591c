/**
 * The API's words for zod's issues: what is wrong and what would be accepted, in the project's
 * message style. A contract's own message (`.max(200, "Must be at most 200 characters")`) wins;
 * these answer where the contract gave none.
 */
import type { z } from "zod";
import { defOf, schemaAt, unwrap } from "./schema_at.ts";

/** The longest text a message quotes back (a field name, a pattern); the rest is cut. */
const QUOTED_MAX = 64;

/** Most values an "one of" message lists. */
const VALUES_MAX = 20;

/** Text quoted as JSON (one line, whatever it holds), cut to QUOTED_MAX characters. */
export function quoted(text: string): string {
  return JSON.stringify(text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}…` : text);
}

const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);

/** "a, b or c" */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** A value's JSON type as an integrator names it, with its article: "a string", "null". */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return Number.isFinite(value) ? "a number" : String(value);
    case "boolean":
      return "a boolean";
    case "object":
      return "an object";
    default:
      // Not from JSON (a bigint, a function…): only code calling a check directly gets here.
      return typeof value;
  }
}

/** zod's name for an expected type, as JSON names it. */
const EXPECTED: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array",
  null: "null",
};

const expectedName = (expected: string): string => EXPECTED[expected] ?? `a ${expected}`;

const INTEGER_FORMATS = new Set(["safeint", "int32", "uint32"]);

/** Whether a number schema takes only integers: `z.int()`, or `z.number().int()`. */
function takesIntegers(schema: unknown): boolean {
  const def = defOf(schema);
  if (def?.type !== "number") return false;
  const checks = (def.checks as unknown[] | undefined) ?? [];
  return [def, ...checks.map(defOf)].some((d) => INTEGER_FORMATS.has(String(d?.format)));
}

/** `Required: give "city"`: an absent field, named so the message says what to send. */
export function requiredMessage(path: readonly PropertyKey[]): string {
  const name = path.at(-1);
  return name === undefined ? "Required" : `Required: give ${quoted(String(name))}`;
}

/**
 * A present value of the wrong type: `Expected a string, got an array`. The schema at the
 * issue's path, when known, says what zod's `expected` cannot: that a number must be an integer,
 * and that null would do.
 */
export function typeMessage(
  issue: { expected: string; input?: unknown; path: readonly PropertyKey[] },
  schema?: z.ZodType,
): string {
  const { expected, input } = issue;
  if (expected === "never") return "Must not be given";
  if (expected === "int" && typeof input === "number") {
    // A fraction where a whole number belongs: the number itself is short and says it.
    return `Expected an integer, got ${input}`;
  }
  const at = schema ? unwrap(schemaAt(schema, issue.path)) : null;
  const wanted = expected === "number" && takesIntegers(at?.schema) ? "an integer" : (
    expectedName(expected)
  );
  const orNull = at?.nullable && expected !== "null" ? " or null" : "";
  return `Expected ${wanted}${orNull}, got ${jsonType(input)}`;
}

const literal = (value: unknown): string =>
  typeof value === "string"
    ? quoted(value)
    : typeof value === "bigint"
    ? `${value}`
    : String(value);

function oneOf(values: readonly unknown[]): string {
  if (values.length === 1) return `Must be ${literal(values[0])}`;
  const shown = values.slice(0, VALUES_MAX).map(literal);
  return `Must be one of ${shown.join(", ")}${values.length > VALUES_MAX ? ", …" : ""}`;
}

type SizeIssue = z.core.$ZodRawIssue<z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall>;

/** What a size counts, by zod's origin: one, and more than one. */
const UNITS: Readonly<Record<string, readonly [string, string]>> = {
  string: ["character", "characters"],
  array: ["item", "items"],
  set: ["item", "items"],
  map: ["entry", "entries"],
  file: ["byte", "bytes"],
};

function sizeMessage(issue: SizeIssue): string {
  const big = issue.code === "too_big";
  const bound = big ? issue.maximum : issue.minimum;
  const unit = UNITS[issue.origin];
  if (unit !== undefined) {
    const count = `${bound} ${Number(bound) === 1 ? unit[0] : unit[1]}`;
    const verb = issue.origin === "string" || issue.origin === "file" ? "be" : "have";
    if (issue.exact) return `Must ${verb} exactly ${count}`;
    if (!big && Number(bound) === 1) return "Must not be empty";
    return `Must ${verb} at ${big ? "most" : "least"} ${count}`;
  }
  if (!big && Number(bound) === 0 && issue.inclusive) return "Must not be negative";
  if (issue.inclusive === false) return `Must be ${big ? "less" : "greater"} than ${bound}`;
  return `Must be at ${big ? "most" : "least"} ${bound}`;
}

const FORMATS: Readonly<Record<string, string>> = {
  uuid: "Must be a UUID",
  guid: "Must be a UUID",
  email: "Must be an email address",
  url: "Must be a URL",
  date: "Must be a date as YYYY-MM-DD",
  time: "Must be a time as HH:MM:SS",
  duration: "Must be an ISO 8601 duration, such as P1DT2H",
  ipv4: "Must be an IPv4 address",
  ipv6: "Must be an IPv6 address",
  cidrv4: "Must be an IPv4 range, such as 10.0.0.0/8",
  cidrv6: "Must be an IPv6 range, such as fd00::/8",
  base64: "Must be base64-encoded",
  base64url: "Must be base64url-encoded",
  e164: "Must be a phone number as +<country code><number>",
  jwt: "Must be a JWT",
  lowercase: "Must be lower case",
  uppercase: "Must be upper case",
};

/** An RFC 3339 time as the schema takes it: `YYYY-MM-DDTHH:MM:SS.sssZ` for `{ precision: 3 }`. */
function dateTimeMessage(def: Record<string, unknown> | null): string {
  const precision = def?.precision;
  const fraction = typeof precision !== "number"
    ? "[.sss]"
    : precision > 0
    ? `.${"s".repeat(precision)}`
    : "";
  const zone = def?.offset ? "Z (or an offset such as +01:00)" : "Z";
  return `Must be a date and time as YYYY-MM-DDTHH:MM:SS${fraction}${zone}`;
}

function formatMessage(issue: z.core.$ZodRawIssue<z.core.$ZodStringFormatIssues>): string {
  switch (issue.format) {
    case "datetime":
      return dateTimeMessage(defOf(issue.inst));
    case "regex":
      return `Must match the pattern ${quoted(issue.pattern)}`;
    case "starts_with":
      return `Must start with ${quoted(issue.prefix)}`;
    case "ends_with":
      return `Must end with ${quoted(issue.suffix)}`;
    case "includes":
      return `Must contain ${quoted(issue.includes)}`;
    default:
      return FORMATS[issue.format] ?? `Must be in the ${quoted(issue.format)} format`;
  }
}

/** One nested issue's message, for an issue that stands for others (a record's bad key). */
const firstOf = (issues: readonly z.core.$ZodIssue[]): string =>
  issues[0] ? lowerFirst(issues[0].message) : "is not valid";

function unionMessage(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidUnion>): string {
  if (issue.inclusive === false) return "Matches more than one of the accepted forms; match one";
  if ("options" in issue && Array.isArray(issue.options) && issue.options.length > 0) {
    return oneOf(issue.options); // a discriminated union's tag, at the tag's own path
  }
  // Each option refused the value's type: say which types would do.
  const expected = issue.errors.map((errors) => {
    const [only] = errors;
    return errors.length === 1 && only?.code === "invalid_type" && only.path.length === 0
      ? expectedName(only.expected)
      : null;
  });
  if (expected.length > 0 && expected.every((name) => name !== null)) {
    const names = [...new Set(expected as string[])].map((name, i) =>
      // "a string, a number or null" reads as "a string, number or null".
      i === 0 ? name : name.replace(/^an? /, "")
    );
    return `Expected ${listed(names)}, got ${jsonType(issue.input)}`;
  }
  return "Matches none of the accepted forms";
}

/**
 * The message for an issue whose schema or check gave none (a zod error map): passed to every
 * parse (`validate`), so it sees the input and the schema that raised the issue.
 */
export function issueMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? requiredMessage(issue.path ?? []) : typeMessage({
        expected: issue.expected,
        input: issue.input,
        path: issue.path ?? [],
      });
    case "too_big":
    case "too_small":
      return sizeMessage(issue);
    case "invalid_format":
      return formatMessage(issue as z.core.$ZodRawIssue<z.core.$ZodStringFormatIssues>);
    case "not_multiple_of":
      return `Must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return `Unknown field${issue.keys.length > 1 ? "s" : ""} ${
        issue.keys.slice(0, VALUES_MAX).map(quoted).join(", ")
      }`;
    case "invalid_union":
      return unionMessage(issue);
    case "invalid_key":
      return `Invalid key: ${firstOf(issue.issues)}`;
    case "invalid_element":
      return `Invalid item: ${firstOf(issue.issues)}`;
    case "invalid_value":
      return oneOf(issue.values);
    default:
      // A refinement without a message of its own: every contract's carries one.
      return "Invalid value";
  }
}

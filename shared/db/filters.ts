import type postgres from "postgres";
import { z } from "zod";
import { type Filter, FILTER_OPS, type FilterOp, Filters } from "../contracts/filters.ts";
import { ApiError, type ErrorDetail, invalid } from "../http/errors.ts";
import { parseWith } from "../http/validation.ts";
import { isUuid } from "../ids.ts";
import type { Queryable } from "./mod.ts";

/**
 * The filter language of lists and bulk targets (see `shared/contracts/filters.ts`), compiled to
 * postgres.js fragments. Each resource declares which API fields may be filtered, the SQL column
 * behind each and its type; the type decides which ops are allowed and what a value must look like.
 * Columns come from the resource's code and are inserted as SQL; values are always bound
 * parameters.
 */

export type FilterFieldType =
  | "text"
  | "number"
  | "integer"
  | "date"
  | "datetime"
  | "uuid"
  | "boolean"
  | "enum";

export interface FilterField {
  /** A trusted SQL column or expression, written by the resource (never from a request). */
  column: string;
  type: FilterFieldType;
  /** The allowed values of an `enum` field. */
  values?: readonly string[];
}

/** API field name → column and type: the allow-list of one resource. */
export type FilterFields = Record<string, FilterField>;

export interface CompileFiltersOptions {
  /** Where the filters sit in the request, for error details; `filters` unless told. */
  path?: string;
}

const NOT_A_FILTER_ARRAY = "Must be a JSON array of filter objects";

/**
 * Parses the `filters` query parameter (already URL-decoded): a JSON array of filter objects.
 * Absent means no filters. Anything else that is not such an array is 400 validation_error with
 * details under `filters`.
 */
export function parseFiltersParam(raw: string | undefined): Filter[] {
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw notAFilterArray();
  }
  if (!Array.isArray(value)) throw notAFilterArray();
  // Wrapping in an object makes every detail path start with "filters.".
  return parseWith(z.object({ filters: Filters }), { filters: value }, "query").filters;
}

function notAFilterArray(): ApiError {
  return new ApiError(
    "validation_error",
    `Invalid query: "filters" must be a JSON array of filter objects`,
    [
      { path: "filters", message: NOT_A_FILTER_ARRAY },
    ],
  );
}

const ANY_TYPE_OPS: readonly FilterOp[] = ["eq", "ne", "in", "nin", "isNull", "isNotNull"];
const RANGE_OPS: readonly FilterOp[] = ["gt", "gte", "lt", "lte", "between"];

const OPS_BY_TYPE: Record<FilterFieldType, ReadonlySet<FilterOp>> = {
  text: new Set([...ANY_TYPE_OPS, "contains", "startsWith", ...RANGE_OPS]),
  number: new Set([...ANY_TYPE_OPS, ...RANGE_OPS]),
  integer: new Set([...ANY_TYPE_OPS, ...RANGE_OPS]),
  date: new Set([...ANY_TYPE_OPS, ...RANGE_OPS]),
  datetime: new Set([...ANY_TYPE_OPS, ...RANGE_OPS]),
  uuid: new Set(ANY_TYPE_OPS),
  boolean: new Set(ANY_TYPE_OPS),
  enum: new Set(ANY_TYPE_OPS),
};

type Operand = "value" | "values" | "from" | "to";
const OPERANDS: readonly Operand[] = ["value", "values", "from", "to"];

/** The operands each op takes; any other operand given is refused rather than ignored. */
function operandsOf(op: FilterOp): readonly Operand[] {
  switch (op) {
    case "in":
    case "nin":
      return ["values"];
    case "between":
      return ["from", "to"];
    case "isNull":
    case "isNotNull":
      return [];
    default:
      return ["value"];
  }
}

/**
 * The SQL type a value is cast to; text and enum compare as text. Whole numbers go as bigint
 * instead of numeric, so an index on an integer column still serves them (integer = numeric
 * would not use it). An `integer` field (a count, an HTTP status) takes whole numbers only: a
 * fraction or a number past 2^53 there is a mistake worth a 400, not a filter that matches nothing.
 */
const BIGINT = /^-?\d{1,18}$/;
export const SQL_TYPES: Record<FilterFieldType, string> = {
  text: "text",
  enum: "text",
  number: "numeric",
  integer: "bigint",
  date: "date",
  datetime: "timestamptz",
  uuid: "uuid",
  boolean: "boolean",
};

/**
 * Compiles validated filters into one SQL fragment per filter, in order, for the caller to AND
 * together with its other conditions. Every problem (unknown field, op not allowed for the
 * field's type, missing or extra operand, value of the wrong type) is collected and thrown as one
 * 400 validation_error whose details name each path, e.g. `filters.2.field`.
 */
export function compileFilters(
  sql: Queryable,
  filters: readonly Filter[],
  fields: FilterFields,
  options: CompileFiltersOptions = {},
): postgres.Fragment[] {
  const base = options.path ?? "filters";
  const details: ErrorDetail[] = [];
  const fragments: postgres.Fragment[] = [];
  filters.forEach((filter, index) => {
    const path = `${base}.${index}`;
    const found = checkFilter(filter, fields, path, details);
    if (found) fragments.push(compileOne(sql, filter.op, found.field, found.operands));
  });
  if (details.length > 0) throw invalid("filters", details);
  return fragments;
}

interface Operands {
  value?: string;
  values?: string[];
  from?: string;
  to?: string;
}

/** Validates one filter, recording problems; returns the field and canonical operands if valid. */
function checkFilter(
  filter: Filter,
  fields: FilterFields,
  path: string,
  details: ErrorDetail[],
): { field: FilterField; operands: Operands } | null {
  if (!Object.hasOwn(fields, filter.field)) {
    const allowed = Object.keys(fields).join(", ") || "none";
    details.push({
      path: `${path}.field`,
      message: `Unknown field "${filter.field}"; allowed: ${allowed}`,
    });
    return null;
  }
  const field = fields[filter.field]!;
  const allowedOps = OPS_BY_TYPE[field.type];
  if (!(FILTER_OPS as readonly string[]).includes(filter.op)) {
    details.push({
      path: `${path}.op`,
      message: `Unknown op "${filter.op}"; allowed: ${[...allowedOps].join(", ")}`,
    });
    return null;
  }
  if (!allowedOps.has(filter.op)) {
    details.push({
      path: `${path}.op`,
      message: `Op "${filter.op}" is not allowed for ${field.type} field "${filter.field}"; ` +
        `allowed: ${[...allowedOps].join(", ")}`,
    });
    return null;
  }

  const before = details.length;
  const wanted = operandsOf(filter.op);
  for (const operand of OPERANDS) {
    const given = filter[operand] !== undefined;
    if (given && !wanted.includes(operand)) {
      details.push({
        path: `${path}.${operand}`,
        message: wanted.length === 0
          ? `Must not be given for op "${filter.op}"`
          : `Must not be given for op "${filter.op}"; it uses ${wanted.join(" and ")}`,
      });
    } else if (!given && wanted.includes(operand)) {
      details.push({ path: `${path}.${operand}`, message: `Required for op "${filter.op}"` });
    }
  }
  if (details.length > before) return null;

  const operands: Operands = {};
  for (const operand of ["value", "from", "to"] as const) {
    const raw = filter[operand];
    if (raw === undefined) continue;
    const canonical = checkValue(field, raw, `${path}.${operand}`, details);
    if (canonical !== null) operands[operand] = canonical;
  }
  if (filter.values !== undefined) {
    if (filter.values.length === 0) {
      details.push({ path: `${path}.values`, message: "Must have at least one value" });
    }
    operands.values = [];
    filter.values.forEach((raw, i) => {
      const canonical = checkValue(field, raw, `${path}.values.${i}`, details);
      if (canonical !== null) operands.values!.push(canonical);
    });
  }
  return details.length > before ? null : { field, operands };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)$/;

/** True for a real calendar date from year 1 to 9999. */
function isRealDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isDate(value: string): boolean {
  const match = DATE.exec(value);
  return match !== null && isRealDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

function isDateTime(value: string): boolean {
  const match = DATETIME.exec(value);
  if (!match) return false;
  const [, year, month, day, hour, minute, second, offsetHour, offsetMinute] = match;
  return isRealDate(Number(year), Number(month), Number(day)) &&
    Number(hour) <= 23 && Number(minute) <= 59 && Number(second ?? 0) <= 59 &&
    Number(offsetHour ?? 0) <= 14 && Number(offsetMinute ?? 0) <= 59;
}

/**
 * Checks one operand against the field's type and returns it as the text the SQL casts from, or
 * records a detail and returns null.
 */
function checkValue(
  field: FilterField,
  value: string | number | boolean,
  path: string,
  details: ErrorDetail[],
): string | null {
  const refuse = (message: string): null => {
    details.push({ path, message });
    return null;
  };
  if (typeof value === "string" && value.includes("\0")) {
    return refuse("Must not contain NUL characters");
  }
  switch (field.type) {
    case "text":
      return typeof value === "string" ? value : refuse("Must be a string");
    case "number":
      return typeof value === "number" && Number.isFinite(value)
        ? String(value)
        : refuse("Must be a number");
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value)
        ? String(value)
        : refuse("Must be a whole number between -9007199254740991 and 9007199254740991");
    case "date":
      return typeof value === "string" && isDate(value)
        ? value
        : refuse("Must be a date (YYYY-MM-DD)");
    case "datetime":
      return typeof value === "string" && isDateTime(value)
        ? value
        : refuse("Must be an ISO 8601 date-time with a time zone (2026-11-21T09:30:00.000Z)");
    case "uuid":
      return typeof value === "string" && isUuid(value)
        ? value.toLowerCase()
        : refuse("Must be a UUID");
    case "boolean":
      return typeof value === "boolean" ? String(value) : refuse("Must be true or false");
    case "enum": {
      if (field.values === undefined) {
        throw new Error(`Filter field on "${field.column}" is an enum without values`);
      }
      return typeof value === "string" && field.values.includes(value)
        ? value
        : refuse(`Must be one of ${field.values.join(", ")}`);
    }
  }
}

/** Escapes LIKE wildcards so a search for "50%" finds that text rather than everything. */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

function compileOne(
  sql: Queryable,
  op: FilterOp,
  field: FilterField,
  operands: Operands,
): postgres.Fragment {
  // Values travel as text and are cast in SQL, so no client-side serializer reinterprets them
  // (postgres.js would pass a timestamptz string through JavaScript's Date, say). Text and enum
  // columns are compared as text, so a column of a Postgres enum type works too.
  const text = field.type === "text" || field.type === "enum";
  const column = sql.unsafe(text ? `(${field.column})::text` : `(${field.column})`);
  const typeOf = (values: string[]): string =>
    field.type === "number" && values.every((v) => BIGINT.test(v))
      ? "bigint"
      : SQL_TYPES[field.type];
  const one = (value: string | undefined): postgres.Fragment =>
    sql`${value!}${sql.unsafe(text ? "::text" : `::text::${typeOf([value!])}`)}`;
  const many = (values: string[] | undefined): postgres.Fragment =>
    sql`${values!}${sql.unsafe(text ? "::text[]" : `::text[]::${typeOf(values!)}[]`)}`;

  switch (op) {
    case "eq":
      return sql`(${column} = ${one(operands.value)})`;
    case "ne":
      return sql`(${column} IS DISTINCT FROM ${one(operands.value)})`;
    case "in":
      return sql`(${column} = ANY(${many(operands.values)}))`;
    case "nin":
      return sql`(${column} IS NULL OR NOT (${column} = ANY(${many(operands.values)})))`;
    case "contains":
      return sql`(${column} ILIKE ${`%${escapeLike(operands.value!)}%`} ESCAPE '\\')`;
    case "startsWith":
      return sql`(${column} ILIKE ${`${escapeLike(operands.value!)}%`} ESCAPE '\\')`;
    case "gt":
      return sql`(${column} > ${one(operands.value)})`;
    case "gte":
      return sql`(${column} >= ${one(operands.value)})`;
    case "lt":
      return sql`(${column} < ${one(operands.value)})`;
    case "lte":
      return sql`(${column} <= ${one(operands.value)})`;
    case "between":
      return sql`(${column} BETWEEN ${one(operands.from)} AND ${one(operands.to)})`;
    case "isNull":
      return sql`(${column} IS NULL)`;
    case "isNotNull":
      return sql`(${column} IS NOT NULL)`;
  }
}

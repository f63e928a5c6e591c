import assert from "node:assert/strict";
import type { Filter } from "../contracts/filters.ts";
import { ApiError } from "../http/errors.ts";
import { createTestDatabase } from "../testing/db.ts";
import { compileFilters, type FilterFields, parseFiltersParam } from "./filters.ts";
import { connect, type Sql } from "./mod.ts";

const STATUSES = ["draft", "sent", "accepted", "declined"] as const;

const FIELDS: FilterFields = {
  name: { column: "name", type: "text" },
  qty: { column: "qty", type: "number" },
  copies: { column: "copies", type: "number" },
  count: { column: "copies", type: "integer" },
  due: { column: "due", type: "date" },
  at: { column: "at", type: "datetime" },
  ref: { column: "ref", type: "uuid" },
  active: { column: "active", type: "boolean" },
  status: { column: "status", type: "enum", values: STATUSES },
  kind: { column: "kind", type: "enum", values: ["tee", "hoodie", "cap"] },
};

const U1 = "0190a6f0-0000-7000-8000-000000000001";
const U2 = "0190a6f0-0000-7000-8000-000000000002";
const U3 = "0190a6f0-0000-7000-8000-000000000003";

const SETUP = `
  CREATE TYPE garment_kind AS ENUM ('tee', 'hoodie', 'cap');
  CREATE TABLE items (
    id integer PRIMARY KEY,
    name text,
    qty numeric,
    copies integer,
    due date,
    at timestamptz,
    ref uuid,
    active boolean,
    status text CHECK (status IN ('draft', 'sent', 'accepted', 'declined')),
    kind garment_kind
  );
  INSERT INTO items VALUES
    (1, 'Alpha Shirt', 10, 10, '2026-01-10', '2026-01-10T09:00:00Z', '${U1}', true, 'draft', 'tee'),
    (2, 'beta hoodie 50% off', 2.5, 3, '2026-02-01', '2026-02-01T00:00:00+10:00', '${U2}', false,
      'sent', 'hoodie'),
    (3, 'snake_case cap', 0, 0, '2026-02-28', '2026-02-28T23:59:59.999Z', '${U3}', true,
      'accepted', 'cap'),
    (4, 'ALPHA 100%', -5, 1, '2025-12-31', '2025-12-31T23:00:00-02:00', NULL, false, 'draft',
      'tee'),
    (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (6, 'snakeXcase cap', 7, 7, '2026-03-01', '2026-03-01T00:00:00Z', '${U1}', NULL, 'declined',
      NULL),
    (7, 'NULL', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
`;

/** Filter, expected ids: each op on each kind of column, NULL rows included. */
const CASES: [string, Filter[], number[]][] = [
  // eq / ne, NULL counts as different
  ["text eq is exact", [{ field: "name", op: "eq", value: "Alpha Shirt" }], [1]],
  ["text eq is case-sensitive", [{ field: "name", op: "eq", value: "alpha shirt" }], []],
  ["text ne includes NULL", [{ field: "name", op: "ne", value: "Alpha Shirt" }], [
    2,
    3,
    4,
    5,
    6,
    7,
  ]],
  ["text eq 'NULL' is the string", [{ field: "name", op: "eq", value: "NULL" }], [7]],
  ["number eq", [{ field: "qty", op: "eq", value: 2.5 }], [2]],
  ["number ne includes NULL", [{ field: "qty", op: "ne", value: 10 }], [2, 3, 4, 5, 6, 7]],
  ["fraction against an integer column", [{ field: "copies", op: "eq", value: 2.5 }], []],
  ["date eq", [{ field: "due", op: "eq", value: "2026-02-28" }], [3]],
  ["datetime eq across offsets", [{
    field: "at",
    op: "eq",
    value: "2026-01-31T14:00:00.000Z",
  }], [2]],
  ["uuid eq ignores case", [{ field: "ref", op: "eq", value: U1.toUpperCase() }], [1, 6]],
  ["uuid ne includes NULL", [{ field: "ref", op: "ne", value: U1 }], [2, 3, 4, 5, 7]],
  ["boolean eq true", [{ field: "active", op: "eq", value: true }], [1, 3]],
  ["boolean eq false", [{ field: "active", op: "eq", value: false }], [2, 4]],
  ["boolean ne true includes NULL", [{ field: "active", op: "ne", value: true }], [
    2,
    4,
    5,
    6,
    7,
  ]],
  ["enum eq", [{ field: "status", op: "eq", value: "sent" }], [2]],
  ["enum ne includes NULL", [{ field: "status", op: "ne", value: "draft" }], [2, 3, 5, 6, 7]],
  ["Postgres enum column eq", [{ field: "kind", op: "eq", value: "tee" }], [1, 4]],
  // in / nin, NULL counts as "not in"
  ["text in, array syntax in values is data", [{
    field: "name",
    op: "in",
    values: ["NULL", "Alpha Shirt", 'x,"y}', "{a,b}"],
  }], [1, 7]],
  ["enum nin includes NULL", [{ field: "status", op: "nin", values: ["draft", "sent"] }], [
    3,
    5,
    6,
    7,
  ]],
  ["Postgres enum column in", [{ field: "kind", op: "in", values: ["cap", "hoodie"] }], [2, 3]],
  ["Postgres enum column nin", [{ field: "kind", op: "nin", values: ["tee"] }], [2, 3, 5, 6, 7]],
  ["number in on an integer column", [{ field: "copies", op: "in", values: [0, 1.5, 7] }], [
    3,
    6,
  ]],
  ["number nin", [{ field: "qty", op: "nin", values: [10, -5] }], [2, 3, 5, 6, 7]],
  ["date in", [{ field: "due", op: "in", values: ["2026-02-28", "2025-12-31"] }], [3, 4]],
  ["datetime in", [{
    field: "at",
    op: "in",
    values: ["2026-01-10T10:00:00+01:00", "2026-03-01T00:00Z"],
  }], [1, 6]],
  ["uuid in", [{ field: "ref", op: "in", values: [U2, U3] }], [2, 3]],
  ["uuid nin includes NULL", [{ field: "ref", op: "nin", values: [U1] }], [2, 3, 4, 5, 7]],
  ["boolean in", [{ field: "active", op: "in", values: [true, false] }], [1, 2, 3, 4]],
  ["boolean nin includes NULL", [{ field: "active", op: "nin", values: [true] }], [2, 4, 5, 6, 7]],
  // contains / startsWith: case-insensitive, wildcards in the value are literal
  ["contains is case-insensitive", [{ field: "name", op: "contains", value: "alpha" }], [1, 4]],
  ["contains a literal %", [{ field: "name", op: "contains", value: "50%" }], [2]],
  ["contains only %", [{ field: "name", op: "contains", value: "%" }], [2, 4]],
  ["contains a literal _", [{ field: "name", op: "contains", value: "e_c" }], [3]],
  ["contains a backslash", [{ field: "name", op: "contains", value: "\\" }], []],
  ["contains an empty string", [{ field: "name", op: "contains", value: "" }], [
    1,
    2,
    3,
    4,
    6,
    7,
  ]],
  ["startsWith is case-insensitive", [{ field: "name", op: "startsWith", value: "ALP" }], [1, 4]],
  ["startsWith a literal _", [{ field: "name", op: "startsWith", value: "snake_" }], [3]],
  ["startsWith anchors at the start", [{ field: "name", op: "startsWith", value: "hoodie" }], []],
  // ranges
  ["number gt", [{ field: "qty", op: "gt", value: 0 }], [1, 2, 6]],
  ["number gte", [{ field: "qty", op: "gte", value: 0 }], [1, 2, 3, 6]],
  ["number lt", [{ field: "qty", op: "lt", value: 2.5 }], [3, 4]],
  ["number lte", [{ field: "qty", op: "lte", value: 2.5 }], [2, 3, 4]],
  ["number between is inclusive", [{ field: "qty", op: "between", from: 0, to: 7 }], [2, 3, 6]],
  ["whole and fractional bounds on an integer column", [{
    field: "copies",
    op: "between",
    from: 1,
    to: 3.5,
  }], [2, 4]],
  ["an integer field takes whole numbers", [{ field: "count", op: "in", values: [0, 7] }], [3, 6]],
  ["whole numbers in on an integer column", [{ field: "copies", op: "in", values: [0, 7] }], [
    3,
    6,
  ]],
  ["numbers beyond bigint", [{ field: "qty", op: "lt", value: 1e21 }], [1, 2, 3, 4, 6]],
  ["large negative whole number", [{ field: "copies", op: "gt", value: -9007199254740991 }], [
    1,
    2,
    3,
    4,
    6,
  ]],
  ["fraction gt on an integer column", [{ field: "copies", op: "gt", value: 2.5 }], [1, 2, 6]],
  ["date gt", [{ field: "due", op: "gt", value: "2026-01-31" }], [2, 3, 6]],
  ["date gte", [{ field: "due", op: "gte", value: "2026-02-01" }], [2, 3, 6]],
  ["date lt", [{ field: "due", op: "lt", value: "2026-01-01" }], [4]],
  ["date lte", [{ field: "due", op: "lte", value: "2026-01-10" }], [1, 4]],
  ["date between is inclusive", [{
    field: "due",
    op: "between",
    from: "2026-01-10",
    to: "2026-02-28",
  }], [1, 2, 3]],
  ["datetime gt with an offset", [{
    field: "at",
    op: "gt",
    value: "2026-02-01T00:00:00+10:00",
  }], [3, 6]],
  ["datetime gte", [{ field: "at", op: "gte", value: "2026-01-31T14:00:00Z" }], [2, 3, 6]],
  ["datetime lt with milliseconds", [{
    field: "at",
    op: "lt",
    value: "2026-01-01T01:00:00.001Z",
  }], [4]],
  ["datetime lte with +HH:MM", [{ field: "at", op: "lte", value: "2026-01-01T02:00+01:00" }], [4]],
  ["datetime between is inclusive", [{
    field: "at",
    op: "between",
    from: "2026-01-01T01:00:00Z",
    to: "2026-02-28T23:59:59.999Z",
  }], [1, 2, 3, 4]],
  ["text gt", [{ field: "name", op: "gt", value: "snake" }], [3, 6]],
  // isNull / isNotNull
  ["isNull", [{ field: "name", op: "isNull" }], [5]],
  ["isNull on a boolean", [{ field: "active", op: "isNull" }], [5, 6, 7]],
  ["isNotNull", [{ field: "qty", op: "isNotNull" }], [1, 2, 3, 4, 6]],
  ["isNotNull on a Postgres enum", [{ field: "kind", op: "isNotNull" }], [1, 2, 3, 4]],
  // several filters AND together
  ["several filters AND together", [
    { field: "name", op: "contains", value: "a" },
    { field: "qty", op: "gte", value: 0 },
    { field: "active", op: "eq", value: true },
    { field: "due", op: "lt", value: "2026-03-01" },
    { field: "status", op: "ne", value: "accepted" },
  ], [1]],
  ["nin and ne AND together", [
    { field: "status", op: "nin", values: ["draft"] },
    { field: "ref", op: "ne", value: U2 },
  ], [3, 5, 6, 7]],
  ["no filters", [], [1, 2, 3, 4, 5, 6, 7]],
];

async function withItems(fn: (sql: Sql, queries: string[]) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  const queries: string[] = [];
  const sql = connect(db.url, { schema: "public", max: 2, onQuery: (text) => queries.push(text) });
  try {
    await sql.unsafe(SETUP);
    await fn(sql, queries);
  } finally {
    await sql.end();
    await db.drop();
  }
}

async function matching(sql: Sql, filters: Filter[]): Promise<number[]> {
  const conditions = compileFilters(sql, filters, FIELDS);
  const where = conditions.length === 0
    ? sql`TRUE`
    : conditions.reduce((acc, condition) => sql`${acc} AND ${condition}`);
  const rows = await sql<{ id: number }[]>`SELECT id FROM items WHERE ${where} ORDER BY id`;
  return rows.map((row) => row.id);
}

Deno.test("compileFilters() selects exactly the matching rows in Postgres", async (t) => {
  await withItems(async (sql) => {
    for (const [label, filters, expected] of CASES) {
      await t.step(label, async () => {
        assert.deepEqual(await matching(sql, filters), expected);
      });
    }
  });
});

Deno.test("compileFilters() works on filters parsed from the query parameter", async () => {
  await withItems(async (sql) => {
    const query = new URLSearchParams({
      filters: JSON.stringify([
        { field: "name", op: "startsWith", value: "alpha" },
        { field: "due", op: "between", from: "2025-12-01", to: "2026-01-31" },
        { field: "kind", op: "eq", value: "tee" },
      ]),
    }).toString();
    const raw = new URLSearchParams(query).get("filters") ?? undefined;
    assert.deepEqual(await matching(sql, parseFiltersParam(raw)), [1, 4]);
  });
});

Deno.test("compileFilters() binds values as parameters, so injection is inert", async () => {
  await withItems(async (sql, queries) => {
    const attack = "'; DROP TABLE items; --";
    for (const op of ["eq", "ne", "contains", "startsWith", "gt"] as const) {
      await matching(sql, [{ field: "name", op, value: attack }]);
    }
    assert.deepEqual(await matching(sql, [{ field: "name", op: "eq", value: attack }]), []);
    assert.deepEqual(
      await matching(sql, [{ field: "name", op: "in", values: [attack, `${attack}"}`] }]),
      [],
    );
    assert.deepEqual(await matching(sql, [{ field: "name", op: "contains", value: attack }]), []);
    const [row] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM items`;
    assert.equal(row!.count, 7);
    assert.ok(queries.length > 0);
    for (const text of queries) assert.ok(!text.includes("DROP"), text);
  });
});

/** A pool that is never used to query: compileFilters only builds fragments. */
function offlineSql(): Sql {
  return connect("postgres://filters:test@127.0.0.1:1/none", { schema: "public" });
}

/** Asserts a 400 validation_error whose details are exactly these paths (and messages). */
function assertRefused(
  fn: () => unknown,
  expected: Record<string, string | RegExp | true>,
): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ApiError, `expected an ApiError, got ${String(caught)}`);
  assert.equal(caught.status, 400);
  assert.equal(caught.code, "validation_error");
  const details = caught.details ?? [];
  assert.deepEqual(details.map((d) => d.path).sort(), Object.keys(expected).sort());
  for (const detail of details) {
    const want = expected[detail.path];
    if (typeof want === "string") assert.equal(detail.message, want);
    else if (want instanceof RegExp) assert.match(detail.message, want);
  }
  return caught;
}

function refusedFilters(
  filters: unknown[],
  expected: Record<string, string | RegExp | true>,
): ApiError {
  const sql = offlineSql();
  try {
    return assertRefused(() => compileFilters(sql, filters as Filter[], FIELDS), expected);
  } finally {
    void sql.end();
  }
}

Deno.test("compileFilters() refuses unknown fields and ops", () => {
  refusedFilters([{ field: "colour", op: "eq", value: "red" }], {
    "filters.0.field":
      'Unknown field "colour"; allowed: name, qty, copies, count, due, at, ref, active, status, kind',
  });
  refusedFilters([{ field: "constructor", op: "isNull" }], { "filters.0.field": true });
  refusedFilters([{ field: "__proto__", op: "isNull" }], { "filters.0.field": true });
  refusedFilters([{ field: "name", op: "like", value: "x" }], {
    "filters.0.op": /^Unknown op "like"; allowed: eq, ne, in, nin, isNull, isNotNull, contains/,
  });
});

Deno.test("compileFilters() refuses ops the field's type does not support", () => {
  refusedFilters([{ field: "qty", op: "contains", value: 1 }], {
    "filters.0.op":
      'Op "contains" is not allowed for number field "qty"; allowed: eq, ne, in, nin, isNull, ' +
      "isNotNull, gt, gte, lt, lte, between",
  });
  refusedFilters([{ field: "due", op: "startsWith", value: "2026" }], { "filters.0.op": true });
  refusedFilters([{ field: "active", op: "gt", value: true }], { "filters.0.op": true });
  refusedFilters([{ field: "ref", op: "between", from: U1, to: U2 }], { "filters.0.op": true });
  refusedFilters([{ field: "status", op: "contains", value: "dr" }], { "filters.0.op": true });
  refusedFilters([{ field: "kind", op: "lt", value: "tee" }], { "filters.0.op": true });
});

Deno.test("compileFilters() refuses missing and extra operands", () => {
  refusedFilters([{ field: "qty", op: "between", from: 1 }], {
    "filters.0.to": 'Required for op "between"',
  });
  refusedFilters([{ field: "qty", op: "between", to: 1 }], { "filters.0.from": true });
  refusedFilters([{ field: "qty", op: "eq" }], { "filters.0.value": 'Required for op "eq"' });
  refusedFilters([{ field: "name", op: "contains" }], { "filters.0.value": true });
  refusedFilters([{ field: "status", op: "in", values: [] }], {
    "filters.0.values": "Must have at least one value",
  });
  refusedFilters([{ field: "status", op: "nin" }], { "filters.0.values": true });
  refusedFilters([{ field: "status", op: "in", value: "draft" }], {
    "filters.0.value": 'Must not be given for op "in"; it uses values',
    "filters.0.values": 'Required for op "in"',
  });
  refusedFilters([{ field: "name", op: "isNull", value: "x" }], {
    "filters.0.value": 'Must not be given for op "isNull"',
  });
  refusedFilters([{ field: "name", op: "isNotNull", values: [] }], { "filters.0.values": true });
  refusedFilters([{ field: "qty", op: "between", value: 1, from: 0, to: 2 }], {
    "filters.0.value": true,
  });
  refusedFilters([{ field: "qty", op: "gt", value: 1, to: 2 }], { "filters.0.to": true });
});

Deno.test("compileFilters() refuses values of the wrong type for the field", () => {
  const wrong: [string, unknown, string][] = [
    ["name", 5, "Must be a string"],
    ["name", true, "Must be a string"],
    ["name", "nul\0here", "Must not contain NUL characters"],
    ["qty", "5", "Must be a number"],
    ["qty", Number.NaN, "Must be a number"],
    ["qty", Number.POSITIVE_INFINITY, "Must be a number"],
    ["count", 1.5, "Must be a whole number between -9007199254740991 and 9007199254740991"],
    ["count", 1e20, "Must be a whole number between -9007199254740991 and 9007199254740991"],
    ["count", "2", "Must be a whole number between -9007199254740991 and 9007199254740991"],
    ["due", "2026-02-30", "Must be a date (YYYY-MM-DD)"],
    ["due", "2026-1-5", "Must be a date (YYYY-MM-DD)"],
    ["due", "0000-01-01", "Must be a date (YYYY-MM-DD)"],
    ["due", "2026-01-05T00:00:00Z", "Must be a date (YYYY-MM-DD)"],
    ["due", 20260105, "Must be a date (YYYY-MM-DD)"],
    [
      "at",
      "2026-01-05",
      "Must be an ISO 8601 date-time with a time zone (2026-11-21T09:30:00.000Z)",
    ],
    [
      "at",
      "2026-01-05T10:00:00",
      "Must be an ISO 8601 date-time with a time zone " +
      "(2026-11-21T09:30:00.000Z)",
    ],
    [
      "at",
      "2026-13-01T00:00:00Z",
      "Must be an ISO 8601 date-time with a time zone " +
      "(2026-11-21T09:30:00.000Z)",
    ],
    [
      "at",
      "2026-01-05T25:00:00Z",
      "Must be an ISO 8601 date-time with a time zone " +
      "(2026-11-21T09:30:00.000Z)",
    ],
    [
      "at",
      "2026-01-05T10:00:00+25:00",
      "Must be an ISO 8601 date-time with a time zone " +
      "(2026-11-21T09:30:00.000Z)",
    ],
    [
      "at",
      "yesterday",
      "Must be an ISO 8601 date-time with a time zone " +
      "(2026-11-21T09:30:00.000Z)",
    ],
    ["ref", "not-a-uuid", "Must be a UUID"],
    ["ref", 1, "Must be a UUID"],
    ["active", "true", "Must be true or false"],
    ["active", 1, "Must be true or false"],
    ["status", "archived", "Must be one of draft, sent, accepted, declined"],
    ["status", 1, "Must be one of draft, sent, accepted, declined"],
  ];
  for (const [field, value, message] of wrong) {
    refusedFilters([{ field, op: "eq", value }], { "filters.0.value": message });
  }
  refusedFilters([{ field: "ref", op: "in", values: [U1, "nope", U2, 7] }], {
    "filters.0.values.1": "Must be a UUID",
    "filters.0.values.3": "Must be a UUID",
  });
  refusedFilters([{ field: "due", op: "between", from: "2026-01-01", to: "2026-02-31" }], {
    "filters.0.to": true,
  });
});

Deno.test("compileFilters() reports every bad filter at once, under the given path", () => {
  const error = refusedFilters([
    { field: "colour", op: "eq", value: "red" },
    { field: "qty", op: "gt", value: 1 },
    { field: "qty", op: "gt", value: "1" },
  ], { "filters.0.field": true, "filters.2.value": "Must be a number" });
  assert.equal(
    error.message,
    'Invalid filters: "filters.0.field" unknown field "colour"; allowed: name, qty, copies, count, due, ' +
      "at, ref, active, status, kind (and 1 more)",
  );
  const sql = offlineSql();
  try {
    assertRefused(
      () => compileFilters(sql, [{ field: "nope", op: "isNull" }], FIELDS, { path: "target" }),
      { "target.0.field": true },
    );
  } finally {
    void sql.end();
  }
});

Deno.test("compileFilters() treats an enum field without values as a programming error", () => {
  const sql = offlineSql();
  try {
    assert.throws(
      () =>
        compileFilters(sql, [{ field: "s", op: "eq", value: "x" }], {
          s: { column: "s", type: "enum" },
        }),
      (error: unknown) => error instanceof Error && !(error instanceof ApiError),
    );
  } finally {
    void sql.end();
  }
});

Deno.test("parseFiltersParam() reads a JSON array of filter objects", () => {
  assert.deepEqual(parseFiltersParam(undefined), []);
  assert.deepEqual(parseFiltersParam("[]"), []);
  assert.deepEqual(
    parseFiltersParam(
      '[{"field":"qty","op":"between","from":1,"to":2},{"field":"x","op":"isNull"}]',
    ),
    [{ field: "qty", op: "between", from: 1, to: 2 }, { field: "x", op: "isNull" }],
  );
});

Deno.test("parseFiltersParam() refuses anything but an array of valid filter objects", () => {
  const notArray = { filters: "Must be a JSON array of filter objects" };
  for (const raw of ["", "not json", "[{", '{"field":"qty","op":"eq","value":1}', '"x"', "null"]) {
    const error = assertRefused(() => parseFiltersParam(raw), notArray);
    assert.equal(error.message, 'Invalid query: "filters" must be a JSON array of filter objects');
  }
  const tooMany = JSON.stringify(
    Array.from({ length: 51 }, () => ({ field: "qty", op: "isNull" })),
  );
  assertRefused(() => parseFiltersParam(tooMany), { filters: "At most 50 filters" });
  assert.equal(
    parseFiltersParam(
      JSON.stringify(Array.from({ length: 50 }, () => ({ field: "qty", op: "isNull" }))),
    )
      .length,
    50,
  );
  assertRefused(() => parseFiltersParam('[{"field":"name","op":"like","value":"x"}]'), {
    "filters.0.op": /^Must be one of eq, ne/,
  });
  assertRefused(() => parseFiltersParam('[{"field":"qty","op":"eq","valu":1}]'), {
    "filters.0.valu": 'Unknown field "valu"; did you mean "value"?',
  });
  assertRefused(() => parseFiltersParam('[{"op":"isNull"}]'), { "filters.0.field": true });
  assertRefused(() => parseFiltersParam("[1]"), { "filters.0": true });
  assertRefused(() => parseFiltersParam('[{"field":"qty","op":"eq","value":null}]'), {
    "filters.0.value": true,
  });
  assertRefused(() => parseFiltersParam('[{"field":"qty","op":"in","values":[{}]}]'), {
    "filters.0.values.0": true,
  });
  assertRefused(() => parseFiltersParam('[{"field":"name","op":"eq","value":"a\\u0000b"}]'), {
    "filters.0.value": "Must not contain NUL characters",
  });
});

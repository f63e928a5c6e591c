/**
 * The read model of a quote built as JSON text inside PostgreSQL: one statement returns each
 * quote whole (groups → lines → variants, groups → decorations), so GET /v1/quotes and
 * GET /v1/quotes/{id} send it without mapping rows to objects or stringifying them in JS.
 *
 * The keys, their order, their columns and how each is rendered come from the tables'
 * declarations (rows.ts, item_rows.ts), which the JS presenters (toQuote, toGroup, toLine,
 * toVariant, toDecoration) read too; they stay for the write answers of groups and items, and
 * read_model_parity_test.ts checks the two agree. Both cost visibilities are generated from the
 * same lists: without costs.read the cost and margin keys (shared/costs.ts) are absent, not null.
 *
 * Each object is written by concatenating text: constant `{"key":` pieces and each value
 * rendered as JSON by its kind. That keeps the keys in this order (as `json`, unlike `jsonb`,
 * would); on a 200-quote page it measured 1.6–1.8 times as fast as json_build_object/json_agg,
 * which look up each argument's type on every call and write `"key" : value, ` with spaces
 * (11 % more bytes).
 * Values, by kind:
 * - uuid: `"…"` (hex and dashes need no escaping)
 * - text: to_json(text), which escapes quotes, backslashes and control characters
 * - enum: `"…"` as stored; only for columns whose CHECK constraint allows plain words alone
 *   (every enum column but a decoration's method, which has none and is rendered as text)
 * - number: an integer as written by PostgreSQL
 * - decimal: a numeric without the trailing zeros of its column's scale (`7.7000` → `7.7`,
 *   `10.00` → `10`), so a quote reads exactly as the answers written in JavaScript do; a numeric
 *   `NaN` would not be JSON, but the API never stores one (its bodies take finite numbers)
 * - boolean: `true` / `false`
 * - timestamp: `"YYYY-MM-DDTHH:MI:SS.mmmZ"` in UTC, as `toISOString()` gives it; to_char's MS
 *   truncates the microseconds, as a JS Date (milliseconds) made from them does
 * - date: to_json(date), always `"YYYY-MM-DD"`
 * - array: the elements of a nested array, joined by commas by the SQL (null when none)
 * A null is `null` (coalesce), whatever the kind.
 *
 * Rows come in sortOrder then id order. Each child table is read once per quote through its
 * `…_by_quote` index and grouped by parent inside that quote, which measured faster than one
 * correlated subquery per group or line (3,800 index scans for a 200-quote page instead of 800).
 */

import { isCostsReadField } from "@printshop/shared/costs";
import type { AnyTable, Columns } from "@printshop/shared/db/table";
import { clientNameSql } from "./customers.ts";
import { GROUPS, QUOTES } from "./rows.ts";
import { DECORATIONS, LINES, VARIANTS } from "./item_rows.ts";

type Kind =
  | "uuid"
  | "text"
  | "enum"
  | "number"
  | "decimal"
  | "boolean"
  | "timestamp"
  | "date"
  | "array";

/** One key of a JSON object: its name, the SQL giving its value, and how to render it. */
interface Field {
  key: string;
  sql: string;
  kind: Kind;
  nullable?: boolean;
  /** A cost or margin key: present only for a caller holding costs.read (absent otherwise). */
  cost: boolean;
}

const field = (
  key: string,
  sql: string,
  kind: Kind,
  options: { nullable?: boolean } = {},
): Field => ({ key, sql, kind, ...options, cost: isCostsReadField(key) });
const NULLABLE = { nullable: true };

/** How a column is rendered, by its SQL type (an enum column: "enum"). */
const KIND_OF: Readonly<Record<string, Kind>> = {
  uuid: "uuid",
  text: "text",
  integer: "number",
  numeric: "decimal",
  boolean: "boolean",
  timestamptz: "timestamp",
  date: "date",
};

/**
 * The keys of a table's resource in their declared order (shared/db/table.ts), each read from
 * its column through `alias` and rendered by what the column holds unless `rendered` says
 * otherwise; a computed key is the field `computed` gives for it.
 */
function columnFields(
  table: AnyTable,
  alias: string,
  options: {
    rendered?: Readonly<Record<string, { kind: Kind; sql?: string }>>;
    computed?: Readonly<Record<string, Field>>;
  } = {},
): Field[] {
  return Object.entries(table.columns as Columns).map(([key, column]) => {
    if ("computed" in column) {
      const given = options.computed?.[key];
      if (!given) throw new Error(`${table.name}.${key} is computed: give its SQL`);
      return given;
    }
    const own = options.rendered?.[key];
    const kind = own?.kind ?? (column.values ? "enum" : KIND_OF[column.sqlType]!);
    const names: Readonly<Record<string, string>> = table.columnNames;
    const sql = own?.sql ?? `${alias}.${names[key]}`;
    return field(key, sql, kind, column.isNullable ? NULLABLE : {});
  });
}

const VARIANT_FIELDS = columnFields(VARIANTS, "v");

const LINE_FIELDS = (variants: string): Field[] =>
  columnFields(LINES, "l", { computed: { variants: field("variants", variants, "array") } });

/** Colours base first, then in the operator's order (orderColours in item_rows.ts). */
const COLOURS_SQL = `CASE WHEN d.colours <> '[]'::jsonb THEN (
      SELECT string_agg(c.value::text, ','
        ORDER BY (c.value -> 'isBase' = 'true'::jsonb) IS NOT TRUE, c.n)
      FROM jsonb_array_elements(d.colours) WITH ORDINALITY AS c (value, n)
    ) END`;

const DECORATION_FIELDS = columnFields(DECORATIONS, "d", {
  // No CHECK constraint holds the method to plain words: it is escaped as text.
  rendered: { method: { kind: "text" }, colours: { kind: "array", sql: COLOURS_SQL } },
});

/** `totalQuantity` is the sum over the group's Garment lines (toGroup). */
const GROUP_FIELDS = (lines: string, totalQuantity: string, decorations: string): Field[] =>
  columnFields(GROUPS, "g", {
    computed: {
      totalQuantity: field("totalQuantity", totalQuantity, "number"),
      lines: field("lines", lines, "array"),
      decorations: field("decorations", decorations, "array"),
    },
  });

const QUOTE_FIELDS = (groups: string): Field[] =>
  columnFields(QUOTES, "q", {
    computed: {
      groups: field("groups", groups, "array"),
      clientName: field("clientName", clientNameSql("q"), "text", NULLABLE),
    },
  });

/** An SQL string literal. */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The value as JSON text; `quoted` when it still needs its double quotes around it. */
function rendered(f: Field): { sql: string; quoted: boolean } {
  switch (f.kind) {
    case "uuid":
      return { sql: `${f.sql}::text`, quoted: true };
    case "enum":
      return { sql: f.sql, quoted: true };
    case "timestamp":
      return {
        sql: `to_char(${f.sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
        quoted: true,
      };
    case "text":
    case "date":
      return { sql: `to_json(${f.sql})::text`, quoted: false };
    case "decimal":
      return { sql: `trim_scale(${f.sql})::text`, quoted: false };
    case "number":
    case "boolean":
      return { sql: `${f.sql}::text`, quoted: false };
    case "array":
      return { sql: f.sql, quoted: false };
  }
}

/**
 * `a || b || …` as a balanced tree: a left-to-right chain copies what it has so far at every
 * step, so long objects (and a quote's whole `groups` array, copied once per key after it)
 * cost far more than a tree, where each byte is copied about log2(pieces) times.
 */
function concatenated(pieces: readonly string[]): string {
  if (pieces.length === 1) return pieces[0]!;
  const middle = Math.ceil(pieces.length / 2);
  return `(${concatenated(pieces.slice(0, middle))} || ${concatenated(pieces.slice(middle))})`;
}

/**
 * The SQL text expression writing one JSON object of the fields the caller may see: constant
 * pieces (`{"id":"`, `","size":` …) merged, and between them each value, never null. An array's
 * elements (long) are joined with the runs of small pieces around them, each run a tree, so they
 * are copied only a few times.
 */
function objectSql(fields: readonly Field[], costs: boolean): string {
  const runs: string[][] = [[]];
  const run = (): string[] => runs[runs.length - 1]!;
  let pending = "{";
  fields.filter((f) => costs || !f.cost).forEach((f, i) => {
    pending += `${i === 0 ? "" : ","}${JSON.stringify(f.key)}:`;
    const value = rendered(f);
    if (f.kind === "array") {
      run().push(literal(`${pending}[`));
      runs.push([`coalesce(${value.sql}, '')`], []);
      pending = "]";
    } else if (f.nullable) {
      const sql = value.quoted ? `'"' || ${value.sql} || '"'` : value.sql;
      run().push(literal(pending), `coalesce(${sql}, 'null')`);
      pending = "";
    } else if (value.quoted) {
      run().push(literal(`${pending}"`), value.sql);
      pending = '"';
    } else {
      run().push(literal(pending), value.sql);
      pending = "";
    }
  });
  run().push(literal(`${pending}}`));
  return concatenated(runs.filter((r) => r.length > 0).map(concatenated));
}

/** The objects in `order`, joined by commas (the brackets are the parent's); null for none. */
const elementsSql = (object: string, order: string): string =>
  `string_agg(${object}, ',' ORDER BY ${order})`;

/**
 * The SQL text expression giving the JSON of the quote row aliased `q`, with its groups and
 * their rows. Cost keys only when `costs`.
 */
function quoteJsonExpression(costs: boolean): string {
  const variants = `SELECT v.quote_line_id,
          ${elementsSql(objectSql(VARIANT_FIELDS, costs), "v.sort_order, v.id")} AS json
        FROM quote_variants v WHERE v.quote_id = q.id GROUP BY v.quote_line_id`;
  const lines = `SELECT l.quote_group_id,
        ${elementsSql(objectSql(LINE_FIELDS("vv.json"), costs), "l.sort_order, l.id")} AS json,
        sum(l.quantity) FILTER (WHERE l.line_type = 'Garment') AS total_quantity
      FROM quote_lines l LEFT JOIN (${variants}) vv ON vv.quote_line_id = l.id
      WHERE l.quote_id = q.id GROUP BY l.quote_group_id`;
  const decorations = `SELECT d.quote_group_id,
        ${elementsSql(objectSql(DECORATION_FIELDS, costs), "d.sort_order, d.id")} AS json
      FROM quote_decorations d WHERE d.quote_id = q.id GROUP BY d.quote_group_id`;
  const group = objectSql(
    GROUP_FIELDS("ll.json", "coalesce(ll.total_quantity, 0)", "dd.json"),
    costs,
  );
  const groups = `(
    SELECT ${elementsSql(group, "g.sort_order, g.id")}
    FROM quote_groups g
      LEFT JOIN (${lines}) ll ON ll.quote_group_id = g.id
      LEFT JOIN (${decorations}) dd ON dd.quote_group_id = g.id
    WHERE g.quote_id = q.id
  )`;
  return objectSql(QUOTE_FIELDS(groups), costs);
}

const EXPRESSIONS = {
  withCosts: quoteJsonExpression(true),
  withoutCosts: quoteJsonExpression(false),
};

/** The select-list expression (text) for the JSON of quote `q`, as a caller with/without costs. */
export function quoteJsonSql(costs: boolean): string {
  return costs ? EXPRESSIONS.withCosts : EXPRESSIONS.withoutCosts;
}

/**
 * The same JSON for a quote `q` that has no groups yet (one being inserted): the same fields,
 * without the subqueries over its rows. PostgreSQL prepares every expression of a statement each
 * time it runs it, evaluated or not, and the rows' part is most of the quote's.
 */
const NEW_QUOTE_EXPRESSIONS = {
  withCosts: objectSql(QUOTE_FIELDS("NULL::text"), true),
  withoutCosts: objectSql(QUOTE_FIELDS("NULL::text"), false),
};

export function newQuoteJsonSql(costs: boolean): string {
  return costs ? NEW_QUOTE_EXPRESSIONS.withCosts : NEW_QUOTE_EXPRESSIONS.withoutCosts;
}

/**
 * Lists, the same way for every resource: the conditions of the query (named filters, search,
 * the filter language) over the resource's field table, a stable order ending with the id, and
 * either an offset page with the count of every match, or a keyset page with a signed cursor.
 */
import type postgres from "postgres";
import type { z } from "zod";
import type { ContextKey } from "../internal_context.ts";
import { cursorBinding, type CursorPosition, decodeCursor, encodeCursor } from "../cursor.ts";
import type { Filter } from "../contracts/filters.ts";
import type { Field, FieldTable } from "./fields.ts";
import { compileFilters, escapeLike, parseFiltersParam, SQL_TYPES } from "./filters.ts";
import { type Queryable, read } from "./mod.ts";

type Direction = "asc" | "desc";

export interface ListSpec {
  /** Trusted FROM clause: the table, and any join the select needs. */
  from: string;
  /** Trusted select list of the page query. */
  select: string;
  /** Trusted column of the row's id, the last key of every order. */
  id?: string;
  fields: FieldTable;
  /** Query parameters that are shorthands for equality on the field of the same name. */
  named: readonly string[];
  /**
   * Trusted name of the SQL function that answers `search`: given an ILIKE pattern, the ids of
   * the organisation's rows with a searched column that contains the text. A migration makes it,
   * with the trigram index it reads, by declaring the table's searched columns (declare_search,
   * platform migration 0003; README "Search"): the one place that says what a `search` looks in.
   * The same migration makes `<search>_is_common` and `<search>_among`, which a list that need
   * not count walks its rows with (`walked`).
   */
  search?: string;
  /** The order without a `sortField`. */
  order: { field: string; direction: Direction };
  /**
   * Trusted ORDER BY keys put before that default order (not before an asked `sortField`), e.g.
   * `is_default DESC` to list the default first. Offset lists only: a cursor cannot follow it.
   */
  first?: string;
  /** The direction of a `sortField` given without `sortDirection`; ascending unless said. */
  sortedDirection?: Direction;
}

/** Parameters every list has; any other parameter of a list's query is a named filter. */
const LIST_PARAMETERS = new Set([
  "limit",
  "offset",
  "count",
  "cursor",
  "sortField",
  "sortDirection",
  "filters",
  "search",
]);

/**
 * A list's spec for the query its contract declares. The named filters are read from the query
 * (every parameter beyond paging, order, `filters` and `search`); that each names a field, that
 * every `sortField` is a field, and that `search` has its function exactly when the query offers it, is
 * checked here, when the store module loads, so a list and its contract cannot disagree quietly.
 */
export function listSpec(query: z.ZodObject, spec: Omit<ListSpec, "named">): ListSpec {
  const where = `List over ${spec.from}`;
  const names = Object.keys(query.shape);
  const named = names.filter((name) => !LIST_PARAMETERS.has(name));
  const sortable = sortFieldsOf(query);
  for (const name of [...named, ...sortable, spec.order.field]) {
    if (!Object.hasOwn(spec.fields, name)) throw new Error(`${where}: no field "${name}"`);
  }
  if (names.includes("search") !== (spec.search !== undefined)) {
    throw new Error(`${where}: a search function must be given exactly when the query has search`);
  }
  return { ...spec, named };
}

/** The values the query's `sortField` enum allows. */
function sortFieldsOf(query: z.ZodObject): string[] {
  const sortField = query.shape.sortField as z.ZodOptional<z.ZodEnum> | undefined;
  return sortField ? Object.values(sortField.unwrap().enum).map(String) : [];
}

/** The query parameters every list shares (its named filters come in beside them). */
export interface ListQuery {
  sortField?: string | undefined;
  sortDirection?: Direction | undefined;
  filters?: string | undefined;
  search?: string | undefined;
}

export interface OffsetQuery extends ListQuery {
  limit?: number | undefined;
  offset?: number | undefined;
  /** Whether to count every match (`totalCount`); yes unless false. */
  count?: boolean | undefined;
}

/** One page of an offset list, as every offset list answers it (the contracts' `page()`). */
export interface OffsetPageOf<Item> {
  items: Item[];
  /** Every match, counted; null when the query said `count: false`. */
  totalCount: number | null;
  /** Whether matches follow this page. */
  hasMore: boolean;
}

export interface CursorQuery extends ListQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** One list request: whose rows, and what the query asks of them. */
export interface PageRequest<Q> {
  /** What every listed row meets (its organisation, its owner), ANDed with the query's. */
  where: postgres.Fragment;
  query: Q & Record<string, unknown>;
  /** The page size limit (PAGE_SIZE_MAX): `limit` is capped at it, and is it when not given. */
  pageSizeMax: number;
}

/**
 * What rows must meet beyond the caller's own condition, in the list query's terms: its named
 * filters, its `search` and its filters (parsed). A list page and a bulk target's filter branch
 * both select rows this way, so "the rows this list shows" and "the rows a bulk call changes"
 * cannot mean different things.
 */
export interface RowConditions {
  /** Values of the spec's named filters, by name; other keys are ignored. */
  named?: Readonly<Record<string, unknown>>;
  search?: string | undefined;
  filters: readonly Filter[];
  /** Where the filters sit in the request, for error details; `filters` unless told. */
  filtersPath?: string;
}

/** The SQL condition for `where` AND named filters, search, then filters, in that order. */
export function rowConditions(
  sql: Queryable,
  spec: ListSpec,
  where: postgres.Fragment,
  { named = {}, search, filters, filtersPath }: RowConditions,
): postgres.Fragment {
  const all = [where];
  for (const name of spec.named) {
    const value = named[name];
    if (value !== undefined) {
      all.push(
        sql`${sql.unsafe(spec.fields[name]!.column)} = ${value as string | number | boolean}`,
      );
    }
  }
  const pattern = searchPattern(spec, search);
  if (pattern !== undefined) {
    // The function reads its trigram index past the policies (ILIKE is not leakproof, so under
    // them no index could serve it) but only ever answers ids of the organisation the
    // transaction names; the rows themselves are still read here, under the policies.
    all.push(
      sql`${sql.unsafe(spec.id ?? "id")} IN (SELECT ${sql.unsafe(spec.search!)}(${pattern}))`,
    );
  }
  all.push(
    ...compileFilters(sql, filters, spec.fields, filtersPath ? { path: filtersPath } : {}),
  );
  return all.reduce((acc, condition) => sql`${acc} AND ${condition}`);
}

/** The ILIKE pattern of a list's `search`; undefined when the list is not searched. */
function searchPattern(spec: ListSpec, search: string | undefined): string | undefined {
  const term = search?.trim();
  return term && spec.search ? `%${escapeLike(term)}%` : undefined;
}

/**
 * Whether a list's rows are narrowed by its search function: its statements are then planned for
 * the organisation and term at hand (`read`'s customPlans), since a plan kept for the average
 * organisation joins the function's few ids to every row of a large one.
 */
export function searches(spec: ListSpec, search: string | undefined): boolean {
  return spec.search !== undefined && Boolean(search?.trim());
}

/**
 * Rows a walk reads per row a page needs: a term is walked for when the sample says at least two
 * rows in this many match (`<search>_is_common`), so the rows walked hold about twice what the
 * page needs.
 */
const WALK_SPAN = 40;
/** The most rows a walk is made for (10,000 rows walked at most); a longer page is searched. */
const WALK_NEED_MAX = 250;

/**
 * The first `need` rows of a searched list found by walking it (platform migration 0005,
 * README "Search"), or null. For a term the table's sample says is common, the list's first
 * `need` × WALK_SPAN rows in its order (`unsearched`: every condition but the search) are asked
 * which of them match (`<search>_among`). When `need` of them do, those are the list's first
 * `need` matches exactly, as every other match comes after them in the same order; otherwise,
 * or for a term that is not common, null, and the list is searched as always. A common term
 * matches thousands of rows in a large shop: found whole, a first page cost what they all cost.
 */
async function walked<Row extends object>(
  sql: Queryable,
  spec: ListSpec,
  { unsearched, order, search, need, select }: {
    unsearched: postgres.Fragment;
    order: postgres.Fragment;
    search: string | undefined;
    need: number;
    select: postgres.Fragment;
  },
): Promise<Row[] | null> {
  const pattern = searchPattern(spec, search);
  if (pattern === undefined || need > WALK_NEED_MAX) return null;
  const fn = spec.search!;
  const [answer] = await sql<{ common: boolean }[]>`
    SELECT ${sql.unsafe(`${fn}_is_common`)}(${pattern}, ${2 / WALK_SPAN}) AS common`;
  if (!answer?.common) return null;
  const id = sql.unsafe(spec.id ?? "id");
  const from = sql.unsafe(spec.from);
  // The matches as an array worked out first, then read by key: as `IN (SELECT …)` the function
  // is costed at a thousand rows, and PostgreSQL may walk the shop's rows in order to meet them,
  // reading all of them when the walk found fewer than the page needs.
  const rows = await sql<Row[]>`
    SELECT ${select} FROM ${from} WHERE ${unsearched} AND ${id} = ANY(ARRAY(
      SELECT ${sql.unsafe(`${fn}_among`)}(${pattern}, ARRAY(
        SELECT ${id} FROM ${from} WHERE ${unsearched} ORDER BY ${order}
        LIMIT ${need * WALK_SPAN}))))
    ORDER BY ${order} LIMIT ${need}`;
  return rows.length === need ? [...rows] : null;
}

/** The conditions a list query puts on rows: named filters, search, then `filters`. */
function conditions(
  sql: Queryable,
  spec: ListSpec,
  where: postgres.Fragment,
  query: ListQuery & Record<string, unknown>,
): postgres.Fragment {
  return rowConditions(sql, spec, where, {
    named: query,
    search: query.search,
    filters: parseFiltersParam(query.filters),
  });
}

interface Order {
  field: Field;
  direction: Direction;
}

function orderOf(spec: ListSpec, query: ListQuery): Order {
  const name = query.sortField ?? spec.order.field;
  const field = spec.fields[name];
  if (field === undefined) throw new Error(`No field "${name}" to sort by in ${spec.from}`);
  const direction = query.sortDirection ??
    (query.sortField === undefined ? spec.order.direction : spec.sortedDirection ?? "asc");
  return { field, direction };
}

function orderBy(
  sql: Queryable,
  spec: ListSpec,
  { field, direction }: Order,
  query: ListQuery,
): postgres.Fragment {
  const dir = direction === "asc" ? "ASC" : "DESC";
  // NULLS LAST only where NULL can occur: written on any other column it would keep a
  // descending sort from walking an index backwards.
  const nulls = field.nullable ? " NULLS LAST" : "";
  const first = spec.first && query.sortField === undefined ? `${spec.first}, ` : "";
  return sql.unsafe(`${first}${field.sortColumn} ${dir}${nulls}, ${spec.id ?? "id"} ${dir}`);
}

/**
 * The ORDER BY of a list (offsetPage's): the asked field or the spec's order, NULLS LAST where
 * NULL can occur, the id last; for a store that writes a list's statement itself.
 */
export function listOrderSql(sql: Queryable, spec: ListSpec, query: ListQuery): postgres.Fragment {
  return orderBy(sql, spec, orderOf(spec, query), query);
}

/** The page size a query asks for, capped at the page size limit; the limit when not asked. */
export function pageLimit(limit: number | undefined, pageSizeMax: number): number {
  return Math.min(limit ?? pageSizeMax, pageSizeMax);
}

/**
 * One page of an offset list, and the count of every matching row unless the query says not to
 * count (then whether any row follows the page is asked instead, which reads at most one row
 * past it). The count runs beside the page and `render` (which turns the page's rows into items,
 * with further statements if it must), so a page costs the longest of them rather than their sum.
 */
export async function offsetPage<Row extends object, Item>(
  sql: Queryable,
  spec: ListSpec,
  { where: base, query, pageSizeMax }: PageRequest<OffsetQuery>,
  render: (rows: Row[]) => Promise<Item[]> | Item[],
): Promise<OffsetPageOf<Item>> {
  // Run as one read for the caller's organisation (the policies see no other), the count and the
  // page on one connection, behind each other in the same round trip.
  return await read(
    sql,
    (q) => offsetPageOn(q, spec, { where: base, query, pageSizeMax }, render),
    { customPlans: searches(spec, query.search) },
  );
}

async function offsetPageOn<Row extends object, Item>(
  sql: Queryable,
  spec: ListSpec,
  { where: base, query, pageSizeMax }: PageRequest<OffsetQuery>,
  render: (rows: Row[]) => Promise<Item[]> | Item[],
): Promise<OffsetPageOf<Item>> {
  const where = conditions(sql, spec, base, query);
  const limit = pageLimit(query.limit, pageSizeMax);
  const offset = query.offset ?? 0;
  const order = orderBy(sql, spec, orderOf(spec, query), query);
  if (query.count === false && limit > 0) {
    // Not counted: the page and one row past it are all that is asked, which a walk can find.
    const head = await walked<Row>(sql, spec, {
      unsearched: conditions(sql, spec, base, { ...query, search: undefined }),
      order,
      search: query.search,
      need: offset + limit + 1,
      select: sql.unsafe(spec.select),
    });
    if (head !== null) {
      return {
        items: await render(head.slice(offset, offset + limit)),
        totalCount: null,
        hasMore: true,
      };
    }
  }
  const counted = sql<Tally[]>`
    SELECT ${pageTally(sql, spec.from, where, offset + limit, query.count !== false)}`;
  // Sends it now (postgres.js runs a query once it is awaited or given a handler); awaited
  // below, and this handler keeps a failure meanwhile from being reported as unhandled.
  counted.catch(() => {});
  const rows = limit === 0 ? [] : await sql<Row[]>`
    SELECT ${sql.unsafe(spec.select)} FROM ${sql.unsafe(spec.from)} WHERE ${where}
    ORDER BY ${order}
    LIMIT ${limit} OFFSET ${offset}`;
  const items = await render([...rows]);
  const [{ count, more }] = (await counted) as unknown as [Tally];
  return { items, totalCount: count, hasMore: hasMoreOf(count, more, offset + limit) };
}

/** A page's tally, as pageTally selects it. */
interface Tally {
  count: number | null;
  more: boolean | null;
}

/**
 * The select list `count, more` of an offset page whose rows end at `end` (offset + limit), as
 * two scalar subqueries (a statement can put them beside anything without a join). Counted: every
 * match, and `more` NULL (hasMoreOf reads it off the count). Not: a NULL count, and whether a
 * row lies past `end`, read without an order (any `end + 1` matches will do) and stopping there.
 */
export function pageTally(
  sql: Queryable,
  from: string,
  where: postgres.Fragment,
  end: number,
  counted: boolean,
): postgres.Fragment {
  return counted
    ? sql`(SELECT count(*)::int FROM ${sql.unsafe(from)} WHERE ${where}) AS count,
        NULL::boolean AS more`
    : sql`NULL::int AS count,
        EXISTS (SELECT FROM ${sql.unsafe(from)} WHERE ${where} OFFSET ${end} LIMIT 1) AS more`;
}

/** Whether rows follow a page that ends at `end`, from its tally (pageTally). */
export function hasMoreOf(count: number | null, more: boolean | null, end: number): boolean {
  return more ?? (count ?? 0) > end;
}

/** What ties a cursor to the one list and organisation it was issued for. */
export interface CursorScope {
  /** Signs and checks cursors (the service's internal secret). */
  key: ContextKey;
  /** The list, e.g. its operationId, and the organisation: a cursor is good for these only. */
  list: string;
  organizationId: string;
}

/**
 * Rows after `position` in the order, NULLs last: in a keyset order that is what was not yet
 * handed out, whatever was inserted or deleted since. On a column that cannot be NULL it is one
 * row comparison, `(column, id) > (value, id)`, which an index on (…, column, id) starts
 * reading at the position; the equivalent `column > v OR (column = v AND id > i)` reads from
 * the start and discards, under the generic plan PostgreSQL settles on for a prepared
 * statement, so each page would cost more the deeper it is.
 */
function after(
  sql: Queryable,
  spec: ListSpec,
  { field, direction }: Order,
  position: CursorPosition,
): postgres.Fragment {
  const column = sql.unsafe(field.sortColumn);
  const id = sql.unsafe(spec.id ?? "id");
  const beyond = sql.unsafe(direction === "asc" ? ">" : "<");
  if (position.value === null) {
    return sql`(${column} IS NULL AND ${id} ${beyond} ${position.id}::uuid)`;
  }
  // The sort value was read as text; cast back to the column's type, it compares exactly.
  const value = sql`${position.value}::text::${sql.unsafe(SQL_TYPES[field.sortType])}`;
  const rows = sql`(${column}, ${id}) ${beyond} (${value}, ${position.id}::uuid)`;
  return field.nullable ? sql`(${rows} OR ${column} IS NULL)` : rows;
}

/**
 * One page of a keyset list and the cursor of the next (null at the end). The cursor holds the
 * last row's sort value and id, signed and bound to the list, the organisation and the query's
 * filters, search and sort: paging while rows come and go never repeats a row and never skips
 * one that was there throughout.
 */
export async function cursorPage<Row extends object, Item>(
  sql: Queryable,
  spec: ListSpec,
  { where: base, query, pageSizeMax, scope }: PageRequest<CursorQuery> & { scope: CursorScope },
  render: (rows: Row[]) => Promise<Item[]> | Item[],
): Promise<{ items: Item[]; nextCursor: string | null }> {
  return await read(
    sql,
    (q) => cursorPageOn(q, spec, { where: base, query, pageSizeMax, scope }, render),
    { customPlans: searches(spec, query.search) },
  );
}

async function cursorPageOn<Row extends object, Item>(
  sql: Queryable,
  spec: ListSpec,
  { where: base, query, pageSizeMax, scope }: PageRequest<CursorQuery> & { scope: CursorScope },
  render: (rows: Row[]) => Promise<Item[]> | Item[],
): Promise<{ items: Item[]; nextCursor: string | null }> {
  if (spec.first) throw new Error(`List over ${spec.from}: a cursor cannot follow "first" keys`);
  const order = orderOf(spec, query);
  // Bound to the order itself, so the default order and the same order named agree.
  const binding = cursorBinding(`${scope.list}:${scope.organizationId}`, {
    ...query,
    sortField: Object.entries(spec.fields).find(([, field]) => field === order.field)![0],
    sortDirection: order.direction,
  });
  // Past the cursor's position, if there is one.
  const position = query.cursor === undefined
    ? undefined
    : after(sql, spec, order, decodeCursor(scope.key, binding, query.cursor));
  const beyond = (where: postgres.Fragment) =>
    position === undefined ? where : sql`${where} AND ${position}`;
  const limit = Math.max(1, pageLimit(query.limit, pageSizeMax));
  const select = sql`${sql.unsafe(spec.select)}, (${sql.unsafe(order.field.sortColumn)})::text
    AS cursor_value, ${sql.unsafe(spec.id ?? "id")} AS cursor_id`;
  const ordered = orderBy(sql, spec, order, query);
  type Paged = Row & { cursor_value: string | null; cursor_id: string };
  const rows = await walked<Paged>(sql, spec, {
    unsearched: beyond(conditions(sql, spec, base, { ...query, search: undefined })),
    order: ordered,
    search: query.search,
    need: limit + 1,
    select,
  }) ?? await sql<Paged[]>`
    SELECT ${select} FROM ${sql.unsafe(spec.from)}
    WHERE ${beyond(conditions(sql, spec, base, query))}
    ORDER BY ${ordered}
    LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextCursor = rows.length > limit && last !== undefined
    ? encodeCursor(scope.key, binding, { value: last.cursor_value, id: last.cursor_id })
    : null;
  return { items: await render(page), nextCursor };
}

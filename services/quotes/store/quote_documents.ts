/**
 * Stored quote documents: each quote's rendered JSON (quote_json.ts), one text per cost
 * visibility, kept on its row (migration 0004). A read sends the stored text when there is one
 * and renders otherwise; what it rendered is stored afterwards, for the next read, unless the
 * quote changed meanwhile. The migration's triggers clear a quote's documents in the statement
 * that changes anything they show, and every such change gives the row a new version (xmin), so
 * a document is stored only over the version it was rendered from.
 */
import type { Queryable, Sql } from "@printshop/shared/db";
import { parseFiltersParam } from "@printshop/shared/filters";
import {
  listOrderSql,
  type ListSpec,
  type OffsetQuery,
  pageLimit,
  rowConditions,
} from "@printshop/shared/db/pages";
import { quoteJsonSql } from "./quote_json.ts";

/** The quote's JSON as the caller may see it: stored, or rendered now. */
const documentColumn = (costs: boolean): string =>
  costs ? "document_with_costs" : "document_without_costs";

/**
 * A select-list expression over quote `q` giving its JSON as the caller may see it, the stored
 * text when there is one (COALESCE renders only when it is null); with `version` and `stored`, what
 * rememberDocuments needs.
 */
export function documentSelectSql(costs: boolean): string {
  const column = `q.${documentColumn(costs)}`;
  return `coalesce(${column}, ${quoteJsonSql(costs)}) AS json, q.xmin::text AS version,
    ${column} IS NOT NULL AS stored`;
}

/** A document as a read found or rendered it. */
export interface ReadDocument {
  id: string;
  json: string;
  /** The quote row's xmin when the document was read. */
  version: string;
  stored: boolean;
}

/**
 * Stores the documents a read rendered, each only while its quote is still the version it was
 * rendered from, has none stored (storing the same text again would clear both: see the
 * migration's trigger) and no transaction holds it (SKIP LOCKED: a read never waits on a writer). Give it
 * reads made on the pool, never inside a transaction: a render from within a transaction may
 * precede changes that same transaction makes later. One statement, only after a read that
 * rendered something. A store that fails costs only a render on the next read, so its error is
 * not the read's.
 */
export async function rememberDocuments(
  sql: Sql,
  read: readonly ReadDocument[],
  costs: boolean,
): Promise<void> {
  const rendered = read.filter((d) => !d.stored);
  if (rendered.length === 0) return;
  await storeDocuments(sql, rendered, costs).catch(() => {});
}

async function storeDocuments(
  sql: Queryable,
  documents: readonly ReadDocument[],
  costs: boolean,
): Promise<void> {
  const column = sql.unsafe(documentColumn(costs));
  await sql`
    UPDATE quotes SET ${column} = d.json
    FROM (
      SELECT q.id, u.json FROM quotes q
        JOIN unnest(${documents.map((d) => d.id)}::uuid[], ${
    documents.map((d) => d.version)
  }::xid[],
          ${documents.map((d) => d.json)}::text[]) AS u (id, version, json)
          ON q.id = u.id AND q.xmin = u.version
      WHERE q.${column} IS NULL
      FOR UPDATE OF q SKIP LOCKED
    ) d
    WHERE quotes.id = d.id`;
}

/** One page of a quote list: whose quotes, what the query asks, and the caller's visibility. */
export interface DocumentPageRequest {
  organizationId: string;
  query: OffsetQuery & Record<string, unknown>;
  /** The page size limit (PAGE_SIZE_MAX): `limit` is capped at it, and is it when not given. */
  pageSizeMax: number;
  costs: boolean;
}

/**
 * From this many quotes on, a page reads its documents in PAGE_JSON_STATEMENTS statements side
 * by side on the pool's connections, after the statement that picks the page. PostgreSQL runs a
 * statement on one core, and both reading a long page's stored documents (7.8 MB for 200 full
 * quotes, decompressed as they are read) and rendering missing ones are CPU work there, so
 * halves read at once take about half the time.
 */
const SPLIT_FROM = 50;
const PAGE_JSON_STATEMENTS = 2;

/**
 * The documents of quotes `ids` (already this organisation's), stored or rendered now. Its only
 * parameter is the array, so PostgreSQL settles on one generic plan for it and plans the
 * render's SQL (quote_json.ts, 3–10 ms to plan) once per connection, not once per call.
 */
async function documentsOf(
  sql: Sql,
  ids: readonly string[],
  costs: boolean,
): Promise<ReadDocument[]> {
  // Found by primary key alone, as the ids are already the organisation's quotes.
  return [
    ...await sql<ReadDocument[]>`
      SELECT q.id, ${sql.unsafe(documentSelectSql(costs))}
      FROM quotes q WHERE q.id = ANY(${ids as string[]}::uuid[])`,
  ];
}

/**
 * One page of quotes as the JSON text of `{"items":[…],"totalCount":N}`: each quote its stored
 * document or rendered by PostgreSQL (quote_json.ts), joined here without parsing, and what was
 * rendered stored afterwards (rememberDocuments). The same statements whatever the page's size
 * (no query per quote or row).
 *
 * A short page whose documents are stored is ONE statement: the count, the page's ids and their
 * stored texts, in one round trip and one snapshot (so the count agrees with the page), where
 * it was three (count, ids, documents). A page of SPLIT_FROM quotes or more takes its documents
 * afterwards, stored or rendered, in PAGE_JSON_STATEMENTS parts side by side (documentsOf). It names no render: its plan depends on the
 * organisation's row estimate, so PostgreSQL may plan it afresh on every call, which costs
 * ~0.2 ms for this statement but 3–10 ms with the render's SQL in it (tried: PostgreSQL then
 * spent 3.6 ms per 20-quote list, against 0.8 ms now). The ids are chosen in a subquery that
 * carries no document, so rows an OFFSET skips are never read whole. Quotes without a stored
 * document are rendered by documentsOf (in parts side by side from SPLIT_FROM of them on) and
 * then stored.
 */
export async function listDocumentsJson(
  sql: Sql,
  spec: ListSpec,
  { organizationId, query, pageSizeMax, costs }: DocumentPageRequest,
): Promise<string> {
  const where = rowConditions(sql, spec, sql`organization_id = ${organizationId}`, {
    named: query,
    search: query.search,
    filters: parseFiltersParam(query.filters),
  });
  const from = sql.unsafe(spec.from);
  const limit = pageLimit(query.limit, pageSizeMax);
  const pageIds = sql`ARRAY(SELECT ${sql.unsafe(spec.id ?? "id")} FROM ${from} WHERE ${where}
    ORDER BY ${listOrderSql(sql, spec, query)}
    LIMIT ${limit} OFFSET ${query.offset ?? 0})`;
  // A long page's documents are read afterwards, in parts side by side.
  const json = limit >= SPLIT_FROM ? sql`NULL::text` : sql`q.${sql.unsafe(documentColumn(costs))}`;
  // A row even for an empty page (LEFT JOIN … ON true), which carries the count alone.
  const rows = await sql<{ total: number; n: number; id: string; json: string | null }[]>`
    SELECT c.total, d.n, d.id, d.json
    FROM (SELECT (SELECT count(*)::int FROM ${from} WHERE ${where}) AS total) c
    LEFT JOIN (
      SELECT p.n::int AS n, q.id, ${json} AS json
      FROM unnest(${pageIds}) WITH ORDINALITY AS p (id, n) JOIN quotes q ON q.id = p.id
    ) d ON true`;
  const totalCount = rows[0]!.total;
  const page = rows[0]!.id === null ? [] : [...rows].sort((a, b) => a.n - b.n);
  const missing = page.filter((r) => r.json === null).map((r) => r.id);
  if (missing.length === 0) return pageJson(page as { json: string }[], totalCount);

  const parts = chunks(missing, missing.length >= SPLIT_FROM ? PAGE_JSON_STATEMENTS : 1);
  const rendered = (await Promise.all(parts.map((ids) => documentsOf(sql, ids, costs)))).flat();
  await rememberDocuments(sql, rendered, costs);
  const renders = new Map(rendered.map((d) => [d.id, d.json]));
  // A quote deleted between the two statements is left out, as a later page would leave it.
  const documents = page.flatMap((r) => {
    const json = r.json ?? renders.get(r.id);
    return json === undefined ? [] : [{ json }];
  });
  return pageJson(documents, totalCount);
}

/** `items` split into at most `parts` runs of (nearly) equal length, in order. */
function chunks<T>(items: readonly T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/**
 * The page's text. Built with `+`, not joined: V8 then keeps the pieces as they are (a rope)
 * until the response writes the text out, instead of copying 7.8 MB into a new string first.
 */
function pageJson(documents: readonly { json: string }[], totalCount: number): string {
  let items = "";
  for (let i = 0; i < documents.length; i++) {
    items = i === 0 ? documents[i]!.json : items + "," + documents[i]!.json;
  }
  return '{"items":[' + items + '],"totalCount":' + totalCount + "}";
}

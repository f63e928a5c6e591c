/**
 * Stored quote documents: each quote's rendered JSON (quote_json.ts), one text per cost
 * visibility, kept on its row (migration 0004). A read sends the stored text when there is one
 * and renders otherwise; what it rendered is stored afterwards, for the next read, unless the
 * quote changed meanwhile. The migration's triggers clear a quote's documents in the statement
 * that changes anything they show, and every such change gives the row a new version (xmin), so
 * a document is stored only over the version it was rendered from.
 */
import {
  allSent,
  type Fragment,
  oneStatement,
  type Queryable,
  read,
  type Sql,
  type Statement,
} from "@printshop/shared/db";
import { parseFiltersParam } from "@printshop/shared/filters";
import {
  hasMoreOf,
  listOrderSql,
  type ListSpec,
  type OffsetQuery,
  pageLimit,
  pageTally,
  rowConditions,
  searches,
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
 * migration's trigger) and no transaction holds it (SKIP LOCKED: a read never waits on a
 * writer). Give it the pool, after the read: the store is then a transaction of its own for the
 * organisation, one statement in one round trip, committed when this resolves (so the next read
 * finds the document). Never give it a write transaction: a render from within one may precede
 * changes that same transaction makes later. Only after a read that rendered something. A store
 * that fails costs only a render on the next read, so its error is not the read's.
 */
export async function rememberDocuments(
  sql: Sql,
  documents: readonly ReadDocument[],
  costs: boolean,
): Promise<void> {
  const rendered = documents.filter((d) => !d.stored);
  if (rendered.length === 0) return;
  await oneStatement(sql, (tx) => storeDocuments(tx, rendered, costs)).catch(() => {});
}

function storeDocuments(
  sql: Queryable,
  documents: readonly ReadDocument[],
  costs: boolean,
): Fragment {
  const column = sql.unsafe(documentColumn(costs));
  return sql`
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

/**
 * The statement that reads the quote's stored document: one row whose `json` is the document, or
 * null when it has none stored; no row when this organisation has no such quote. Answered unsent,
 * so that a read given it sends its COMMIT with it (shared/db/mod.ts `read`). A statement apart
 * from the render: PostgreSQL keeps one cheap plan for it, where a statement carrying the
 * render's SQL (quote_json.ts) costs it ~0.4 ms more per call even when COALESCE never evaluates
 * the render.
 */
export function storedDocument(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Statement<{ json: string | null }[]> {
  return sql<{ json: string | null }[]>`
    SELECT ${sql.unsafe(documentColumn(costs))} AS json FROM quotes
    WHERE id = ${quoteId} AND organization_id = ${organizationId}`;
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
 * One page of quotes as the UTF-8 JSON of `{"items":[…],"totalCount":N,"hasMore":B}` (a null
 * count when the query says `count: false`): each quote its stored
 * document or rendered by PostgreSQL (quote_json.ts), joined here without parsing, and what was
 * rendered stored afterwards (rememberDocuments). The same statements whatever the page's size
 * (no query per quote or row), and every page read whole in ONE statement, so its count, its
 * quotes and their documents come from one snapshot: a quote that changes while the page is
 * read is on it as it was or not at all, never a later version that no longer matches the
 * filter (a page whose documents were read by later statements could show a quote moved to
 * `sent` on a `status=draft` page).
 *
 * A page whose documents are all stored is streamed: its statement's first row says so (with the
 * count), and the documents go on to the answer in runs, as the bytes PostgreSQL sent, as they
 * arrive (streamPage), so sending a 200-quote page (7.8 MB) overlaps PostgreSQL reading it, and no
 * text is decoded or encoded on the way. That statement names no render: were it planned afresh
 * on a call (a later page's offset is a parameter, and its generic plan may lose), that costs
 * ~0.3 ms, where the render's SQL in it would make it 3–10 ms (tried: PostgreSQL then spent 3.6
 * ms per 20-quote list, against 0.8 ms). When some of the page's quotes have no stored document,
 * the page is read again by the same statement with the render in it, and only what that one read
 * gives is answered, whole; the plan's cost is then small beside the renders. The ids are chosen
 * in a subquery that carries no document, so rows an OFFSET skips are never read whole.
 *
 * The stream is ready when this resolves: a statement that fails before its first row rejects
 * it. One that fails later errors the stream, and the answer is cut short (never completed).
 */
export async function listDocumentsJson(
  sql: Sql,
  spec: ListSpec,
  request: DocumentPageRequest,
): Promise<ReadableStream<Uint8Array>> {
  const customPlans = searches(spec, request.query.search);
  // The page is read in one read for the organisation (the policies show a statement sent to the
  // pool no quote): its one statement alone on the organisation's pinned connections, or, in a
  // transaction of its own, with its COMMIT (allSent), the connection held until the statement
  // has been read to its end, or its next user would wait behind the whole page. The stream is
  // handed over as soon as its first row is in; the read goes on by itself.
  const ready = Promise.withResolvers<Streamed | null>();
  read(sql, async (q) => {
    const statements = documentPageStatements(q, spec, request);
    // Sent as streamPage is called, before its first wait.
    const streaming = streamPage(statements.stored, statements.end);
    allSent(q);
    const streamed = await streaming;
    ready.resolve(streamed);
    await streamed?.done;
  }, { customPlans }).catch((error: unknown) => ready.reject(error));
  const streamed = await ready.promise;
  if (streamed !== null) return streamed.body;
  // Some of the page's quotes have no stored document: the page again, with those rendered, by
  // one statement in a read of its own (its COMMIT leaves with it), and what it rendered stored
  // before the answer.
  let end = 0;
  const rows = await read(sql, (q) => {
    const statements = documentPageStatements(q, spec, request);
    end = statements.end;
    return statements.rendered;
  }, { customPlans }) as unknown as PageRow[];
  const page = rows.filter((r): r is PageRow & ReadDocument => r.id !== null);
  await rememberDocuments(sql, page, request.costs);
  return ReadableStream.from([encoder.encode(pageJson(page, rows[0]!, end))]);
}

/** A page streamed as its read gives it (streamPage): the answer, and when its read is over. */
interface Streamed {
  body: ReadableStream<Uint8Array>;
  done: Promise<void>;
}

/**
 * The two statements a page is read with (listDocumentsJson): `stored`, the page of stored
 * documents in runs (`count, more, missing, json`), and `rendered`, the page again with what is
 * missing rendered (PageRow); and `end`, where the page ends (offset + limit). Exported for the plan checks (plans_test.ts), which explain them.
 */
export function documentPageStatements(
  sql: Queryable,
  spec: ListSpec,
  { organizationId, query, pageSizeMax, costs }: DocumentPageRequest,
): { stored: Fragment; rendered: Fragment; end: number } {
  const where = rowConditions(sql, spec, sql`organization_id = ${organizationId}`, {
    named: query,
    search: query.search,
    filters: parseFiltersParam(query.filters),
  });
  const from = sql.unsafe(spec.from);
  // The page's size, and a first page's offset, are written into the statement rather than sent
  // as parameters: PostgreSQL then keeps one plan for it (a few statements per connection, one
  // per page size in use), where a LIMIT it cannot see is costed as a tenth of the organisation's
  // quotes and loses to planning afresh on every call (~0.3 ms of each 20-quote list).
  const offset = query.offset ?? 0;
  const limit = pageLimit(query.limit, pageSizeMax);
  const pageIds = sql`ARRAY(SELECT ${sql.unsafe(spec.id ?? "id")} FROM ${from} WHERE ${where}
    ORDER BY ${listOrderSql(sql, spec, query)}
    LIMIT ${integerLiteral(sql, limit)}
    OFFSET ${offset === 0 ? integerLiteral(sql, 0) : offset})`;
  // `count, more`: every match counted, or (count=false) only whether one follows the page.
  const tally = pageTally(sql, spec.from, where, offset + limit, query.count !== false);
  const column = sql.unsafe(`q.${documentColumn(costs)}`);

  // The page's rows are kept as they are (a stored document stays a pointer to its TOAST
  // chunks), so knowing which have none costs no document read; each is read when sent. They go
  // out in runs of ~128 KB (a document's length is in its TOAST pointer: summing them reads
  // none), each run with what goes before it in the page's JSON, so the bytes PostgreSQL sends
  // are passed on as they arrive, in chunks few enough for every hop to pass cheaply. The runs
  // are the statement's only FROM item, so their aggregate's order is the answer's and nothing
  // sorts the joined text: a Sort above it (a join to the counts did that) held a whole page's
  // text before sending any, 25 ms for 200 quotes. An empty page is one run of none (the VALUES
  // row), which still carries the count.
  const stored = sql`
    WITH page AS MATERIALIZED (
      SELECT p.n, ${column} AS json
      FROM unnest(${pageIds}) WITH ORDINALITY AS p (id, n) JOIN quotes q ON q.id = p.id
    ), runs AS (
      SELECT n, json,
        (sum(octet_length(json)) OVER (ORDER BY n) - octet_length(json)) / ${CHUNK_BYTES} AS run
      FROM page
    )
    SELECT ${tally}, (SELECT count(*)::int FROM page WHERE json IS NULL) AS missing,
      CASE WHEN min(r.n) = 1 THEN ${ITEMS_OPEN}::text ELSE ',' END
        || string_agg(r.json, ',' ORDER BY r.n) AS json
    FROM (VALUES (0)) AS z (run) LEFT JOIN runs r ON true
    GROUP BY coalesce(r.run, 0)
    ORDER BY coalesce(r.run, 0)`;

  // A row even for an empty page (LEFT JOIN … ON true), which carries the count alone.
  const rendered = sql`
    SELECT c.count, c.more, d.*
    FROM (SELECT ${tally}) c
    LEFT JOIN (
      SELECT p.n::int AS n, q.id, ${sql.unsafe(documentSelectSql(costs))}
      FROM unnest(${pageIds}) WITH ORDINALITY AS p (id, n) JOIN quotes q ON q.id = p.id
    ) d ON true
    ORDER BY d.n`;
  return { stored, rendered, end: offset + limit };
}

/** A row of a page read with renders: the tally, and a quote of the page (none when empty). */
interface PageRow {
  count: number | null;
  more: boolean | null;
  n: number;
  id: string | null;
  json: string | null;
  version: string | null;
  stored: boolean | null;
}

const ITEMS_OPEN = '{"items":[';
/** The length a page's documents are sent in runs of: a few documents of a full quote. */
const CHUNK_BYTES = 128 * 1024;
const encoder = new TextEncoder();

/**
 * Streams the page a `count, more, missing, json` statement reads (raw: each value as the bytes
 * PostgreSQL sent; `json` a run of documents with what precedes it in the page), with `done`,
 * which resolves once the statement has been read to its end (never rejects: a failure errors
 * the stream); or answers null when `missing` says some document is not stored, and then the
 * statement is read to its end first, so the connection is free for the next one. Each row's
 * bytes go out as they are, never copied (the driver reads every packet into a buffer of its
 * own, never reused). Rows are pushed as they arrive, with no backpressure: what waits is at most
 * one page, as much as a page held whole would be.
 */
async function streamPage(
  query: Fragment,
  /** Where the page ends (offset + limit): what `more` is read against when counted. */
  end: number,
): Promise<Streamed | null> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      open = false;
    },
  });
  const push = (bytes: Uint8Array): void => {
    if (open) controller.enqueue(bytes);
  };
  const head = Promise.withResolvers<{ missing: number }>();
  let known: { tally: string; missing: number } | undefined;
  let sentAny = false;
  const rows = query.raw().forEach((row) => {
    const [count, more, missing, json] = row as unknown as (Uint8Array | null)[];
    if (known === undefined) {
      const total = count === null ? null : decimalOf(count);
      known = {
        tally: tallyJson(total, hasMoreOf(total, more ? more[0] === T : null, end)),
        missing: decimalOf(missing),
      };
      head.resolve(known);
    }
    if (known.missing > 0 || !json) return;
    sentAny = true;
    push(json);
  }).then(
    () => {
      if (known === undefined) throw new Error("the page's statement gave no row");
      if (known.missing > 0) return;
      // An empty page has had no run to open its items.
      push(encoder.encode(`${sentAny ? "" : ITEMS_OPEN}]${known.tally}}`));
      if (open) controller.close();
    },
  ).catch((error: unknown) => {
    head.reject(error);
    if (open) controller.error(error);
  });
  const { missing } = await head.promise;
  if (missing === 0) return { body, done: rows };
  await rows;
  return null;
}

const decoder = new TextDecoder();

/** A whole number written into a statement's text (validated here: nothing else reaches it). */
function integerLiteral(sql: Queryable, n: number): Fragment {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a page bound: ${n}`);
  return sql.unsafe(String(n));
}

/** The byte PostgreSQL's text form of a true boolean is. */
const T = "t".charCodeAt(0);

/** The page's JSON after its items: `,"totalCount":N|null,"hasMore":bool`. */
function tallyJson(total: number | null, more: boolean): string {
  return `,"totalCount":${total},"hasMore":${more}`;
}

/** A raw integer column: its decimal text. */
function decimalOf(value: Uint8Array | null | undefined): number {
  if (!value) throw new Error("the page's statement gave no count");
  return Number(decoder.decode(value));
}

/**
 * The page's text. Built with `+`, not joined: V8 then keeps the pieces as they are (a rope)
 * until the response writes the text out, instead of copying 7.8 MB into a new string first.
 */
function pageJson(
  documents: readonly { json: string }[],
  { count, more }: Pick<PageRow, "count" | "more">,
  end: number,
): string {
  let items = "";
  for (let i = 0; i < documents.length; i++) {
    items = i === 0 ? documents[i]!.json : items + "," + documents[i]!.json;
  }
  return ITEMS_OPEN + items + "]" + tallyJson(count, hasMoreOf(count, more, end)) + "}";
}

/**
 * Stored quote documents: each quote's rendered JSON (quote_json.ts), one text per cost
 * visibility, kept on its row (migration 0004). A read sends the stored text when there is one
 * and renders otherwise; what it rendered is stored afterwards, for the next read, unless the
 * quote changed meanwhile. The migration's triggers clear a quote's documents in the statement
 * that changes anything they show, and every such change gives the row a new version (xmin), so
 * a document is stored only over the version it was rendered from.
 */
import type { Queryable, Sql } from "@printshop/shared/db";
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

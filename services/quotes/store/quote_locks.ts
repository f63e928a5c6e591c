/**
 * Locking a quote for a change to its rows: every writer of a quote's groups, lines, variants and
 * decorations takes this lock first, so concurrent changes to one quote queue and its totals are
 * always recomputed (aggregate.ts) from a consistent set of rows.
 */
import type { Fragment, Queryable, TransactionSql } from "@printshop/shared/db";
import { conflict, notFound } from "@printshop/shared/http";
import type { QuoteStatus } from "@printshop/shared/contracts/quotes";
import { isEditable } from "../domain/status.ts";
import { GROUPS } from "./rows.ts";

export interface LockedQuote {
  id: string;
  status: QuoteStatus;
  taxRatePct: string;
}

/**
 * Locks a quote of this organisation for a change to its rows. Not found (or another
 * organisation's) is a 404; a quote that is not a draft refuses row changes with 409.
 */
export async function lockQuoteForEdit(
  tx: TransactionSql,
  organizationId: string,
  quoteId: string,
  what = "Quote",
  id = quoteId,
): Promise<LockedQuote> {
  return editable(await lockQuoteWhere(tx, organizationId, tx`${quoteId}`), what, id);
}

/**
 * Locks the organisation's quote whose id `id` gives (a value, or a sub-select), with an UPDATE
 * that clears its documents rather than a SELECT … FOR UPDATE: the change about to be made clears
 * them anyway (migration 0004's triggers), and once the transaction has, the touches of its row
 * statements find the quote cleared and run no statement of their own (migration 0007). The lock
 * held is as good here: every writer of a quote's rows takes this same lock first, and a document
 * is stored only under FOR UPDATE … SKIP LOCKED, which passes a quote held by it. A quote that
 * refuses the change (editable) is answered with an error, and the transaction takes the clearing
 * back.
 */
async function lockQuoteWhere(
  tx: TransactionSql,
  organizationId: string,
  id: Fragment,
): Promise<QuoteLockRow | undefined> {
  const [row] = await tx<QuoteLockRow[]>`
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE organization_id = ${organizationId} AND id = ${id}
    RETURNING id, status, tax_rate_pct`;
  return row;
}

interface QuoteLockRow {
  id: string;
  status: QuoteStatus;
  tax_rate_pct: string;
}

function editable(row: QuoteLockRow | undefined, what: string, id: string): LockedQuote {
  if (!row) throw notFound(what, id);
  if (!isEditable(row.status)) {
    throw conflict(
      `Quote "${row.id}" is ${row.status}; reopen it (status draft) before changing its rows`,
    );
  }
  return { id: row.id, status: row.status, taxRatePct: row.tax_rate_pct };
}

/** A table of a quote's rows (each names its quote), as its declaration gives it (item_rows.ts). */
export interface QuoteRowTable<R> {
  readonly name: string;
  readonly noun: string;
  find(tx: Queryable, organizationId: string, id: string): Promise<R | null>;
}

/**
 * Locks the quote a row of this organisation belongs to, as lockQuoteForEdit does, finding and
 * locking it in one statement, and reads the row in the same round trip: the read is sent behind
 * the lock on the same connection, so it runs once the lock is held and sees the row as it is
 * then. A row that went while this waited for the lock is a 404 like a missing one.
 */
export async function lockQuoteRow<R>(
  tx: TransactionSql,
  organizationId: string,
  table: QuoteRowTable<R>,
  id: string,
): Promise<{ quote: LockedQuote; row: R }> {
  const [locked, row] = await Promise.all([
    lockQuoteWhere(
      tx,
      organizationId,
      tx`(SELECT quote_id FROM ${
        tx(table.name)
      } WHERE organization_id = ${organizationId} AND id = ${id})`,
    ),
    table.find(tx, organizationId, id),
  ]);
  const quote = editable(locked, table.noun, id);
  if (!row) throw notFound(table.noun, id);
  return { quote, row };
}

/**
 * Locks the quote a group belongs to, as lockQuoteForEdit does. Another organisation's group is a
 * 404 like a missing one, and so is a group deleted while this waited for the lock.
 */
export async function lockGroup(
  tx: TransactionSql,
  organizationId: string,
  groupId: string,
): Promise<LockedQuote> {
  return (await lockQuoteRow(tx, organizationId, GROUPS, groupId)).quote;
}

import { oneStatement, type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateQuoteBody,
  ListQuotesQuery,
  type Quote,
  type QUOTE_SORT_FIELDS,
  type QuoteStatus,
  type UpdateQuoteBody,
} from "@printshop/shared/contracts/quotes";
import { ApiError, conflict, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { type EventWriting, eventWrittenBy, writeEvent } from "@printshop/shared/outbox";
import {
  changedColumns,
  type EveryFieldHasAColumn,
  type FieldTable,
} from "@printshop/shared/db/fields";
import { QUOTE_EXTERNAL_ID, type QuoteRow, QUOTES } from "./rows.ts";
import { holdingKeys } from "@printshop/shared/db/held-keys";
import { listSpec, type OffsetPageOf } from "@printshop/shared/db/pages";
import { quoteRefSql } from "../domain/quote_ref.ts";
import { canMove, isEditable, isReopen, TRANSITIONS } from "../domain/status.ts";
import { newQuoteJsonSql } from "./quote_json.ts";
import {
  documentSelectSql,
  listDocumentsJson,
  type ReadDocument,
  rememberDocuments,
  storedDocument,
} from "./quote_documents.ts";
import { recomputeQuote } from "./aggregate.ts";
import { ensureDefaultTaxRate, findTaxRate, unknownTaxRate } from "./tax_rates.ts";

/** The quote list's fields: what `filters` may name, and what `sortField` orders on. */
const QUOTE_FIELDS = QUOTES.fields() satisfies FieldTable<typeof QUOTE_SORT_FIELDS[number]>;

/** The tax rate a quote names, or the organisation's default; an unknown id is a 400. */
async function taxRateFor(
  tx: Queryable,
  organizationId: string,
  taxRateId: string | null | undefined,
): Promise<{ id: string; name: string; ratePct: string }> {
  if (!taxRateId) return await ensureDefaultTaxRate(tx, organizationId);
  const rate = await findTaxRate(tx, organizationId, taxRateId);
  if (!rate) throw unknownTaxRate(taxRateId);
  return rate;
}

/**
 * The quotes with these ids, in this order, each as JSON text: its stored document, or built
 * whole by PostgreSQL in the same statement (quote_json.ts, quote_documents.ts); ids not of this
 * organisation (or gone) are left out. The one read of quotes: GET, the list and the answers to
 * writes send the texts as they are (so a quote reads the same whichever answered it); events
 * parse them.
 */
async function quoteDocuments(
  sql: Queryable,
  organizationId: string,
  ids: readonly string[],
  costs: boolean,
): Promise<ReadDocument[]> {
  // No ORDER BY: sorting would carry every quote's JSON through a sort; `n` places them here.
  // Found by primary key alone: `IS TRUE` keeps the organisation's condition a filter, or
  // PostgreSQL, short of statistics, may read all of the organisation's quotes by that index to
  // meet a page of 20 (and as a join with the ids, hash them all).
  // The ids and the organisation as sub-selects: the plan is the same for any of them (the key),
  // but planned for the values, a plan looked cheaper than the one kept for any values, so this
  // statement of ten tables was planned afresh on every run: 1.8 ms a time at 100,000 quotes,
  // twice in each write that answers a quote and announces it (`deno task bench:scale`, PATCH
  // /v1/quotes 11.6 → 16.4 ms from ×1 to ×10). Seen as sub-selects, both cost the same, and
  // PostgreSQL keeps its plan after the fifth run (0.05 ms).
  const rows = await sql<(ReadDocument & { n: number })[]>`
    SELECT array_position(${ids as string[]}::uuid[], q.id) AS n, q.id,
      ${sql.unsafe(documentSelectSql(costs))}
    FROM quotes q
    WHERE q.id = ANY((SELECT ${ids as string[]}::uuid[])::uuid[])
      AND (q.organization_id = (SELECT ${organizationId}::uuid)) IS TRUE`;
  return rows.sort((a, b) => a.n - b.n);
}

async function readQuoteJson(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Promise<string | null> {
  const [document] = await quoteDocuments(sql, organizationId, [quoteId], costs);
  return document?.json ?? null;
}

async function readQuote(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Promise<Quote | null> {
  const json = await readQuoteJson(sql, organizationId, quoteId, costs);
  return json === null ? null : JSON.parse(json) as Quote;
}

/** The full quote (known to exist), as a costs.read subscriber will see it, for event payloads. */
async function eventPayload(
  tx: Queryable,
  organizationId: string,
  quoteId: string,
): Promise<Quote> {
  return (await readQuote(tx, organizationId, quoteId, true))!;
}

/**
 * Creates a draft quote; answers it as JSON text, as the caller may see it. With no tax rate
 * named and no default yet, the organisation's default is created first (tax_rates.ts).
 */
export async function createQuote(
  sql: Sql,
  organizationId: string,
  input: CreateQuoteBody,
  costs: boolean,
): Promise<string> {
  return await holdingKeys(sql, organizationId, [
    { key: QUOTE_EXTERNAL_ID, value: input.externalId },
  ], async () => {
    const created = await insertQuote(sql, organizationId, input, costs);
    if (created !== null) return created;
    if (input.taxRateId) throw unknownTaxRate(input.taxRateId);
    await ensureDefaultTaxRate(sql, organizationId);
    const retried = await insertQuote(sql, organizationId, input, costs);
    if (retried === null) {
      throw new Error("The default tax rate vanished while a quote was created");
    }
    return retried;
  });
}

/**
 * The quote inserted, numbered and announced in ONE statement (so one implicit transaction): the
 * organisation's counter row is locked from its bump to the commit of this statement alone, not
 * across round trips, which is what 16 writers of one organisation queue on. The number and the
 * timestamps are taken after the lock, so refs follow creation order. Its JSON is rendered once
 * with costs for the event (and for a caller holding costs.read). Null when the tax rate (named,
 * or the default) does not exist, in which case nothing is written: the counter bump reads it.
 */
async function insertQuote(
  sql: Sql,
  organizationId: string,
  input: CreateQuoteBody,
  costs: boolean,
): Promise<string | null> {
  const id = uuidv7();
  let event!: EventWriting;
  // A transaction of its own for the organisation the policies hold it to (oneStatement: alone on
  // the organisation's pinned connections, or with its BEGIN and COMMIT travelling with it), so
  // the counter row is still locked for one round trip alone.
  const rows = await oneStatement(sql, (tx) => {
    event = eventWrittenBy(tx, {
      organizationId,
      type: "quote.created",
      aggregateId: id,
      from: "doc",
      payloadSql: "doc.full",
    });
    const rateWhere = input.taxRateId ? tx`id = ${input.taxRateId}` : tx`is_default`;
    // A new quote has no rows: its JSON comes from the expression without their subqueries.
    const shown = costs ? "q.full" : newQuoteJsonSql(false);
    return tx<{ json: string; payload: string | null }[]>`
    WITH rate AS (
      SELECT id, name, rate_pct FROM tax_rates
      WHERE organization_id = ${organizationId} AND ${rateWhere}
    ), n AS (
      INSERT INTO quote_ref_counters (organization_id, last_number)
      SELECT ${organizationId}, 1 FROM rate
      ON CONFLICT (organization_id)
        DO UPDATE SET last_number = quote_ref_counters.last_number + 1
      RETURNING last_number, clock_timestamp() AS at
    ), q AS (
      INSERT INTO quotes (
        id, organization_id, quote_number, quote_ref, reference, external_id, client_id, contact_id,
        shipping_address_id, sales_rep_email, delivery_method, delivery_date, production_deadline,
        invoice_due_date, notes, mock_id, job_id, job_ref, invoice_id, invoice_status,
        tax_rate_id, tax_name, tax_rate_pct, created_at, updated_at
      )
      SELECT ${id}::uuid, ${organizationId}::uuid, n.last_number,
        ${tx.unsafe(quoteRefSql("n.last_number"))},
        ${input.reference ?? null}::text, ${input.externalId ?? null}::text,
        ${input.clientId ?? null}::uuid,
        ${input.contactId ?? null}::uuid, ${input.shippingAddressId ?? null}::uuid,
        ${input.salesRepEmail ?? null}::text, ${input.deliveryMethod ?? null}::text,
        ${input.deliveryDate ?? null}::date, ${input.productionDeadline ?? null}::date,
        ${input.invoiceDueDate ?? null}::date, ${input.notes ?? null}::text,
        ${input.mockId ?? null}::uuid, ${input.jobId ?? null}::text, ${input.jobRef ?? null}::text,
        ${input.invoiceId ?? null}::text, ${input.invoiceStatus ?? null}::text,
        rate.id, rate.name, rate.rate_pct, n.at, n.at
      FROM n, rate
      RETURNING *
    ), doc AS (
      SELECT q.*, ${tx.unsafe(newQuoteJsonSql(true))} AS full FROM q
    ), event AS (${event.insert})
    SELECT ${tx.unsafe(shown)} AS json, ${tx.unsafe(event.checked ? "q.full" : "NULL")} AS payload,
      ${event.notify}
    FROM doc q`;
  });
  const [row] = rows;
  if (!row) return null;
  event.check(row.payload);
  return row.json;
}

/** The quote as JSON text, to send without parsing it; a document it rendered is kept. */
export async function findQuoteJson(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Promise<string> {
  // A read for the organisation (the policies show no quote to a statement sent to the pool) of
  // one statement, answered unsent so that its COMMIT leaves with it: the stored document.
  const [stored] = await read(sql, (q) => storedDocument(q, organizationId, quoteId, costs));
  if (stored === undefined) throw notFound("Quote", quoteId);
  if (stored.json !== null) return stored.json;
  // None stored: rendered (unless one was stored meanwhile, or the quote went) in a read of its
  // own, and kept for the next read.
  const [found] = await read(sql, (q) => quoteDocuments(q, organizationId, [quoteId], costs));
  if (found === undefined) throw notFound("Quote", quoteId);
  await rememberDocuments(sql, [found], costs);
  return found.json;
}

// Each field a PATCH may change is written to the column of its name.
const _columns: EveryFieldHasAColumn<UpdateQuoteBody, QuoteRow> = true;

/**
 * Changes a quote's own fields. These are references and dates an integrator keeps in step at
 * any status; a new tax rate is the exception: it changes the totals, so only a draft takes it.
 * Answers the quote as JSON text, as the caller may see it.
 */
export async function updateQuote(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: UpdateQuoteBody,
  costs: boolean,
): Promise<string> {
  return await holdingKeys(sql, organizationId, [
    { key: QUOTE_EXTERNAL_ID, value: input.externalId },
  ], () => changeQuote(sql, organizationId, quoteId, input, costs));
}

async function changeQuote(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: UpdateQuoteBody,
  costs: boolean,
): Promise<string> {
  return await transaction(sql, async (tx) => {
    const locked = await QUOTES.lock(tx, organizationId, quoteId);
    const changes = changedColumns(input, ["taxRateId"]);
    let taxRatePct = locked.tax_rate_pct;
    if (input.taxRateId !== undefined) {
      if (!isEditable(locked.status)) {
        throw conflict(
          `Quote "${quoteId}" is ${locked.status}; reopen it before changing its tax rate`,
        );
      }
      const rate = await taxRateFor(tx, organizationId, input.taxRateId);
      Object.assign(changes, {
        tax_rate_id: rate.id,
        tax_name: rate.name,
        tax_rate_pct: rate.ratePct,
      });
      taxRatePct = rate.ratePct;
    }
    if (Object.keys(changes).length > 0) {
      await tx`UPDATE quotes SET ${tx(changes)}, updated_at = now() WHERE id = ${quoteId}`;
    }
    if (input.taxRateId !== undefined) {
      await recomputeQuote(tx, organizationId, {
        id: quoteId,
        status: locked.status,
        taxRatePct,
      });
    }
    const quote = (await readQuoteJson(tx, organizationId, quoteId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote.updated",
      aggregateId: quoteId,
      payload: await eventPayload(tx, organizationId, quoteId),
    });
    return quote;
  });
}

/** Deletes a quote and, by cascade, its groups and rows. */
export async function deleteQuote(
  sql: Sql,
  organizationId: string,
  quoteId: string,
): Promise<void> {
  await transaction(sql, async (tx) => {
    const deleted = await tx`
      DELETE FROM quotes WHERE organization_id = ${organizationId} AND id = ${quoteId}
      RETURNING id`;
    if (deleted.length === 0) throw notFound("Quote", quoteId);
    await writeEvent(tx, {
      organizationId,
      type: "quote.deleted",
      aggregateId: quoteId,
      payload: { id: quoteId },
    });
  });
}

/**
 * Moves a quote to another status. An illegal move is 409 conflict naming the allowed ones;
 * moving to `sent` stamps sentAt (and sentToEmail when given); reopening re-bands every `group`
 * row and recomputes the totals. Answers the quote as JSON text, as the caller may see it.
 */
export async function setQuoteStatus(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: { status: QuoteStatus; sentToEmail?: string | undefined },
  costs: boolean,
): Promise<string> {
  return await transaction(sql, async (tx) => {
    const locked = await QUOTES.lock(tx, organizationId, quoteId);
    const from = locked.status;
    const to = input.status;
    if (!canMove(from, to)) {
      throw conflict(
        `Quote "${quoteId}" cannot move from ${from} to ${to}; from ${from} it can move to ${
          TRANSITIONS[from].join(" or ")
        }`,
      );
    }
    if (input.sentToEmail !== undefined && to !== "sent") {
      throw new ApiError("validation_error", "sentToEmail is only given when moving to sent", [
        { path: "sentToEmail", message: "Only with status sent" },
      ]);
    }
    await tx`
      UPDATE quotes SET status = ${to}, updated_at = now(),
        sent_at = CASE WHEN ${to} = 'sent' THEN now() ELSE sent_at END,
        sent_to_email = CASE WHEN ${to} = 'sent' THEN coalesce(${input.sentToEmail ?? null},
          sent_to_email) ELSE sent_to_email END
      WHERE id = ${quoteId}`;
    if (isReopen(from, to)) {
      await recomputeQuote(tx, organizationId, {
        id: quoteId,
        status: to,
        taxRatePct: locked.tax_rate_pct,
      }, { all: true });
    }
    const quote = (await readQuoteJson(tx, organizationId, quoteId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote.status_changed",
      aggregateId: quoteId,
      payload: { from, to, quote: await eventPayload(tx, organizationId, quoteId) },
    });
    return quote;
  });
}

/** What the text listQuotesJson returns parses to. */
export type QuotePage = OffsetPageOf<Quote>;

/** GET /v1/quotes: its filters and sorts (QUOTE_FIELDS), search and default order. */
export const QUOTE_LIST = listSpec(ListQuotesQuery, {
  from: "quotes",
  select: "id",
  fields: QUOTE_FIELDS,
  // Ref, reference, notes, client id and the client's name (migrations 0010 and 0012).
  search: "quotes_matching",
  order: { field: "createdAt", direction: "desc" },
});

/**
 * One page of quotes as the UTF-8 JSON of a QuotePage, `{"items":[…],"totalCount":N,"hasMore":B}`, streamed:
 * each quote's stored document, or rendered by PostgreSQL (quote_json.ts), joined without
 * parsing (quote_documents.ts, listDocumentsJson).
 */
export async function listQuotesJson(
  sql: Sql,
  organizationId: string,
  query: ListQuotesQuery,
  pageSizeMax: number,
  costs: boolean,
): Promise<ReadableStream<Uint8Array>> {
  return await listDocumentsJson(sql, QUOTE_LIST, { organizationId, query, pageSizeMax, costs });
}

export async function salesRepFacet(sql: Queryable, organizationId: string): Promise<string[]> {
  // A loose index scan (quotes_by_sales_rep, migration 0009): each step finds the next rep after
  // the one before, one index probe per rep, where DISTINCT reads every quote.
  const rows = await read(sql, (q) =>
    q<{ email: string }[]>`
      WITH RECURSIVE reps (email) AS (
        (SELECT sales_rep_email FROM quotes
         WHERE organization_id = ${organizationId} AND sales_rep_email IS NOT NULL
         ORDER BY sales_rep_email LIMIT 1)
        UNION ALL
        SELECT (SELECT sales_rep_email FROM quotes
                WHERE organization_id = ${organizationId} AND sales_rep_email > reps.email
                ORDER BY sales_rep_email LIMIT 1)
        FROM reps WHERE reps.email IS NOT NULL
      )
      SELECT email FROM reps WHERE email IS NOT NULL`);
  return rows.map((r) => r.email);
}

import type { Queryable, Sql } from "@printshop/shared/db";
import type { CreateQuoteBody, ListQuotesQuery, Quote } from "@printshop/shared/contracts";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { formatQuoteRef } from "../domain/quote_ref.ts";
import {
  GROUP_COLUMNS,
  type GroupRow,
  QUOTE_COLUMNS,
  type QuoteRow,
  toGroup,
  toQuote,
} from "./rows.ts";

const SORT_COLUMNS: Record<NonNullable<ListQuotesQuery["sortField"]>, string> = {
  createdAt: "created_at",
  updatedAt: "updated_at",
  quoteRef: "quote_number",
  reference: "reference",
  status: "status",
  totalIncGst: "total_inc_gst",
  deliveryDate: "delivery_date",
};

async function nextQuoteNumber(tx: Queryable, organizationId: string): Promise<number> {
  const [row] = await tx<{ last_number: number }[]>`
    INSERT INTO quote_ref_counters (organization_id, last_number) VALUES (${organizationId}, 1)
    ON CONFLICT (organization_id)
      DO UPDATE SET last_number = quote_ref_counters.last_number + 1
    RETURNING last_number`;
  return row!.last_number;
}

/** Loads the groups of many quotes in one statement, keyed by quote id. */
async function groupsByQuote(sql: Queryable, quoteIds: string[]): Promise<Map<string, GroupRow[]>> {
  const byQuote = new Map<string, GroupRow[]>();
  if (quoteIds.length === 0) return byQuote;
  const rows = await sql<GroupRow[]>`
    SELECT ${sql.unsafe(GROUP_COLUMNS)} FROM quote_groups
    WHERE quote_id = ANY(${quoteIds}::uuid[]) ORDER BY quote_id, sort_order, id`;
  for (const row of rows) {
    const list = byQuote.get(row.quote_id) ?? [];
    list.push(row);
    byQuote.set(row.quote_id, list);
  }
  return byQuote;
}

async function assemble(sql: Queryable, rows: QuoteRow[]): Promise<Quote[]> {
  const groups = await groupsByQuote(sql, rows.map((r) => r.id));
  return rows.map((row) => toQuote(row, (groups.get(row.id) ?? []).map(toGroup)));
}

export async function createQuote(
  sql: Sql,
  organizationId: string,
  input: CreateQuoteBody,
): Promise<Quote> {
  return await sql.begin(async (tx) => {
    const number = await nextQuoteNumber(tx, organizationId);
    const [row] = await tx<QuoteRow[]>`
      INSERT INTO quotes (
        id, organization_id, quote_number, quote_ref, reference, client_id, contact_id,
        shipping_address_id, sales_rep_email, delivery_method, delivery_date, production_deadline,
        invoice_due_date, notes, mock_id, job_id, job_ref, invoice_id, invoice_status
      ) VALUES (
        ${uuidv7()}, ${organizationId}, ${number}, ${formatQuoteRef(number)},
        ${input.reference ?? null}, ${input.clientId ?? null}, ${input.contactId ?? null},
        ${input.shippingAddressId ?? null}, ${input.salesRepEmail ?? null},
        ${input.deliveryMethod ?? null}, ${input.deliveryDate ?? null},
        ${input.productionDeadline ?? null}, ${input.invoiceDueDate ?? null},
        ${input.notes ?? null}, ${input.mockId ?? null}, ${input.jobId ?? null},
        ${input.jobRef ?? null}, ${input.invoiceId ?? null}, ${input.invoiceStatus ?? null}
      ) RETURNING ${tx.unsafe(QUOTE_COLUMNS)}`;
    const quote = toQuote(row!, []);
    await writeEvent(tx, {
      organizationId,
      type: "quote.created",
      aggregateId: quote.id,
      payload: quote,
    });
    return quote;
  });
}

export async function findQuote(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
): Promise<Quote | null> {
  const rows = await sql<QuoteRow[]>`
    SELECT ${sql.unsafe(QUOTE_COLUMNS)} FROM quotes
    WHERE organization_id = ${organizationId} AND id = ${quoteId}`;
  const [quote] = await assemble(sql, rows);
  return quote ?? null;
}

/** Escapes LIKE wildcards so a search for "50%" finds that text rather than everything. */
function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

export interface QuotePage {
  items: Quote[];
  totalCount: number;
}

/**
 * One page of quotes and the count of all that match. Three statements whatever the page size:
 * count, page, and the page's groups.
 */
export async function listQuotes(
  sql: Sql,
  organizationId: string,
  query: ListQuotesQuery,
  limit: number,
): Promise<QuotePage> {
  const conditions = [sql`organization_id = ${organizationId}`];
  if (query.clientId) conditions.push(sql`client_id = ${query.clientId}`);
  if (query.status) conditions.push(sql`status = ${query.status}`);
  if (query.search && query.search.trim() !== "") {
    const pattern = likePattern(query.search.trim());
    conditions.push(
      sql`(quote_ref ILIKE ${pattern} OR reference ILIKE ${pattern} OR notes ILIKE ${pattern})`,
    );
  }
  const where = conditions.reduce((acc, condition) => sql`${acc} AND ${condition}`);
  const column = sql.unsafe(SORT_COLUMNS[query.sortField ?? "createdAt"]);
  const direction = sql.unsafe(
    (query.sortDirection ?? (query.sortField ? "asc" : "desc")) === "asc" ? "ASC" : "DESC",
  );
  const [countRows, rows] = await Promise.all([
    sql<{ count: number }[]>`SELECT count(*)::int AS count FROM quotes WHERE ${where}`,
    limit === 0 ? Promise.resolve([] as QuoteRow[]) : sql<QuoteRow[]>`
      SELECT ${sql.unsafe(QUOTE_COLUMNS)} FROM quotes WHERE ${where}
      ORDER BY ${column} ${direction} NULLS LAST, id ${direction}
      LIMIT ${limit} OFFSET ${query.offset ?? 0}`,
  ]);
  return { items: await assemble(sql, rows), totalCount: countRows[0]!.count };
}

export async function salesRepFacet(sql: Queryable, organizationId: string): Promise<string[]> {
  const rows = await sql<{ email: string }[]>`
    SELECT DISTINCT sales_rep_email AS email FROM quotes
    WHERE organization_id = ${organizationId} AND sales_rep_email IS NOT NULL
    ORDER BY email`;
  return rows.map((r) => r.email);
}

import type { Queryable, Sql, TransactionSql } from "@printshop/shared/db";
import type {
  CreateQuoteBody,
  ListQuotesQuery,
  Quote,
  QuoteStatus,
  UpdateQuoteBody,
} from "@printshop/shared/contracts";
import { ApiError, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { compileFilters, type FilterFields, parseFiltersParam } from "@printshop/shared/filters";
import { formatQuoteRef } from "../domain/quote_ref.ts";
import { canMove, isReopen } from "../domain/status.ts";
import { quoteJsonSql } from "./quote_json.ts";
import { recomputeQuote } from "./aggregate.ts";
import { ensureDefaultTaxRate, findTaxRate } from "./tax_rates.ts";

const SORT_COLUMNS: Record<NonNullable<ListQuotesQuery["sortField"]>, string> = {
  createdAt: "created_at",
  updatedAt: "updated_at",
  quoteRef: "quote_number",
  reference: "reference",
  status: "status",
  totalIncGst: "total_inc_gst",
  deliveryDate: "delivery_date",
};

const NULLABLE_SORT_FIELDS: ReadonlySet<string> = new Set(["reference", "deliveryDate"]);

/** What `filters` may name on the quote list, and the type each value must have. */
export const QUOTE_FILTER_FIELDS: FilterFields = {
  status: {
    column: "status",
    type: "enum",
    values: ["draft", "sent", "approved", "declined", "expired"],
  },
  quoteRef: { column: "quote_ref", type: "text" },
  reference: { column: "reference", type: "text" },
  clientId: { column: "client_id", type: "uuid" },
  contactId: { column: "contact_id", type: "uuid" },
  salesRepEmail: { column: "sales_rep_email", type: "text" },
  deliveryMethod: { column: "delivery_method", type: "text" },
  deliveryDate: { column: "delivery_date", type: "date" },
  productionDeadline: { column: "production_deadline", type: "date" },
  invoiceDueDate: { column: "invoice_due_date", type: "date" },
  jobId: { column: "job_id", type: "text" },
  jobRef: { column: "job_ref", type: "text" },
  invoiceId: { column: "invoice_id", type: "text" },
  invoiceStatus: { column: "invoice_status", type: "text" },
  subtotalExGst: { column: "subtotal_ex_gst", type: "number" },
  totalIncGst: { column: "total_inc_gst", type: "number" },
  createdAt: { column: "created_at", type: "datetime" },
  updatedAt: { column: "updated_at", type: "datetime" },
  sentAt: { column: "sent_at", type: "datetime" },
};

async function nextQuoteNumber(tx: Queryable, organizationId: string): Promise<number> {
  const [row] = await tx<{ last_number: number }[]>`
    INSERT INTO quote_ref_counters (organization_id, last_number) VALUES (${organizationId}, 1)
    ON CONFLICT (organization_id)
      DO UPDATE SET last_number = quote_ref_counters.last_number + 1
    RETURNING last_number`;
  return row!.last_number;
}

/** The tax rate a quote names, or the organisation's default; an unknown id is a 400. */
async function taxRateFor(
  tx: Queryable,
  organizationId: string,
  taxRateId: string | null | undefined,
): Promise<{ id: string; name: string; ratePct: string }> {
  if (!taxRateId) return await ensureDefaultTaxRate(tx, organizationId);
  const rate = await findTaxRate(tx, organizationId, taxRateId);
  if (!rate) {
    throw new ApiError("validation_error", `Tax rate "${taxRateId}" was not found`, [
      { path: "taxRateId", message: "No such tax rate in this organisation" },
    ]);
  }
  return rate;
}

/**
 * The quotes with these ids, in this order, each as JSON text built whole by PostgreSQL in one
 * statement (quote_json.ts); ids not of this organisation (or gone) are left out. The one read of
 * quotes: GET and the list send the texts as they are; write answers and events parse them.
 */
async function quotesJson(
  sql: Queryable,
  organizationId: string,
  ids: readonly string[],
  costs: boolean,
): Promise<string[]> {
  // No ORDER BY: sorting would carry every quote's JSON through a sort; `n` places them here.
  const rows = await sql<{ n: number; json: string }[]>`
    SELECT p.n::int AS n, ${sql.unsafe(quoteJsonSql(costs))} AS json
    FROM unnest(${ids as string[]}::uuid[]) WITH ORDINALITY AS p (id, n)
      JOIN quotes q ON q.id = p.id
    WHERE q.organization_id = ${organizationId}`;
  return rows.sort((a, b) => a.n - b.n).map((r) => r.json);
}

async function readQuoteJson(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Promise<string | null> {
  const [json] = await quotesJson(sql, organizationId, [quoteId], costs);
  return json ?? null;
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

/** The full quote, as a costs.read subscriber will see it, for event payloads. */
function eventPayload(
  tx: Queryable,
  organizationId: string,
  quoteId: string,
): Promise<Quote | null> {
  return readQuote(tx, organizationId, quoteId, true);
}

export async function createQuote(
  sql: Sql,
  organizationId: string,
  input: CreateQuoteBody,
  costs: boolean,
): Promise<Quote> {
  return await sql.begin(async (tx) => {
    const rate = await taxRateFor(tx, organizationId, input.taxRateId);
    const number = await nextQuoteNumber(tx, organizationId);
    const id = uuidv7();
    await tx`
      INSERT INTO quotes (
        id, organization_id, quote_number, quote_ref, reference, client_id, contact_id,
        shipping_address_id, sales_rep_email, delivery_method, delivery_date, production_deadline,
        invoice_due_date, notes, mock_id, job_id, job_ref, invoice_id, invoice_status,
        tax_rate_id, tax_name, tax_rate_pct
      ) VALUES (
        ${id}, ${organizationId}, ${number}, ${formatQuoteRef(number)},
        ${input.reference ?? null}, ${input.clientId ?? null}, ${input.contactId ?? null},
        ${input.shippingAddressId ?? null}, ${input.salesRepEmail ?? null},
        ${input.deliveryMethod ?? null}, ${input.deliveryDate ?? null},
        ${input.productionDeadline ?? null}, ${input.invoiceDueDate ?? null},
        ${input.notes ?? null}, ${input.mockId ?? null}, ${input.jobId ?? null},
        ${input.jobRef ?? null}, ${input.invoiceId ?? null}, ${input.invoiceStatus ?? null},
        ${rate.id}, ${rate.name}, ${rate.ratePct}
      )`;
    const quote = (await readQuote(tx, organizationId, id, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote.created",
      aggregateId: id,
      payload: await eventPayload(tx, organizationId, id),
    });
    return quote;
  });
}

/** The quote as JSON text, to send without parsing it; null when there is none. */
export async function findQuoteJson(
  sql: Queryable,
  organizationId: string,
  quoteId: string,
  costs: boolean,
): Promise<string | null> {
  return await readQuoteJson(sql, organizationId, quoteId, costs);
}

const COLUMN_OF: Record<keyof UpdateQuoteBody, string> = {
  reference: "reference",
  clientId: "client_id",
  contactId: "contact_id",
  shippingAddressId: "shipping_address_id",
  salesRepEmail: "sales_rep_email",
  deliveryMethod: "delivery_method",
  deliveryDate: "delivery_date",
  productionDeadline: "production_deadline",
  invoiceDueDate: "invoice_due_date",
  notes: "notes",
  mockId: "mock_id",
  jobId: "job_id",
  jobRef: "job_ref",
  invoiceId: "invoice_id",
  invoiceStatus: "invoice_status",
  taxRateId: "tax_rate_id",
};

async function lockQuote(
  tx: TransactionSql,
  organizationId: string,
  quoteId: string,
): Promise<{ id: string; status: QuoteStatus; tax_rate_pct: string }> {
  const [row] = await tx<{ id: string; status: QuoteStatus; tax_rate_pct: string }[]>`
    SELECT id, status, tax_rate_pct FROM quotes
    WHERE organization_id = ${organizationId} AND id = ${quoteId} FOR UPDATE`;
  if (!row) throw notFound("Quote", quoteId);
  return row;
}

/**
 * Changes a quote's own fields. These are references and dates an integrator keeps in step at
 * any status; a new tax rate is the exception: it changes the totals, so only a draft takes it.
 */
export async function updateQuote(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: UpdateQuoteBody,
  costs: boolean,
): Promise<Quote> {
  return await sql.begin(async (tx) => {
    const locked = await lockQuote(tx, organizationId, quoteId);
    const changes: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) {
      if (value !== undefined && key !== "taxRateId") {
        changes[COLUMN_OF[key as keyof UpdateQuoteBody]] = value;
      }
    }
    let taxRatePct = locked.tax_rate_pct;
    if (input.taxRateId !== undefined) {
      if (locked.status !== "draft") {
        throw new ApiError(
          "conflict",
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
    const quote = (await readQuote(tx, organizationId, quoteId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote.updated",
      aggregateId: quoteId,
      payload: await eventPayload(tx, organizationId, quoteId),
    });
    return quote;
  });
}

/** Deletes a quote and, by cascade, its groups and rows. False when there was none. */
export async function deleteQuote(
  sql: Sql,
  organizationId: string,
  quoteId: string,
): Promise<boolean> {
  return await sql.begin(async (tx) => {
    const deleted = await tx`
      DELETE FROM quotes WHERE organization_id = ${organizationId} AND id = ${quoteId}
      RETURNING id`;
    if (deleted.length === 0) return false;
    await writeEvent(tx, {
      organizationId,
      type: "quote.deleted",
      aggregateId: quoteId,
      payload: { id: quoteId },
    });
    return true;
  });
}

/**
 * Moves a quote to another status. An illegal move is 409 conflict naming the allowed ones;
 * moving to `sent` stamps sentAt (and sentToEmail when given); reopening re-bands every `group`
 * row and recomputes the totals.
 */
export async function setQuoteStatus(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: { status: QuoteStatus; sentToEmail?: string | undefined },
  costs: boolean,
): Promise<Quote> {
  return await sql.begin(async (tx) => {
    const locked = await lockQuote(tx, organizationId, quoteId);
    const from = locked.status;
    const to = input.status;
    if (!canMove(from, to)) {
      throw new ApiError(
        "conflict",
        `Quote "${quoteId}" cannot move from ${from} to ${to}`,
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
    const quote = (await readQuote(tx, organizationId, quoteId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote.status_changed",
      aggregateId: quoteId,
      payload: { from, to, quote: await eventPayload(tx, organizationId, quoteId) },
    });
    return quote;
  });
}

/** Escapes LIKE wildcards so a search for "50%" finds that text rather than everything. */
function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/** What the text listQuotesJson returns parses to. */
export interface QuotePage {
  items: Quote[];
  totalCount: number;
}

/**
 * How many statements build a page's JSON, side by side on the pool's connections. PostgreSQL
 * runs one statement on one core; building a 200-quote page is CPU work there, so halves built at
 * once take about half the time.
 */
const PAGE_JSON_STATEMENTS = 2;

/** `items` split into at most `parts` runs of (nearly) equal length, in order. */
function chunks<T>(items: readonly T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/**
 * One page of quotes as the JSON text of a QuotePage, `{"items":[…],"totalCount":N}`: each
 * quote built whole by PostgreSQL (quote_json.ts) and joined here without parsing. The same
 * number of statements whatever the page size (no query per quote or row): the count, beside
 * the page's ids and then the page's JSON in PAGE_JSON_STATEMENTS parts side by side (fewer
 * parts only when the page has fewer quotes than that; none when it is empty).
 */
export async function listQuotesJson(
  sql: Sql,
  organizationId: string,
  query: ListQuotesQuery,
  limit: number,
  costs: boolean,
): Promise<string> {
  const conditions = [sql`organization_id = ${organizationId}`];
  if (query.clientId) conditions.push(sql`client_id = ${query.clientId}`);
  if (query.status) conditions.push(sql`status = ${query.status}`);
  if (query.search && query.search.trim() !== "") {
    const pattern = likePattern(query.search.trim());
    conditions.push(
      sql`(quote_ref ILIKE ${pattern} OR reference ILIKE ${pattern} OR notes ILIKE ${pattern}
        OR client_id::text ILIKE ${pattern})`,
    );
  }
  conditions.push(...compileFilters(sql, parseFiltersParam(query.filters), QUOTE_FILTER_FIELDS));
  const where = conditions.reduce((acc, condition) => sql`${acc} AND ${condition}`);
  const sortField = query.sortField ?? "createdAt";
  const column = sql.unsafe(SORT_COLUMNS[sortField]);
  const direction = sql.unsafe(
    (query.sortDirection ?? (query.sortField ? "asc" : "desc")) === "asc" ? "ASC" : "DESC",
  );
  // Only nullable columns need NULLS LAST; leaving it off the others lets a descending sort
  // walk the (organization_id, created_at, id) index backwards instead of sorting every quote.
  const nulls = sql.unsafe(NULLABLE_SORT_FIELDS.has(sortField) ? "NULLS LAST" : "");
  // The count is only needed at the end: it runs beside the page's ids and then its JSON.
  const counted = sql<{ count: number }[]>`
    SELECT count(*)::int AS count FROM quotes WHERE ${where}`;
  // Sends it now (postgres.js runs a query once it is awaited or given a handler); awaited
  // below, and this handler keeps a failure meanwhile from being reported as unhandled.
  counted.catch(() => {});
  const page = limit === 0 ? [] : await sql<{ id: string }[]>`
      SELECT id FROM quotes WHERE ${where}
      ORDER BY ${column} ${direction} ${nulls}, id ${direction}
      LIMIT ${limit} OFFSET ${query.offset ?? 0}`;
  // The page is fixed by its ids, so the parts cannot overlap or miss a quote between them.
  const parts = await Promise.all(
    chunks(page.map((r) => r.id), PAGE_JSON_STATEMENTS).map((ids) =>
      quotesJson(sql, organizationId, ids, costs)
    ),
  );
  const count = (await counted)[0]!.count;
  return `{"items":[${parts.flat().join(",")}],"totalCount":${count}}`;
}

export async function salesRepFacet(sql: Queryable, organizationId: string): Promise<string[]> {
  const rows = await sql<{ email: string }[]>`
    SELECT DISTINCT sales_rep_email AS email FROM quotes
    WHERE organization_id = ${organizationId} AND sales_rep_email IS NOT NULL
    ORDER BY email`;
  return rows.map((r) => r.email);
}

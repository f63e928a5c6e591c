import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { externalIdKey } from "@printshop/shared/db/held-keys";
import {
  type Quote,
  QUOTE_STATUSES,
  type QuoteGroup,
  type QuoteGroupDecoration,
  type QuoteLine,
} from "@printshop/shared/contracts/quotes";
import { clientNameSql } from "./customers.ts";

/**
 * The quotes table, declared once: a quote's fields in the order it shows them, and those its
 * list filters and sorts on. Its client's name and its groups are computed (toQuote,
 * quote_json.ts), placed where the quote shows them.
 */
export const QUOTES = defineTable({
  name: "quotes",
  tenant: true,
  noun: "Quote",
  references: { tax_rate_id: "tax_rates" },
  columns: {
    id: col.uuid(),
    status: col.enum(QUOTE_STATUSES).filterable(),
    subtotalExGst: col.number().filterable(),
    gstAmount: col.number(),
    totalIncGst: col.number().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
    groups: col.computed<QuoteGroup[]>(),
    // Sorted by number, so Q-10 follows Q-9.
    quoteRef: col.text().filterable({ sortColumn: "quote_number", sortType: "number" }),
    reference: col.text().nullable().filterable(),
    externalId: col.text().nullable().filterable(),
    clientId: col.uuid().nullable().filterable(),
    clientName: col.computed<string | null>(),
    contactId: col.uuid().nullable().filterable(),
    shippingAddressId: col.uuid().nullable(),
    salesRepEmail: col.text().nullable().filterable(),
    deliveryMethod: col.text().nullable().filterable(),
    deliveryDate: col.date().nullable().filterable(),
    productionDeadline: col.date().nullable().filterable(),
    invoiceDueDate: col.date().nullable().filterable(),
    notes: col.text().nullable(),
    taxRateId: col.uuid().nullable(),
    taxName: col.text(),
    taxRatePct: col.number(),
    mockId: col.uuid().nullable(),
    jobId: col.text().nullable().filterable(),
    jobRef: col.text().nullable().filterable(),
    invoiceId: col.text().nullable().filterable(),
    invoiceStatus: col.text().nullable().filterable(),
    sentToEmail: col.text().nullable(),
    sentAt: col.timestamp().nullable().filterable(),
  },
});

/** The quote_groups table, declared once; a group's total and its rows are computed. */
export const GROUPS = defineTable({
  name: "quote_groups",
  tenant: true,
  noun: "Quote group",
  references: { quote_id: "quotes" },
  columns: {
    id: col.uuid(),
    quoteId: col.uuid(),
    name: col.text(),
    totalQuantity: col.computed<number>(),
    sortOrder: col.integer(),
    rollUpDecoration: col.boolean(),
    rollUpSetup: col.boolean(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
    lines: col.computed<QuoteLine[]>(),
    decorations: col.computed<QuoteGroupDecoration[]>(),
  },
});

/** A quote's columns and its client's name, from the customer projection (customers.ts). */
/** The integrator's id of a quote, held once per organisation (409 naming the holder). */
export const QUOTE_EXTERNAL_ID = externalIdKey(QUOTES);

export const QUOTE_COLUMNS = `${QUOTES.select}, ${clientNameSql("quotes")} AS client_name`;

export type QuoteRow = RowOf<typeof QUOTES> & { client_name: string | null };

export type GroupRow = RowOf<typeof GROUPS>;

/** A group with its rows; `totalQuantity` is the sum over its Garment lines. */
export function toGroup(
  row: GroupRow,
  lines: QuoteLine[] = [],
  decorations: QuoteGroupDecoration[] = [],
): QuoteGroup {
  const totalQuantity = lines.reduce((n, l) => (l.lineType === "Garment" ? n + l.quantity : n), 0);
  return GROUPS.read(row, { totalQuantity, lines, decorations });
}

export function toQuote(row: QuoteRow, groups: QuoteGroup[]): Quote {
  return QUOTES.read(row, { clientName: row.client_name, groups });
}

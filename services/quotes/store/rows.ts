import { clientNameSql } from "./customers.ts";
import type {
  Quote,
  QuoteGroup,
  QuoteGroupDecoration,
  QuoteLine,
} from "@printshop/shared/contracts/quotes";

/** Column lists and row → resource mapping shared by the quote and group stores. */
export const QUOTE_COLUMNS = `id, status, quote_ref, subtotal_ex_gst, gst_amount, total_inc_gst,
  reference, client_id, contact_id, shipping_address_id, sales_rep_email, delivery_method,
  delivery_date, production_deadline, invoice_due_date, notes, tax_rate_id, tax_name,
  tax_rate_pct, mock_id, job_id, job_ref, invoice_id, invoice_status, sent_to_email, sent_at,
  created_at, updated_at, ${clientNameSql("quotes")} AS client_name`;

export const GROUP_COLUMNS = `id, quote_id, name, sort_order, roll_up_decoration,
  roll_up_setup, created_at, updated_at`;

export interface QuoteRow {
  id: string;
  status: Quote["status"];
  quote_ref: string;
  subtotal_ex_gst: string;
  gst_amount: string;
  total_inc_gst: string;
  reference: string | null;
  client_id: string | null;
  /** From the customer projection (store/customers.ts). */
  client_name: string | null;
  contact_id: string | null;
  shipping_address_id: string | null;
  sales_rep_email: string | null;
  delivery_method: string | null;
  delivery_date: string | null;
  production_deadline: string | null;
  invoice_due_date: string | null;
  notes: string | null;
  tax_rate_id: string | null;
  tax_name: string;
  tax_rate_pct: string;
  mock_id: string | null;
  job_id: string | null;
  job_ref: string | null;
  invoice_id: string | null;
  invoice_status: string | null;
  sent_to_email: string | null;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface GroupRow {
  id: string;
  quote_id: string;
  name: string;
  sort_order: number;
  roll_up_decoration: boolean;
  roll_up_setup: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A group with its rows; `totalQuantity` is the sum over its Garment lines. */
export function toGroup(
  row: GroupRow,
  lines: QuoteLine[] = [],
  decorations: QuoteGroupDecoration[] = [],
): QuoteGroup {
  return {
    id: row.id,
    quoteId: row.quote_id,
    name: row.name,
    totalQuantity: lines.reduce((n, l) => (l.lineType === "Garment" ? n + l.quantity : n), 0),
    sortOrder: row.sort_order,
    rollUpDecoration: row.roll_up_decoration,
    rollUpSetup: row.roll_up_setup,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lines,
    decorations,
  };
}

export function toQuote(row: QuoteRow, groups: QuoteGroup[]): Quote {
  return {
    id: row.id,
    status: row.status,
    subtotalExGst: Number(row.subtotal_ex_gst),
    gstAmount: Number(row.gst_amount),
    totalIncGst: Number(row.total_inc_gst),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    groups,
    quoteRef: row.quote_ref,
    reference: row.reference,
    clientId: row.client_id,
    clientName: row.client_name,
    contactId: row.contact_id,
    shippingAddressId: row.shipping_address_id,
    salesRepEmail: row.sales_rep_email,
    deliveryMethod: row.delivery_method,
    deliveryDate: row.delivery_date,
    productionDeadline: row.production_deadline,
    invoiceDueDate: row.invoice_due_date,
    notes: row.notes,
    taxRateId: row.tax_rate_id,
    taxName: row.tax_name,
    taxRatePct: Number(row.tax_rate_pct),
    mockId: row.mock_id,
    jobId: row.job_id,
    jobRef: row.job_ref,
    invoiceId: row.invoice_id,
    invoiceStatus: row.invoice_status,
    sentToEmail: row.sent_to_email,
    sentAt: row.sent_at?.toISOString() ?? null,
  };
}

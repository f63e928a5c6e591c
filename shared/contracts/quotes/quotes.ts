/** Quotes: the priced document a shop sends, with its groups, lifecycle and totals. */
import { z } from "zod";
import { DateTime, Deleted, Email, IsoDate, page, Text, Uuid, writeBodies } from "../common.ts";
import { defineEvents } from "../events.ts";
import { offsetListQuery } from "../lists.ts";
import { operations } from "../operation.ts";
import { QuoteGroup } from "./groups.ts";

export const QUOTE_STATUSES = ["draft", "sent", "approved", "declined", "expired"] as const;
export const QuoteStatus = z.enum(QUOTE_STATUSES, {
  error: `Must be one of ${QUOTE_STATUSES.join(", ")}`,
});
export type QuoteStatus = z.infer<typeof QuoteStatus>;

export const Quote = z.object({
  id: Uuid,
  status: QuoteStatus,
  subtotalExGst: z.number(),
  gstAmount: z.number(),
  totalIncGst: z.number(),
  createdAt: DateTime,
  updatedAt: DateTime,
  groups: z.array(QuoteGroup),
  quoteRef: z.string(),
  reference: z.string().nullable(),
  clientId: Uuid.nullable(),
  contactId: Uuid.nullable(),
  shippingAddressId: Uuid.nullable(),
  salesRepEmail: z.string().nullable(),
  deliveryMethod: z.string().nullable(),
  deliveryDate: IsoDate.nullable(),
  productionDeadline: IsoDate.nullable(),
  invoiceDueDate: IsoDate.nullable(),
  notes: z.string().nullable(),
  taxRateId: Uuid.nullable(),
  taxName: z.string(),
  taxRatePct: z.number(),
  mockId: Uuid.nullable(),
  jobId: z.string().nullable(),
  jobRef: z.string().nullable(),
  invoiceId: z.string().nullable(),
  invoiceStatus: z.string().nullable(),
  sentToEmail: z.string().nullable(),
  sentAt: DateTime.nullable(),
}).meta({ id: "Quote" });
export type Quote = z.infer<typeof Quote>;

/** Fields an integrator writes on a quote; everything else is derived or assigned. */
const quoteFields = {
  reference: Text(200).nullable(),
  clientId: Uuid.nullable(),
  contactId: Uuid.nullable(),
  shippingAddressId: Uuid.nullable(),
  salesRepEmail: Email.nullable(),
  deliveryMethod: Text(100).nullable(),
  deliveryDate: IsoDate.nullable(),
  productionDeadline: IsoDate.nullable(),
  invoiceDueDate: IsoDate.nullable(),
  notes: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  mockId: Uuid.nullable(),
  jobId: Text(200).nullable(),
  jobRef: Text(200).nullable(),
  invoiceId: Text(200).nullable(),
  invoiceStatus: Text(100).nullable(),
  taxRateId: Uuid.nullable(),
};

export const { create: CreateQuoteBody, update: UpdateQuoteBody } = writeBodies(
  "Quote",
  quoteFields,
);
export type CreateQuoteBody = z.infer<typeof CreateQuoteBody>;
export type UpdateQuoteBody = z.infer<typeof UpdateQuoteBody>;

export const QuoteStatusBody = z.strictObject({
  status: QuoteStatus,
  sentToEmail: Email.optional(),
}).meta({ id: "QuoteStatusBody" });
export type QuoteStatusBody = z.infer<typeof QuoteStatusBody>;

export const QUOTE_SORT_FIELDS = [
  "createdAt",
  "updatedAt",
  "quoteRef",
  "reference",
  "status",
  "totalIncGst",
  "deliveryDate",
] as const;

export const ListQuotesQuery = offsetListQuery({
  sortFields: QUOTE_SORT_FIELDS,
  named: { clientId: Uuid.optional(), status: QuoteStatus.optional() },
  search: true,
});
export type ListQuotesQuery = z.infer<typeof ListQuotesQuery>;

export const QuoteFacets = z.object({ salesReps: z.array(z.string()) }).meta({
  id: "QuoteFacets",
});

const QuoteDeleted = z.object({ id: Uuid }).meta({ id: "QuoteDeletedData" });
const QuoteStatusChanged = z.object({
  from: z.enum(QUOTE_STATUSES),
  to: z.enum(QUOTE_STATUSES),
  quote: Quote,
}).meta({ id: "QuoteStatusChangedData" });

export const quoteEvents = defineEvents("quotes", "quotes.read", {
  "quote.created": { summary: "A quote was created", data: Quote },
  "quote.updated": { summary: "A quote's own fields changed", data: Quote },
  "quote.status_changed": {
    summary: "A quote moved to another status",
    data: QuoteStatusChanged,
  },
  "quote.deleted": { summary: "A quote was deleted", data: QuoteDeleted },
});

export const quoteOperations = operations("Quotes", {
  createQuote: {
    method: "POST",
    path: "/v1/quotes",
    scope: "quotes.write",
    summary: "Create a quote in draft",
    body: CreateQuoteBody,
    responses: { 201: Quote },
    // The organisation's first quote creates its default tax rate.
    events: ["quote.created", "tax_rate.created"],
  },
  listQuotes: {
    method: "GET",
    path: "/v1/quotes",
    scope: "quotes.read",
    summary: "List quotes with their groups, filtered, sorted and paged",
    query: ListQuotesQuery,
    responses: { 200: page(Quote) },
  },
  getQuoteFacets: {
    method: "GET",
    path: "/v1/quotes/facets",
    scope: "quotes.read",
    summary: "Distinct values to filter the quote list by",
    responses: { 200: QuoteFacets },
  },
  getQuote: {
    method: "GET",
    path: "/v1/quotes/{quoteId}",
    scope: "quotes.read",
    summary: "Read one quote with its groups",
    responses: { 200: Quote },
  },
  updateQuote: {
    method: "PATCH",
    path: "/v1/quotes/{quoteId}",
    scope: "quotes.write",
    summary: "Change a quote's own fields (references, dates, tax rate, notes)",
    body: UpdateQuoteBody,
    responses: { 200: Quote },
    events: ["quote.updated", "tax_rate.created"],
  },
  deleteQuote: {
    method: "DELETE",
    path: "/v1/quotes/{quoteId}",
    scope: "quotes.write",
    summary: "Delete a quote with its groups and rows",
    responses: { 200: Deleted },
    events: ["quote.deleted"],
  },
  setQuoteStatus: {
    method: "POST",
    path: "/v1/quotes/{quoteId}/status",
    scope: "quotes.write",
    summary: "Move a quote through its lifecycle (draft, sent, approved, declined, expired)",
    body: QuoteStatusBody,
    responses: { 200: Quote },
    events: ["quote.status_changed"],
  },
});

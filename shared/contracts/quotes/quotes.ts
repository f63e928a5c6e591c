/** Quotes: the priced document a shop sends, with its groups, lifecycle and totals. */
import { z } from "zod";
import {
  DateTime,
  Deleted,
  described,
  Email,
  ExternalId,
  externalIdDescription,
  externalIdFilter,
  IsoDate,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { defineEvents } from "../events.ts";
import { offsetListQuery } from "../lists.ts";
import { operations } from "../operation.ts";
import { QUOTE_GROUP_EXAMPLE, QuoteGroup } from "./groups.ts";

export const QUOTE_STATUSES = ["draft", "sent", "approved", "declined", "expired"] as const;
export const QuoteStatus = z.enum(QUOTE_STATUSES, {
  error: `Must be one of ${QUOTE_STATUSES.join(", ")}`,
});
export type QuoteStatus = z.infer<typeof QuoteStatus>;

/** One description per field, for the quote and its write bodies. */
const QUOTE_DESCRIPTIONS = {
  id: "The quote's id",
  status: "Where the quote is in its lifecycle; only a draft's rows and prices may change",
  subtotalExGst: "Sum of the group totals ex tax, rounded to 2 decimals; derived, read-only",
  gstAmount: "subtotalExGst × taxRatePct / 100, rounded to 2 decimals; derived, read-only",
  totalIncGst: "subtotalExGst + gstAmount; derived, read-only",
  createdAt: "When the quote was created",
  updatedAt: "When the quote or any of its rows last changed",
  groups: "The quote's groups by sortOrder",
  quoteRef: "Human-readable number the shop assigns (`Q-00042`); read-only",
  reference: "The customer's name for the job (an order number, a title)",
  externalId: externalIdDescription("quotes"),
  clientId: "The CRM customer the quote is for",
  clientName: "The name (`companyName`) of the CRM customer `clientId` names; read-only. The " +
    "quotes service learns it from the CRM's `customer.*` events, so it may lag a change in the " +
    "CRM by a moment; null when the quote has no `clientId`, when no event has told of that " +
    "customer yet, or once the customer was deleted",
  contactId: "The customer's contact person",
  shippingAddressId: "Where the order ships",
  salesRepEmail: "Email of the shop's sales rep for this quote",
  deliveryMethod: "How the order reaches the customer, as free text (`Courier`, `Pick-up`)",
  deliveryDate: "Date the customer expects the goods",
  productionDeadline: "Date production must be finished",
  invoiceDueDate: "Date the invoice is due",
  notes: "Free-text notes on the quote",
  taxRateId: "The tax rate the quote uses; written as null or left out on create, the " +
    "organisation's default (GST 10 % until another is made the default); only a draft's changes",
  taxName: "Name of the quote's tax rate, copied from it; read-only",
  taxRatePct: "Rate of the quote's tax in percent, 0–100, copied from the tax rate; read-only",
  mockId: "The mock-up shown to the customer",
  jobId: "The production job made from this quote, in the shop's job system",
  jobRef: "That job's human-readable number",
  invoiceId: "The invoice raised for this quote, in the accounting system",
  invoiceStatus: "That invoice's status, as the accounting system reports it",
  sentToEmail: "Where the quote was last sent; set by a move to `sent`",
  sentAt: "When the quote was last sent; set by a move to `sent`",
};

export const Quote = z.object(described({
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
  externalId: z.string().nullable(),
  clientId: Uuid.nullable(),
  clientName: z.string().nullable(),
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
}, QUOTE_DESCRIPTIONS)).meta({
  id: "Quote",
  description: "A priced quote with its groups; totals are kept in step with every change",
});
export type Quote = z.infer<typeof Quote>;

/** Riverside Bakery's staff tees: one group, 24 tees with a front print, GST 10 %. */
export const QUOTE_EXAMPLE: Quote = {
  id: "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60",
  status: "draft",
  subtotalExGst: 337.52,
  gstAmount: 33.75,
  totalIncGst: 371.27,
  createdAt: "2026-03-02T09:14:27.512Z",
  updatedAt: "2026-03-02T09:18:12.054Z",
  groups: [QUOTE_GROUP_EXAMPLE],
  quoteRef: "Q-00042",
  reference: "Riverside Bakery — staff tees",
  externalId: "shop-order-5512",
  clientId: "0192f4b5-6e7f-7a80-8b91-c2d3e4f5a6b7",
  clientName: "Riverside Bakery",
  contactId: "0192f4b5-7f80-7b91-9ca2-d3e4f5a6b7c8",
  shippingAddressId: "0192f4b5-8091-7ca2-8db3-e4f5a6b7c8d9",
  salesRepEmail: "sam@inkwellprint.com.au",
  deliveryMethod: "Courier",
  deliveryDate: "2026-03-20",
  productionDeadline: "2026-03-17",
  invoiceDueDate: "2026-04-03",
  notes: "Match last year's tees; logo artwork supplied as vector",
  taxRateId: "0192f4a0-3e4d-7f50-a162-7c8d9e0f1a23",
  taxName: "GST",
  taxRatePct: 10,
  mockId: null,
  jobId: null,
  jobRef: null,
  invoiceId: null,
  invoiceStatus: null,
  sentToEmail: null,
  sentAt: null,
};
setExamples(Quote, QUOTE_EXAMPLE);

/** Fields an integrator writes on a quote; everything else is derived or assigned. */
const quoteFields = {
  reference: Text(200).nullable(),
  externalId: ExternalId,
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
  described(quoteFields, QUOTE_DESCRIPTIONS),
);
setExamples(CreateQuoteBody, {
  reference: "Riverside Bakery — staff tees",
  clientId: "0192f4b5-6e7f-7a80-8b91-c2d3e4f5a6b7",
  contactId: "0192f4b5-7f80-7b91-9ca2-d3e4f5a6b7c8",
  shippingAddressId: "0192f4b5-8091-7ca2-8db3-e4f5a6b7c8d9",
  salesRepEmail: "sam@inkwellprint.com.au",
  deliveryMethod: "Courier",
  deliveryDate: "2026-03-20",
  notes: "Match last year's tees; logo artwork supplied as vector",
});
setExamples(UpdateQuoteBody, {
  productionDeadline: "2026-03-17",
  invoiceDueDate: "2026-04-03",
});
export type CreateQuoteBody = z.infer<typeof CreateQuoteBody>;
export type UpdateQuoteBody = z.infer<typeof UpdateQuoteBody>;

export const QuoteStatusBody = z.strictObject(described({
  status: QuoteStatus,
  sentToEmail: Email.optional(),
}, {
  status: "The status to move to; a move the lifecycle does not allow is refused with 409, " +
    "naming the moves it does. Back to draft reopens the quote and its `group` rows re-band",
  sentToEmail: "Only with `sent`: the address the quote went to",
})).meta({ id: "QuoteStatusBody", description: "The status a quote moves to" });
export type QuoteStatusBody = z.infer<typeof QuoteStatusBody>;
setExamples(QuoteStatusBody, { status: "sent", sentToEmail: "orders@riversidebakery.com.au" });

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
  named: {
    ...described({ clientId: Uuid.optional(), status: QuoteStatus.optional() }, {
      clientId: "Only this customer's quotes",
      status: "Only quotes in this status",
    }),
    ...externalIdFilter("quote"),
  },
  search: true,
});
export type ListQuotesQuery = z.infer<typeof ListQuotesQuery>;

export const QuoteFacets = z.object(described({ salesReps: z.array(z.string()) }, {
  salesReps: "Every distinct salesRepEmail on this organisation's quotes",
})).meta({ id: "QuoteFacets", description: "Values the quote list can be filtered by" });
setExamples(QuoteFacets, { salesReps: ["jo@inkwellprint.com.au", "sam@inkwellprint.com.au"] });

const QuoteDeleted = z.object(described({ id: Uuid }, { id: "The deleted quote's id" })).meta({
  id: "QuoteDeletedData",
  description: "The quote that was deleted, with its groups and rows",
});
const QuoteStatusChanged = z.object(described({
  from: z.enum(QUOTE_STATUSES),
  to: z.enum(QUOTE_STATUSES),
  quote: Quote,
}, {
  from: "The status the quote left",
  to: "The status it moved to",
  quote: "The quote as the move left it",
})).meta({
  id: "QuoteStatusChangedData",
  description: "A quote that moved in its lifecycle, and the move",
});

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
    examples: {
      // A new quote has no groups yet, so nothing to total.
      responses: {
        201: {
          ...QUOTE_EXAMPLE,
          subtotalExGst: 0,
          gstAmount: 0,
          totalIncGst: 0,
          updatedAt: QUOTE_EXAMPLE.createdAt,
          groups: [],
          productionDeadline: null,
          invoiceDueDate: null,
        },
      },
    },
  },
  listQuotes: {
    method: "GET",
    path: "/v1/quotes",
    scope: "quotes.read",
    summary: "List quotes with their groups, filtered, sorted and paged",
    query: ListQuotesQuery,
    responses: { 200: page(Quote) },
    examples: {
      query: { status: "draft", search: "Riverside", sortField: "createdAt", limit: "20" },
    },
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
    examples: {
      responses: {
        200: {
          ...QUOTE_EXAMPLE,
          status: "sent",
          sentToEmail: "orders@riversidebakery.com.au",
          sentAt: "2026-03-02T10:02:44.318Z",
          updatedAt: "2026-03-02T10:02:44.318Z",
        },
      },
    },
  },
});

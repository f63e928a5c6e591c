import { z } from "zod";
import {
  DateTime,
  Email,
  IsoDate,
  NonNegativeIntParam,
  SortDirection,
  Text,
  Uuid,
} from "./common.ts";
import { QuoteGroupDecoration, QuoteLine } from "./quote_items.ts";

export const QUOTE_STATUSES = ["draft", "sent", "approved", "declined", "expired"] as const;
export const QuoteStatus = z.enum(QUOTE_STATUSES, {
  error: `Must be one of ${QUOTE_STATUSES.join(", ")}`,
});
export type QuoteStatus = z.infer<typeof QuoteStatus>;

export const QuoteGroup = z.object({
  id: Uuid,
  quoteId: Uuid,
  name: z.string(),
  totalQuantity: z.int(),
  sortOrder: z.int(),
  rollUpDecoration: z.boolean(),
  rollUpSetup: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
  lines: z.array(QuoteLine),
  decorations: z.array(QuoteGroupDecoration),
}).meta({ id: "QuoteGroup" });
export type QuoteGroup = z.infer<typeof QuoteGroup>;

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
export const QuoteFields = {
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

export const CreateQuoteBody = z.strictObject(
  Object.fromEntries(
    Object.entries(QuoteFields).map(([k, v]) => [k, v.optional()]),
  ) as { [K in keyof typeof QuoteFields]: z.ZodOptional<typeof QuoteFields[K]> },
).meta({ id: "CreateQuoteBody" });
export type CreateQuoteBody = z.infer<typeof CreateQuoteBody>;

export const UpdateQuoteBody = z.strictObject(
  Object.fromEntries(
    Object.entries(QuoteFields).map(([k, v]) => [k, v.optional()]),
  ) as { [K in keyof typeof QuoteFields]: z.ZodOptional<typeof QuoteFields[K]> },
).meta({ id: "UpdateQuoteBody" });
export type UpdateQuoteBody = z.infer<typeof UpdateQuoteBody>;

export const QuoteStatusBody = z.strictObject({
  status: QuoteStatus,
  sentToEmail: Email.optional(),
}).meta({ id: "QuoteStatusBody" });
export type QuoteStatusBody = z.infer<typeof QuoteStatusBody>;

export const CreateQuoteGroupBody = z.strictObject({
  name: Text(200),
  sortOrder: z.int("Must be a whole number").min(1, "Must be at least 1").max(100_000)
    .optional(),
}).meta({ id: "CreateQuoteGroupBody" });
export type CreateQuoteGroupBody = z.infer<typeof CreateQuoteGroupBody>;

export const QUOTE_SORT_FIELDS = [
  "createdAt",
  "updatedAt",
  "quoteRef",
  "reference",
  "status",
  "totalIncGst",
  "deliveryDate",
] as const;

export const ListQuotesQuery = z.strictObject({
  limit: NonNegativeIntParam.optional(),
  offset: NonNegativeIntParam.optional(),
  clientId: Uuid.optional(),
  status: QuoteStatus.optional(),
  search: z.string().max(200, "Must be at most 200 characters").optional(),
  sortField: z.enum(QUOTE_SORT_FIELDS, {
    error: `Must be one of ${QUOTE_SORT_FIELDS.join(", ")}`,
  }).optional(),
  sortDirection: SortDirection.optional(),
  filters: z.string().max(20_000, "Must be at most 20000 characters").optional(),
});
export type ListQuotesQuery = z.infer<typeof ListQuotesQuery>;

export const QuoteFacets = z.object({ salesReps: z.array(z.string()) }).meta({
  id: "QuoteFacets",
});

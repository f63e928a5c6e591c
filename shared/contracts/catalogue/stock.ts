/**
 * The stock ledger: every change of a variant's stock is a row here, with who made it and the
 * figures after it, so the stock of any day can be explained.
 */
import { z } from "zod";
import { CREDENTIAL_KINDS, DateTime, described, page, setExamples, Uuid } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { OptionalText } from "../quotes/values.ts";
import { Label, STOCK_MAX, StockReason } from "./values.ts";

const ADJUSTMENT_DESCRIPTIONS = {
  id: "The adjustment's id",
  garmentVariantId: "The variant whose stock changed",
  location: "The location whose count changed; null for a variant that keeps no locations",
  delta: "Units added (positive) or taken away (negative)",
  reason: "Why: `received`, `shipped`, `used_in_production`, `damaged`, `returned`, " +
    "`stocktake`, `transfer`, `correction`, `other`; `opening` for the figure a variant was " +
    "created with",
  reference: "The shop's reference for it (a purchase order, a job number)",
  note: "Free text",
  stockOnHandAfter: "The variant's stock on hand after this adjustment",
  locationQuantityAfter: "The location's count after this adjustment; null without a location",
  credentialKind: "How the caller that made it authenticated: `tenant_key` or `partner`",
  credentialId: "The API key or partner app that made it",
  createdAt: "When it was made",
};

export const StockAdjustment = z.object(described({
  id: Uuid,
  garmentVariantId: Uuid,
  location: z.string().nullable(),
  delta: z.int(),
  reason: StockReason,
  reference: z.string().nullable(),
  note: z.string().nullable(),
  stockOnHandAfter: z.int(),
  locationQuantityAfter: z.int().nullable(),
  credentialKind: z.enum(CREDENTIAL_KINDS),
  credentialId: z.string(),
  createdAt: DateTime,
}, ADJUSTMENT_DESCRIPTIONS)).meta({
  id: "StockAdjustment",
  description: "One change of a variant's stock, as the ledger keeps it",
});
export type StockAdjustment = z.infer<typeof StockAdjustment>;
setExamples(StockAdjustment, {
  id: "0193a2c4-5d6e-7f80-9a1b-2c3d4e5f6a7b",
  garmentVariantId: "0193a0f1-3c01-7d2e-8f90-a1b2c3d4e5f6",
  location: "Main store",
  delta: -24,
  reason: "used_in_production",
  reference: "JOB-1042",
  note: null,
  stockOnHandAfter: 22,
  locationQuantityAfter: 16,
  credentialKind: "tenant_key",
  credentialId: "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f",
  createdAt: "2026-11-21T09:30:00.000Z",
});

export const CreateStockAdjustmentBody = z.strictObject(described({
  location: Label.nullable().optional(),
  delta: z.int().min(-STOCK_MAX, `Must be at least ${-STOCK_MAX}`)
    .max(STOCK_MAX, `Must be at most ${STOCK_MAX}`).refine((d) => d !== 0, "Must not be 0"),
  reason: StockReason.exclude(["opening"], { error: "Must be a reason other than opening" }),
  reference: OptionalText(200).optional(),
  note: OptionalText(2000).optional(),
}, {
  ...ADJUSTMENT_DESCRIPTIONS,
  location: "The location to change; required when the variant keeps locations (a new name " +
    "adds a location), omitted when it does not",
})).meta({
  id: "CreateStockAdjustmentBody",
  description: "A change of stock; refused (409) if it would take a count below zero, unless " +
    "the organisation allows negative stock",
});
setExamples(CreateStockAdjustmentBody, {
  location: "Main store",
  delta: -24,
  reason: "used_in_production",
  reference: "JOB-1042",
});
export type CreateStockAdjustmentBody = z.infer<typeof CreateStockAdjustmentBody>;

export const STOCK_ADJUSTMENT_SORT_FIELDS = ["createdAt", "delta"] as const;

export const ListStockAdjustmentsQuery = offsetListQuery({
  sortFields: STOCK_ADJUSTMENT_SORT_FIELDS,
  named: described({
    reason: StockReason.optional(),
    location: z.string().max(100, "Must be at most 100 characters").optional(),
  }, { reason: "Only adjustments for this reason", location: "Only this location" }),
});
export type ListStockAdjustmentsQuery = z.infer<typeof ListStockAdjustmentsQuery>;

export const stockEvents = defineEvents("catalogue", "garments.read", {
  "garment_variant.stock_adjusted": {
    summary: "A variant's stock changed (one event per ledger row)",
    data: StockAdjustment,
  },
});

export const stockOperations = operations("Stock ledger", {
  createStockAdjustment: {
    method: "POST",
    path: "/v1/garment-variants/{garmentVariantId}/stock-adjustments",
    scope: "garments.write",
    summary: "Add or take away stock; concurrent adjustments never lose one another",
    body: CreateStockAdjustmentBody,
    responses: { 201: StockAdjustment },
    events: ["garment_variant.stock_adjusted"],
  },
  listStockAdjustments: {
    method: "GET",
    path: "/v1/garment-variants/{garmentVariantId}/stock-adjustments",
    scope: "garments.read",
    summary: "The variant's stock ledger, newest first unless sorted otherwise",
    query: ListStockAdjustmentsQuery,
    responses: { 200: page(StockAdjustment) },
    examples: { query: { reason: "received", limit: "50" } },
  },
});

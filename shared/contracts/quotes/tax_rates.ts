/** Tax rates: what a quote's GST (or VAT, …) is computed with; one is the default. */
import { z } from "zod";
import { DateTime, page, Text, Uuid } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, Flag } from "./values.ts";

export const TaxRate = z.object({
  id: Uuid,
  name: z.string(),
  ratePct: z.number(),
  isDefault: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "TaxRate" });
export type TaxRate = z.infer<typeof TaxRate>;

export const CreateTaxRateBody = z.strictObject({
  name: Text(100),
  ratePct: Amount(4, { max: 100 }),
  isDefault: Flag.optional(),
}).meta({ id: "CreateTaxRateBody" });
export type CreateTaxRateBody = z.infer<typeof CreateTaxRateBody>;

export const TAX_RATE_SORT_FIELDS = ["createdAt", "name", "ratePct"] as const;

export const ListTaxRatesQuery = offsetListQuery({ sortFields: TAX_RATE_SORT_FIELDS });
export type ListTaxRatesQuery = z.infer<typeof ListTaxRatesQuery>;

export const taxRateEvents = defineEvents("quotes", "quotes.read", {
  "tax_rate.created": { summary: "A tax rate was created", data: TaxRate },
  "tax_rate.updated": {
    summary: "A tax rate changed (for example, stopped being the default)",
    data: TaxRate,
  },
});

export const taxRateOperations = operations("Tax rates", {
  listTaxRates: {
    method: "GET",
    path: "/v1/tax-rates",
    scope: "quotes.read",
    summary:
      "List tax rates, the default first unless sorted otherwise; GST 10 % until another is made the default",
    query: ListTaxRatesQuery,
    responses: { 200: page(TaxRate) },
    // The first read of an organisation without a default creates GST 10 %.
    events: ["tax_rate.created"],
  },
  createTaxRate: {
    method: "POST",
    path: "/v1/tax-rates",
    scope: "quotes.write",
    summary: "Create a tax rate, optionally as the organisation's default",
    body: CreateTaxRateBody,
    responses: { 201: TaxRate },
    events: ["tax_rate.created", "tax_rate.updated"],
  },
});

/** Tax rates: what a quote's GST (or VAT, …) is computed with; one is the default. */
import { z } from "zod";
import { DateTime, described, page, setExamples, Text, Uuid } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, Flag } from "./values.ts";

/** One description per field, for the tax rate and its create body. */
const TAX_RATE_DESCRIPTIONS = {
  id: "The tax rate's id",
  name: "Name printed on quotes (`GST`, `VAT`)",
  ratePct: "The rate in percent, 0–100, up to 4 decimals",
  isDefault: "Whether quotes that name no tax rate use this one; making one the default " +
    "unsets the previous",
  createdAt: "When the tax rate was created",
  updatedAt: "When the tax rate last changed",
};

export const TaxRate = z.object(described({
  id: Uuid,
  name: z.string(),
  ratePct: z.number(),
  isDefault: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, TAX_RATE_DESCRIPTIONS)).meta({ id: "TaxRate", description: "A rate quotes compute tax with" });
export type TaxRate = z.infer<typeof TaxRate>;
setExamples(TaxRate, {
  id: "0192f4a0-3e4d-7f50-a162-7c8d9e0f1a23",
  name: "GST",
  ratePct: 10,
  isDefault: true,
  createdAt: "2026-01-12T23:38:55.410Z",
  updatedAt: "2026-01-12T23:38:55.410Z",
});

export const CreateTaxRateBody = z.strictObject(described({
  name: Text(100),
  ratePct: Amount(4, { max: 100 }),
  isDefault: Flag.optional(),
}, TAX_RATE_DESCRIPTIONS)).meta({
  id: "CreateTaxRateBody",
  description: "A new tax rate; it is the default only when `isDefault` is true",
});
export type CreateTaxRateBody = z.infer<typeof CreateTaxRateBody>;
setExamples(CreateTaxRateBody, { name: "GST free", ratePct: 0 });

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
    examples: { query: { sortField: "name", sortDirection: "asc" } },
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
    examples: {
      responses: {
        201: {
          id: "0193a1c4-2b7e-7d01-8e6f-0a9b8c7d6e5f",
          name: "GST free",
          ratePct: 0,
          isDefault: false,
          createdAt: "2026-03-02T11:20:07.645Z",
          updatedAt: "2026-03-02T11:20:07.645Z",
        },
      },
    },
  },
});

import type { taxRateOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createTaxRate, listTaxRates } from "../store/tax_rates.ts";

/** `/v1/tax-rates`: the organisation's tax rates; GST 10 % is created the first time it is needed. */
export function taxRateRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof taxRateOperations> {
  return {
    listTaxRates: async ({ query, organizationId }) => ({
      data: await listTaxRates(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    createTaxRate: async ({ body, organizationId }) => ({
      status: 201,
      data: await createTaxRate(sql, organizationId, body),
      message: "Tax rate created",
    }),
  };
}

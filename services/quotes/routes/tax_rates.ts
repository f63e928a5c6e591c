import { Hono } from "hono";
import { CreateTaxRateBody, NoQuery } from "@printshop/shared/contracts";
import { created, ok, readBody, readQuery } from "@printshop/shared/http";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createTaxRate, listTaxRates } from "../store/tax_rates.ts";

/** `/v1/tax-rates`: the organisation's tax rates; GST 10 % is created the first time it is needed. */
export function taxRateRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.get("/v1/tax-rates", async (c) => {
    readQuery(c, NoQuery);
    return ok(c, await listTaxRates(sql, c.get("auth").organizationId));
  });

  app.post("/v1/tax-rates", async (c) => {
    const input = await readBody(c, CreateTaxRateBody);
    const rate = await createTaxRate(sql, c.get("auth").organizationId, input);
    return created(c, rate, "Tax rate created");
  });

  return app;
}

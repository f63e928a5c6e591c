import type { Hono } from "hono";
import { quotesContract } from "@printshop/shared/contracts/quotes";
import { createServiceApp } from "@printshop/shared/service-app";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDefinition, ServiceDeps } from "@printshop/shared/service-main";
import { type Config, ConfigSchema } from "./config.ts";
import { quoteRoutes } from "./routes/quotes.ts";
import { groupRoutes } from "./routes/groups.ts";
import { lineRoutes } from "./routes/lines.ts";
import { variantRoutes } from "./routes/variants.ts";
import { decorationRoutes } from "./routes/decorations.ts";
import { markupGroupRoutes } from "./routes/markup_groups.ts";
import { taxRateRoutes } from "./routes/tax_rates.ts";
import { previewRoutes } from "./routes/preview.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  return createServiceApp(quotesContract, deps, {
    ...quoteRoutes(deps),
    ...previewRoutes(deps),
    ...groupRoutes(deps),
    ...lineRoutes(deps),
    ...variantRoutes(deps),
    ...decorationRoutes(deps),
    ...markupGroupRoutes(deps),
    ...taxRateRoutes(deps),
  });
}

/** The service as its process (main.ts) and its tests start it. */
export const quotesService: ServiceDefinition<typeof ConfigSchema> = {
  service: quotesContract.service,
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
};

import type { Hono } from "hono";
import { catalogueContract } from "@printshop/shared/contracts/catalogue";
import { createServiceApp } from "@printshop/shared/service-app";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDefinition, ServiceDeps } from "@printshop/shared/service-main";
import { type Config, ConfigSchema } from "./config.ts";
import { catalogueItemRoutes } from "./routes/items.ts";
import { variantRoutes } from "./routes/variants.ts";
import { stockRoutes } from "./routes/stock.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { prebuiltItemRoutes } from "./routes/prebuilt_items.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  return createServiceApp(catalogueContract, deps, {
    ...catalogueItemRoutes(deps),
    ...variantRoutes(deps),
    ...stockRoutes(deps),
    ...settingsRoutes(deps),
    ...prebuiltItemRoutes(deps),
  });
}

/** The service as its process (main.ts) and its tests start it. */
export const catalogueService: ServiceDefinition<typeof ConfigSchema> = {
  service: catalogueContract.service,
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
};

import type { Hono } from "hono";
import { crmContract } from "@printshop/shared/contracts/crm";
import { createServiceApp } from "@printshop/shared/service-app";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDefinition, ServiceDeps } from "@printshop/shared/service-main";
import { type Config, ConfigSchema } from "./config.ts";
import { customerRoutes } from "./routes/customers.ts";
import { customFieldRoutes } from "./routes/custom_fields.ts";
import { vendorRoutes } from "./routes/vendors.ts";
import { taskRoutes } from "./routes/tasks.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  return createServiceApp(crmContract, deps, {
    ...customerRoutes(deps),
    ...customFieldRoutes(deps),
    ...vendorRoutes(deps),
    ...taskRoutes(deps),
  });
}

/** The service as its process (main.ts) and its tests start it. */
export const crmService: ServiceDefinition<typeof ConfigSchema> = {
  service: crmContract.service,
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
};

import type { Hono } from "hono";
import { proofsContract } from "@printshop/shared/contracts/proofs";
import { createServiceApp } from "@printshop/shared/service-app";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDefinition, ServiceDeps } from "@printshop/shared/service-main";
import { type Config, ConfigSchema } from "./config.ts";
import { mockRoutes } from "./routes/mocks.ts";
import { proofRoutes } from "./routes/proofs.ts";
import { itemLinkRoutes } from "./routes/item_links.ts";
import { addInternalMailRoute, mailRoutes } from "./routes/mail.ts";
import { addApprovalPage } from "./routes/approval.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  const app = createServiceApp(proofsContract, deps, {
    ...mockRoutes(deps),
    ...proofRoutes(deps),
    ...itemLinkRoutes(deps),
    ...mailRoutes(deps),
  });
  addInternalMailRoute(app, deps);
  addApprovalPage(app, deps);
  return app;
}

/** The service as its process (main.ts) and its tests start it. */
export const proofsService: ServiceDefinition<typeof ConfigSchema> = {
  service: proofsContract.service,
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
};

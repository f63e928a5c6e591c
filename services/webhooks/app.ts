import type { Hono } from "hono";
import { createServiceApp, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";

/** The webhooks service. Its business routes arrive with their own issues; until then it serves health. */
export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  return createServiceApp({
    service: "webhooks",
    logger: deps.logger,
    contextKey: deps.contextKey,
    ready: async () => {
      await deps.sql`SELECT 1`;
    },
  });
}

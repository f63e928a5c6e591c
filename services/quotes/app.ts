import type { Hono } from "hono";
import { createServiceApp, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { quoteRoutes } from "./routes/quotes.ts";
import { groupRoutes } from "./routes/groups.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  const app = createServiceApp({
    service: "quotes",
    logger: deps.logger,
    contextKey: deps.contextKey,
    ready: async () => {
      await deps.sql`SELECT 1`;
    },
  });
  app.route("/", quoteRoutes({ sql: deps.sql, pageSizeMax: deps.config.PAGE_SIZE_MAX }));
  app.route("/", groupRoutes({ sql: deps.sql }));
  return app;
}

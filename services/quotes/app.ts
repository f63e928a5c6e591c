import type { Hono } from "hono";
import { createServiceApp, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { quoteRoutes } from "./routes/quotes.ts";
import { groupRoutes } from "./routes/groups.ts";
import { lineRoutes } from "./routes/lines.ts";
import { decorationRoutes } from "./routes/decorations.ts";
import { markupGroupRoutes } from "./routes/markup_groups.ts";
import { taxRateRoutes } from "./routes/tax_rates.ts";

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  const app = createServiceApp({
    service: "quotes",
    logger: deps.logger,
    contextKey: deps.contextKey,
    ready: async () => {
      await deps.sql`SELECT 1`;
    },
  });
  const { sql } = deps;
  app.route("/", quoteRoutes({ sql, pageSizeMax: deps.config.PAGE_SIZE_MAX }));
  app.route("/", groupRoutes({ sql }));
  app.route("/", lineRoutes({ sql }));
  app.route("/", decorationRoutes({ sql }));
  app.route("/", markupGroupRoutes({ sql }));
  app.route("/", taxRateRoutes({ sql }));
  return app;
}

import { loadConfigOrExit } from "@printshop/shared/config";
import { createLogger } from "@printshop/shared/log";
import { openDatabase, type Sql } from "@printshop/shared/db";
import { importContextKey } from "@printshop/shared/internal-context";
import { onShutdown } from "@printshop/shared/lifecycle";
import { ConfigSchema } from "./config.ts";
import { createGatewayApp } from "./app.ts";
import { createAdminApp } from "./admin_app.ts";

const config = loadConfigOrExit(ConfigSchema);
const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: "gateway" } });
let sql: Sql;
try {
  sql = await openDatabase(
    config.DATABASE_URL,
    "gateway",
    new URL("./migrations/", import.meta.url),
    logger,
    {
      applicationName: "gateway",
    },
  );
} catch (error) {
  logger.error("database unavailable at start", { error: String(error) });
  Deno.exit(1);
}
const contextKey = await importContextKey(config.INTERNAL_SECRET);

const publicServer = Deno.serve({
  hostname: config.HOST,
  port: config.PORT,
  onListen: ({ hostname, port }) => logger.info("listening", { hostname, port, api: "public" }),
}, createGatewayApp({ config, sql, logger, contextKey }).fetch);

const adminServer = Deno.serve(
  {
    hostname: config.ADMIN_HOST,
    port: config.ADMIN_PORT,
    onListen: ({ hostname, port }) => logger.info("listening", { hostname, port, api: "admin" }),
  },
  createAdminApp({
    sql,
    logger,
    adminToken: config.PLATFORM_ADMIN_TOKEN,
    defaultRequestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
  }).fetch,
);

onShutdown(async () => {
  await Promise.all([publicServer.shutdown(), adminServer.shutdown()]);
  await sql.end({ timeout: 5 });
});

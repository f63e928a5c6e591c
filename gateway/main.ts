import { loadConfigOrExit } from "@printshop/shared/config";
import { createLogger } from "@printshop/shared/log";
import { openDatabase, type Sql } from "@printshop/shared/db";
import { importContextKey } from "@printshop/shared/internal-context";
import { onShutdown } from "@printshop/shared/lifecycle";
import { startProcessEvents } from "@printshop/shared/events";
import { ConfigSchema } from "./config.ts";
import { createGatewayApp } from "./app.ts";
import { createAdminApp } from "./admin_app.ts";
import { Authenticator } from "./auth.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { createPartnerTokenVerifier } from "./partner_tokens.ts";
import { startIdempotencyPurge } from "./idempotency.ts";

const config = loadConfigOrExit(ConfigSchema);
const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: "gateway" } });
let sql: Sql;
try {
  sql = await openDatabase(
    config.DATABASE_URL,
    "gateway",
    new URL("./migrations/", import.meta.url),
    logger,
    // The platform track gives the gateway an outbox, for credential events.
    { applicationName: "gateway" },
  );
} catch (error) {
  logger.error("database unavailable at start", { error: String(error) });
  Deno.exit(1);
}
const events = await startProcessEvents(config, sql, "gateway", logger);
const contextKey = await importContextKey(config.INTERNAL_SECRET);

const authenticator = new Authenticator(sql, {
  ...(config.PARTNER_JWKS_URL && config.PARTNER_TOKEN_ISSUER && config.PARTNER_TOKEN_AUDIENCE
    ? {
      verifyPartnerToken: createPartnerTokenVerifier({
        jwksUrl: config.PARTNER_JWKS_URL,
        issuer: config.PARTNER_TOKEN_ISSUER,
        audience: config.PARTNER_TOKEN_AUDIENCE,
      }),
    }
    : {}),
});
const stopPurge = startIdempotencyPurge(sql, logger);

const publicServer = Deno.serve(
  {
    hostname: config.HOST,
    port: config.PORT,
    onListen: ({ hostname, port }) => logger.info("listening", { hostname, port, api: "public" }),
  },
  createGatewayApp({
    config,
    sql,
    logger,
    contextKey,
    authenticator,
    rateLimiter: new RateLimiter(sql),
  }).fetch,
);

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
    onCredentialsChanged: () => authenticator.forgetAll(),
  }).fetch,
);

onShutdown(async () => {
  stopPurge();
  await Promise.all([publicServer.shutdown(), adminServer.shutdown()]);
  await events.stop();
  await sql.end({ timeout: 5 });
});

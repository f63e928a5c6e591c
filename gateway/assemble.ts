import type { Hono } from "hono";
import type { Logger } from "@printshop/shared/log";
import type { RequestVariables } from "@printshop/shared/service-defaults";
import { openDatabase, type Sql } from "@printshop/shared/db";
import { assertRuntimeRole } from "@printshop/shared/db/tenancy";
import type { ContextKey } from "@printshop/shared/internal-context";
import type { Config } from "./config.ts";
import { createGatewayApp, type GatewayEnv } from "./app.ts";
import { createAdminApp } from "./admin_app.ts";
import { Authenticator } from "./auth.ts";
import { RateLimiter } from "./rate_limiter.ts";
import { createPartnerTokenVerifier } from "./partner_tokens.ts";

/** The gateway's numbered migrations (its API keys, organisations, idempotency records). */
export const GATEWAY_MIGRATIONS: URL = new URL("./migrations/", import.meta.url);

/**
 * The gateway's pool, as its process (`main.ts`, migrations applied at start) and its Deno
 * Deploy app (`deploy.ts`, migrations only checked) open it. A database it cannot use stops it.
 */
export async function openGatewayDatabase(
  config: Config,
  logger: Logger,
  migrations: "apply" | "verify",
): Promise<Sql> {
  try {
    const sql = await openDatabase(
      config.DATABASE_URL,
      "gateway",
      GATEWAY_MIGRATIONS,
      logger,
      // The platform track gives the gateway an outbox, for credential events.
      { applicationName: "gateway", migrationUrl: config.MIGRATION_DATABASE_URL, migrations },
    );
    await assertRuntimeRole(sql, "gateway");
    return sql;
  } catch (error) {
    logger.error("cannot start on this database", { error: String(error) });
    Deno.exit(1);
  }
}

export interface GatewayApps {
  /** The public API. */
  app: Hono<GatewayEnv>;
  /** The operators' API (`/admin/…`), guarded by PLATFORM_ADMIN_TOKEN. */
  admin: Hono<{ Variables: RequestVariables }>;
}

/** The public and admin apps over one pool, sharing the authenticator's cache of credentials. */
export function gatewayApps(
  deps: {
    config: Config;
    sql: Sql;
    logger: Logger;
    contextKey: ContextKey;
    publicUrl: () => string;
    clientToken?: string;
  },
): GatewayApps {
  const { config, sql, logger, contextKey } = deps;
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
  const app = createGatewayApp({
    config,
    sql,
    logger,
    contextKey,
    authenticator,
    rateLimiter: new RateLimiter(sql),
    publicUrl: deps.publicUrl,
    ...(deps.clientToken !== undefined ? { clientToken: deps.clientToken } : {}),
  });
  const admin = createAdminApp({
    sql,
    logger,
    adminToken: config.PLATFORM_ADMIN_TOKEN,
    defaultRequestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
    onCredentialsChanged: () => authenticator.forgetAll(),
    proofs: { url: config.PROOFS_URL, contextKey },
  });
  return { app, admin };
}

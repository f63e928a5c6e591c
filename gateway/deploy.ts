import { Hono } from "hono";
import { loadConfigOrExit } from "@printshop/shared/config";
import { createLogger } from "@printshop/shared/log";
import { importContextKey } from "@printshop/shared/internal-context";
import { onShutdown } from "@printshop/shared/lifecycle";
import { startProcessEvents } from "@printshop/shared/events";
import { addKickRoute, KICK_PATH, settleInOrder } from "@printshop/shared/background";
import { kickAfterWrites, serveOnPlatform } from "@printshop/shared/service-main";
import { ConfigSchema } from "./config.ts";
import { gatewayApps, openGatewayDatabase } from "./assemble.ts";
import { purgeIdempotencyOnce } from "./idempotency.ts";

/**
 * The gateway as one app on Deno Deploy (README "Deno Deploy"). The platform's edge terminates
 * TLS and connections and gives each request's client address (`remoteAddr`), so there is no
 * connection guard here and no second port: the admin API answers under `/admin/` on the same
 * one, behind PLATFORM_ADMIN_TOKEN as ever. Migrations ran in the pre-deploy command; the
 * relay of credential events and the idempotency purge run on kicks and on the cron below.
 */
const config = loadConfigOrExit(ConfigSchema);
const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: "gateway" } });

async function start(): Promise<() => Promise<void>> {
  const publicUrl = config.PUBLIC_URL;
  if (!publicUrl) {
    logger.error("PUBLIC_URL is required on Deno Deploy: links sent to customers point at it");
    Deno.exit(1);
  }
  const sql = await openGatewayDatabase(config, logger, "verify");
  const events = await startProcessEvents(config, sql, "gateway", logger, {
    onDemand: true,
    verifyMigrations: true,
  });
  const contextKey = await importContextKey(config.INTERNAL_SECRET);
  const { app, admin } = gatewayApps({
    config,
    sql,
    logger,
    contextKey,
    publicUrl: () => publicUrl,
  });
  const stopping = new AbortController();
  const drain = (): Promise<void> =>
    settleInOrder(
      [
        { name: "outbox relay", work: events.relay },
        { name: "idempotency purge", work: { settle: () => purgeIdempotencyOnce(sql, logger) } },
      ],
      logger,
      undefined,
      stopping.signal,
    );
  const kick = addKickRoute(new Hono(), contextKey, drain);
  // Only the admin API writes the gateway's outbox (credential events): its writes kick the relay.
  const adminThenKick = kickAfterWrites(admin.fetch, () => events.relay.settle());
  const handler = (request: Request, info: Deno.ServeHandlerInfo): Response | Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (path === KICK_PATH) return kick.fetch(request, info);
    if (path === "/admin" || path.startsWith("/admin/")) return adminThenKick(request, info);
    return app.fetch(request, info);
  };
  const onListen = ({ hostname, port }: Deno.NetAddr): void =>
    logger.info("listening", { hostname, port, background: "on-demand" });
  const server = serveOnPlatform(config, onListen, handler);
  onShutdown([
    // First: a tick's request waits for its drain, and the server's shutdown for that request.
    { name: "ticks in progress", run: () => stopping.abort() },
    { name: "requests in flight", run: () => server.shutdown() },
    { name: "event bus", run: () => events.stop() },
    { name: "database pool", run: () => sql.end({ timeout: 1 }) },
  ], logger);
  return drain;
}

const started = start();
// At the top level, before any await: the platform finds crons by evaluating this module.
Deno.cron("gateway background work", "* * * * *", async () => await (await started)());

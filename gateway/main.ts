import { loadConfigOrExit } from "@printshop/shared/config";
import { createLogger } from "@printshop/shared/log";
import { importContextKey } from "@printshop/shared/internal-context";
import { onShutdown } from "@printshop/shared/lifecycle";
import { startHeapCompaction } from "@printshop/shared/heap-compaction";
import { startProcessEvents } from "@printshop/shared/events";
import { ConfigSchema } from "./config.ts";
import { gatewayApps, openGatewayDatabase } from "./assemble.ts";
import { startIdempotencyPurge } from "./idempotency.ts";
import { startEdgeGuard } from "./edge/guard.ts";
import { privateListenAt, serveResiliently } from "./edge/resilient_server.ts";
import { newEdgeToken } from "./edge/client_stamp.ts";
import { isLoopback, publicHost } from "./public_url.ts";
import { capacity } from "./edge/capacity.ts";
import { readOpenFileLimit } from "@printshop/shared/open-files";
import { cidrMatcher } from "./domain/cidr.ts";

const config = loadConfigOrExit(ConfigSchema);
const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: "gateway" } });
const sql = await openGatewayDatabase(config, logger, "apply");
const events = await startProcessEvents(config, sql, "gateway", logger, {
  onDemand: config.BACKGROUND_WORK === "on-demand",
});
const contextKey = await importContextKey(config.INTERNAL_SECRET);
const stopPurge = startIdempotencyPurge(sql, logger);
// Start-up garbage given back before the edge listens, and a burst's once it ends, as every
// service does (shared/service_main.ts).
const compaction = startHeapCompaction();

// The app answers on a socket of its own (an abstract Unix socket on Linux); the public port is
// the edge, which guards each connection (deadlines, a connection cap, envelopes for heads it
// refuses), passes the bytes on and tells the app who the client is (edge/client_stamp.ts).
const clientToken = newEdgeToken();
const apps = gatewayApps({
  config,
  sql,
  logger,
  contextKey,
  publicUrl: () => publicUrl,
  clientToken,
});
const appServer = serveResiliently<Deno.Addr>(
  { ...privateListenAt(), name: "app", logger },
  apps.app.fetch,
);
const openFileLimit = await readOpenFileLimit(config.OPEN_FILE_LIMIT);
const room = capacity({
  openFileLimit,
  memoryBytes: config.CONNECTION_MEMORY_MB * 1024 * 1024,
  perAddressPercent: config.CONNECTIONS_PER_ADDRESS_PERCENT,
  ...(config.MAX_CONNECTIONS !== undefined ? { configured: config.MAX_CONNECTIONS } : {}),
});
if (openFileLimit === null && config.MAX_CONNECTIONS === undefined) {
  logger.warn("descriptor limit unknown; capping connections as if it were the usual", {
    assumedOpenFiles: room.openFiles,
    maxConnections: room.maxConnections,
    // Deno reads /proc/self/limits only with --allow-all; --allow-read is not enough.
    fix: "set OPEN_FILE_LIMIT (the launcher and the container's entrypoint do), or MAX_CONNECTIONS",
  });
} else if (config.MAX_CONNECTIONS !== undefined && config.MAX_CONNECTIONS > room.fitsDescriptors) {
  logger.warn("MAX_CONNECTIONS is more than the descriptor limit allows", {
    openFiles: room.openFiles,
    fits: room.fitsDescriptors,
  });
}
const edge = startEdgeGuard({
  hostname: config.HOST,
  port: config.PORT,
  upstream: () => appServer.addr,
  clientToken,
  limits: {
    headerTimeoutMs: config.HEADER_TIMEOUT_MS,
    bodyTimeoutMs: config.BODY_TIMEOUT_MS,
    idleTimeoutMs: config.IDLE_TIMEOUT_MS,
    maxConnections: room.maxConnections,
    maxLinks: room.maxLinks,
    maxPerAddress: room.maxPerAddress,
    highWater: room.highWater,
    maxHeaderBytes: config.MAX_HEADER_BYTES,
    maxUrlBytes: config.MAX_URL_BYTES,
  },
  trustedProxy: cidrMatcher(config.TRUSTED_PROXIES),
  logger,
});
/** What links sent to customers point at: PUBLIC_URL, else the port this edge listens on. */
const publicUrl = config.PUBLIC_URL?.replace(/\/+$/, "") ??
  `http://${publicHost(config.HOST)}:${edge.addr.port}`;
if (!config.PUBLIC_URL && !isLoopback(config.HOST)) {
  logger.warn("PUBLIC_URL is unset: approval links sent to customers point at this address", {
    publicUrl,
    fix: "set PUBLIC_URL to the address customers reach the gateway at",
  });
}
logger.info("listening", {
  hostname: edge.addr.hostname,
  port: edge.addr.port,
  api: "public",
  maxConnections: room.maxConnections,
  boundBy: room.boundBy,
  openFiles: room.openFiles,
  maxPerAddress: room.maxPerAddress,
  maxLinks: room.maxLinks,
  trustedProxies: config.TRUSTED_PROXIES.length,
});

// For operators, on loopback unless ADMIN_HOST says otherwise: not behind the edge, but it comes
// back if it ever stops.
const adminServer = serveResiliently(
  {
    hostname: config.ADMIN_HOST,
    port: config.ADMIN_PORT,
    name: "admin",
    logger,
    onListen: ({ hostname, port }) => logger.info("listening", { hostname, port, api: "admin" }),
  },
  apps.admin.fetch,
);

onShutdown([
  { name: "idempotency purge", run: () => stopPurge() },
  { name: "heap compaction", run: () => compaction.stop() },
  {
    name: "requests in flight",
    run: async () => {
      await Promise.all([edge.shutdown(() => appServer.shutdown()), adminServer.shutdown()]);
    },
  },
  { name: "event bus", run: () => events.stop() },
  { name: "database pool", run: () => sql.end({ timeout: 1 }) },
], logger);

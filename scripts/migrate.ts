/**
 * Applies one app's migrations and the event bus's, as the owner role, then exits: the pre-deploy
 * command of each Deno Deploy app (its deno.json's `deploy.predeploy`), run once per revision
 * before any instance serves it. `deno run -A scripts/migrate.ts <app>`, with DATABASE_URL and
 * MIGRATION_DATABASE_URL set (KAFKA_BROKERS set: no bus tables to migrate).
 *
 * Migrations must let the revision before keep running (add, then backfill, then use; drop a
 * column a release later): its instances serve until the new one is routed.
 */
import { z } from "zod";
import {
  databaseConfig,
  eventBusConfig,
  loadConfigOrExit,
  logLevel,
} from "@printshop/shared/config";
import { createLogger } from "@printshop/shared/log";
import { openDatabase } from "@printshop/shared/db";
import { openEventBus } from "@printshop/shared/events";

/** Each app's schema and migrations, from the definition its entry points start from. */
const APPS: Record<string, () => Promise<{ schema: string; migrations: URL }>> = {
  gateway: async () => ({
    schema: "gateway",
    migrations: (await import("../gateway/assemble.ts")).GATEWAY_MIGRATIONS,
  }),
  quotes: async () => of((await import("../services/quotes/app.ts")).quotesService),
  catalogue: async () => of((await import("../services/catalogue/app.ts")).catalogueService),
  crm: async () => of((await import("../services/crm/app.ts")).crmService),
  proofs: async () => of((await import("../services/proofs/app.ts")).proofsService),
  webhooks: async () => of((await import("../services/webhooks/app.ts")).webhooksService),
};

function of(definition: { service: string; migrations: URL }): { schema: string; migrations: URL } {
  return { schema: definition.service, migrations: definition.migrations };
}

const app = Deno.args[0] ?? "";
if (!(app in APPS)) {
  console.error(`usage: scripts/migrate.ts <${Object.keys(APPS).join("|")}>`);
  Deno.exit(2);
}
const config = loadConfigOrExit(
  z.object({ ...databaseConfig, ...eventBusConfig, LOG_LEVEL: logLevel() }),
);
const logger = createLogger({ level: config.LOG_LEVEL, fields: { service: app, task: "migrate" } });
try {
  const { schema, migrations } = await APPS[app]!();
  const sql = await openDatabase(config.DATABASE_URL, schema, migrations, logger, {
    applicationName: `${app} migrations`,
    migrationUrl: config.MIGRATION_DATABASE_URL,
    watch: false,
    max: 1,
  });
  await sql.end();
  // The embedded bus migrates its own tables as it opens; Kafka has none.
  const bus = await openEventBus(config, logger);
  await bus.close();
  logger.info("migrations done", { schema });
} catch (error) {
  logger.error("migrations failed", { error: String(error) });
  Deno.exit(1);
}

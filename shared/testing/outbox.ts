/**
 * What the relay's and the on-demand tests share: a new database with the quotes schema (and its
 * outbox) and an embedded bus on it, and events written to that outbox one transaction each.
 */
import { openDatabase, type OpenOptions, type Sql } from "../db/mod.ts";
import { createLogger } from "../log.ts";
import { writeEvent } from "../outbox.ts";
import type { EventBus } from "../events/bus.ts";
import { createEmbeddedBus, type EmbeddedBusOptions } from "../events/embedded_bus.ts";
import { createTestDatabase } from "./db.ts";

const logger = createLogger({ level: "error" });
const NO_MIGRATIONS = new URL("./no_such_folder/", import.meta.url);

export interface OutboxFixture {
  sql: Sql;
  bus: EventBus;
  url: string;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function outboxFixture(
  bus: Partial<Omit<EmbeddedBusOptions, "url" | "logger">> = {},
  open: OpenOptions = {},
): Promise<OutboxFixture> {
  const db = await createTestDatabase();
  const sql = await openDatabase(db.url, "quotes", NO_MIGRATIONS, logger, open);
  const embedded = await createEmbeddedBus({ url: db.url, logger, ...bus });
  return {
    sql,
    bus: embedded,
    url: db.url,
    async [Symbol.asyncDispose]() {
      await embedded.close();
      await sql.end();
      await db.drop();
    },
  };
}

/** `n` `quote.deleted` events of `organizationId`, each committed on its own; their ids. */
export async function writeTestEvents(
  sql: Sql,
  organizationId: string,
  n: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    await sql.begin(async (tx) => {
      ids.push(
        await writeEvent(tx, {
          organizationId,
          type: "quote.deleted",
          aggregateId: crypto.randomUUID(),
          payload: { id: crypto.randomUUID() },
        }),
      );
    });
  }
  return ids;
}

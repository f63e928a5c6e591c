import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, type Sql } from "../db/mod.ts";
import { uuidv7 } from "../ids.ts";
import { createLogger } from "../log.ts";
import { sleep, waitFor } from "../net.ts";
import { createTestDatabase } from "../testing/db.ts";
import type { BusEvent } from "./bus.ts";
import { createEmbeddedBus, type EmbeddedBusOptions } from "./embedded_bus.ts";
import { defineTransportSuite } from "./transport_suite.ts";

const logger = createLogger({ level: "error" });

defineTransportSuite("createEmbeddedBus()", async () => {
  const db = await createTestDatabase();
  const open = () => createEmbeddedBus({ url: db.url, logger });
  const bus = await open();
  return {
    bus,
    newBus: open,
    cleanup: async () => {
      await bus.close();
      await db.drop();
    },
  };
});

/** Behaviour of this transport alone: its safety net under LISTEN/NOTIFY and what it costs. */

function quoteDeleted(organizationId: string): BusEvent {
  const id = crypto.randomUUID();
  return {
    id: uuidv7(),
    type: "quote.deleted",
    organizationId,
    aggregateId: id,
    occurredAt: new Date().toISOString(),
    data: { id },
  };
}

const QUOTES = "printshop.quotes";

/** A bus on a fresh database, a pool to reach it directly, and a consumer's record of events. */
async function setup(options: Partial<EmbeddedBusOptions> = {}) {
  const db = await createTestDatabase();
  const bus = await createEmbeddedBus({ url: db.url, logger, ...options });
  const sql = connect(db.url, { schema: "eventbus", max: 2, applicationName: "bus-test" });
  const calls: BusEvent[][] = [];
  const subscription = await bus.subscribe({
    groupId: "test",
    topics: [QUOTES],
    handle: (events) => {
      calls.push(events);
      return Promise.resolve();
    },
  });
  const received = () => calls.flat().map((e) => e.id);
  return {
    bus,
    sql,
    calls,
    received,
    waitFor: (ids: string[], what: string) =>
      waitFor(what, () => Promise.resolve(ids.every((id) => received().includes(id))), 10_000),
    async [Symbol.asyncDispose]() {
      await subscription.stop();
      await bus.close();
      await sql.end();
      await db.drop();
    },
  };
}

/** Stores an event the way a publish does, but without its notification: as if it were lost. */
async function insertSilently(sql: Sql, event: BusEvent): Promise<void> {
  await sql`
    INSERT INTO messages (topic, id, organization_id, type, aggregate_id, occurred_at, data)
    VALUES (${QUOTES}, ${event.id}, ${event.organizationId}, ${event.type}, ${event.aggregateId},
            ${event.occurredAt}, ${sql.json(event.data as Parameters<typeof sql.json>[0])})`;
}

/** Drops the bus's LISTEN connection, as a network blip or a server restart would. */
async function dropListener(sql: Sql): Promise<void> {
  const dropped = await sql`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'eventbus'
      AND query ILIKE 'listen%'`;
  assertEquals(dropped.length, 1, "one LISTEN connection");
}

Deno.test("createEmbeddedBus(): a consumer's safety poll picks up an event whose notification was lost", async () => {
  await using env = await setup({ pollIntervalMs: 50, idlePollMaxMs: 200 });
  const first = quoteDeleted(crypto.randomUUID());
  await env.bus.publish(QUOTES, [first]);
  await env.waitFor([first.id], "the notified event");
  await sleep(500); // idle long enough for the poll to back off to its cap
  const lost = quoteDeleted(crypto.randomUUID());
  await insertSilently(env.sql, lost);
  await env.waitFor([lost.id], "the event nobody was told about");
});

Deno.test("createEmbeddedBus(): a consumer looks for missed events as soon as its LISTEN connection is back", async () => {
  // No poll would run within the test: only the reconnection can find the event.
  await using env = await setup({ pollIntervalMs: 60_000, idlePollMaxMs: 60_000 });
  const first = quoteDeleted(crypto.randomUUID());
  await env.bus.publish(QUOTES, [first]);
  await env.waitFor([first.id], "the notified event");
  const missed = quoteDeleted(crypto.randomUUID());
  await insertSilently(env.sql, missed);
  await dropListener(env.sql);
  await env.waitFor([missed.id], "the event published while the connection was down");
  const later = quoteDeleted(crypto.randomUUID());
  await env.bus.publish(QUOTES, [later]);
  await env.waitFor([later.id], "an event notified on the new connection");
});

Deno.test("createEmbeddedBus(): a publish is one statement and a handled batch four", async () => {
  const db = await createTestDatabase();
  const publishing: string[] = [];
  const consuming: string[] = [];
  const publisher = await createEmbeddedBus({
    url: db.url,
    logger,
    onQuery: (text) => publishing.push(text),
  });
  const consumer = await createEmbeddedBus({
    url: db.url,
    logger,
    pollIntervalMs: 60_000,
    idlePollMaxMs: 60_000,
    onQuery: (text) => consuming.push(text),
  });
  const received: string[] = [];
  const subscription = await consumer.subscribe({
    groupId: "test",
    topics: [QUOTES, "printshop.crm"],
    handle: (events) => {
      received.push(...events.map((e) => e.id));
      return Promise.resolve();
    },
  });
  const committed = () => Promise.resolve(consuming.at(-1)?.trim() === "commit");
  try {
    // The consumer's first round ends with its hourly purge of old messages: let that round end
    // before anything is published, or a first event it already sees leaves the DELETE, not the
    // batch's COMMIT, as its last statement (what failed a CI run on a loaded machine).
    assert(subscription.settle, "an embedded subscription can be settled");
    await subscription.settle();
    const first = quoteDeleted(crypto.randomUUID());
    await publisher.publish(QUOTES, [first]);
    await waitFor("the first batch committed", async () => {
      return received.includes(first.id) && await committed();
    }, 10_000);

    publishing.length = 0;
    consuming.length = 0;
    const events = [quoteDeleted(crypto.randomUUID()), quoteDeleted(crypto.randomUUID())];
    await publisher.publish(QUOTES, events);
    assertEquals(publishing.length, 1, "lock, insert and notify in one statement");
    await waitFor("the second batch committed", async () => {
      return events.every((e) => received.includes(e.id)) && await committed();
    }, 10_000);
    const keywords = consuming.map((text) => text.trim().split(/\s+/)[0]!.toLowerCase());
    assertEquals(keywords, ["begin", "select", "update", "commit"], consuming.join("\n---\n"));
  } finally {
    await subscription.stop();
    await consumer.close();
    await publisher.close();
    await db.drop();
  }
});

Deno.test("createEmbeddedBus(): events published just after a batch gather into the next one", async () => {
  // A wide window, so that twenty publishes in a row surely fall within it.
  await using env = await setup({ gatherMs: 1_000 });
  const first = quoteDeleted(crypto.randomUUID());
  await env.bus.publish(QUOTES, [first]);
  await env.waitFor([first.id], "the first event");
  const next = Array.from({ length: 20 }, () => quoteDeleted(crypto.randomUUID()));
  for (const event of next) await env.bus.publish(QUOTES, [event]);
  await env.waitFor(next.map((e) => e.id), "twenty events published one by one");
  assert(env.calls.length <= 3, `handled in ${env.calls.length} batches, not one per publish`);
  assertEquals(env.received(), [first, ...next].map((e) => e.id), "in publish order");
});

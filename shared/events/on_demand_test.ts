/**
 * Background work on demand (Deno Deploy), against a real database: a relay and a consumer that
 * do not LISTEN move only when `settle()` asks (their own polls being far off), and a process
 * that only checks its schema's migrations refuses one that is behind.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, openDatabase, type Sql } from "../db/mod.ts";
import { settleInOrder } from "../background.ts";
import { uuidv7 } from "../ids.ts";
import { createLogger } from "../log.ts";
import { sleep, waitFor } from "../net.ts";
import { createTestDatabase } from "../testing/db.ts";
import { type OutboxFixture, outboxFixture, writeTestEvents } from "../testing/outbox.ts";
import type { BusEvent, BusSubscription, EventBus } from "./bus.ts";
import { createEmbeddedBus } from "./embedded_bus.ts";
import { type OutboxRelay, startOutboxRelay } from "./relay.ts";

const logger = createLogger({ level: "error" });
const QUOTES = "printshop.quotes";
/** Polls this far apart never run within a test: only `settle()` can move the loops. */
const NEVER = { pollIntervalMs: 60_000, idlePollMaxMs: 60_000 };
/** How long a loop is given to move by itself, when it should not. */
const QUIET_MS = 300;

/** The quotes schema (with its outbox) and an embedded bus that does not LISTEN, on a new database. */
const setup = (): Promise<OutboxFixture> =>
  outboxFixture({ listen: false, ...NEVER }, { watch: false });
const write = (sql: Sql, n: number): Promise<string[]> =>
  writeTestEvents(sql, crypto.randomUUID(), n);

async function unpublished(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
  return row!.n;
}

/** Connections of `application` waiting on a LISTEN: none may be open on demand. */
async function listening(sql: Sql, application: string): Promise<number> {
  const rows = await sql`
    SELECT 1 FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${application}
      AND query ILIKE 'listen%'`;
  return rows.length;
}

/** The bus, recording what is published through it. */
function recording(bus: EventBus): { bus: EventBus; published: BusEvent[] } {
  const published: BusEvent[] = [];
  return {
    published,
    bus: {
      transport: "embedded",
      publish: async (topic, events) => {
        await bus.publish(topic, events);
        published.push(...events);
      },
      subscribe: (options) => bus.subscribe(options),
      close: () => Promise.resolve(),
    },
  };
}

function quotesRelay(sql: Sql, bus: EventBus, onPublished: (count: number) => void) {
  return startOutboxRelay({
    sql,
    schema: "quotes",
    topic: QUOTES,
    bus,
    logger,
    listen: false,
    onPublished,
    ...NEVER,
  });
}

async function collect(bus: EventBus, groupId: string) {
  const seen: BusEvent[] = [];
  const subscription = await bus.subscribe({
    groupId,
    topics: [QUOTES],
    handle: (events) => {
      seen.push(...events);
      return Promise.resolve();
    },
  });
  assert(subscription.settle, "an embedded subscription can be settled");
  return { seen, subscription: subscription as Required<BusSubscription> };
}

Deno.test("a relay without LISTEN publishes a commit only when settle() asks, and says how many", async () => {
  await using env = await setup();
  const { bus, published } = recording(env.bus);
  const counts: number[] = [];
  const relay: OutboxRelay = await quotesRelay(env.sql, bus, (count) => counts.push(count));
  try {
    // Its first look at start (an empty outbox) is over: from here on, nothing moves it but us.
    await relay.settle();
    assertEquals(await listening(env.sql, "quotes"), 0, "no LISTEN connection");
    const ids = await write(env.sql, 2);
    await sleep(QUIET_MS);
    assertEquals(published.length, 0, "nothing published by itself: no LISTEN, no poll due");
    assertEquals(await unpublished(env.sql), 2);
    assertEquals(counts.length, 0);

    await relay.settle();
    assertEquals(published.map((e) => e.id), ids, "published by the time settle() resolves");
    assertEquals(counts, [2], "onPublished told of the batch");
    assertEquals(await unpublished(env.sql), 0, "and marked published");

    const more = await write(env.sql, 1);
    await sleep(QUIET_MS);
    assertEquals(published.length, 2, "again nothing by itself");
    await relay.settle();
    assertEquals(published.map((e) => e.id), [...ids, ...more]);
    assertEquals(counts, [2, 1]);

    await relay.settle();
    assertEquals(counts, [2, 1], "settling an empty outbox publishes nothing");
  } finally {
    await relay.stop();
  }
  // A stopped relay's settle() has nothing to wait for.
  await relay.settle();
});

Deno.test("a consumer without LISTEN reads a published event only when settle() asks", async () => {
  await using env = await setup();
  const { seen, subscription } = await collect(env.bus, "on-demand-consumer");
  try {
    // Its first look at start (creating its position) is over.
    await subscription.settle();
    assertEquals(await listening(env.sql, "eventbus"), 0, "no LISTEN connection");
    const organizationId = crypto.randomUUID();
    const event = (): BusEvent => ({
      id: uuidv7(),
      type: "quote.deleted",
      organizationId,
      aggregateId: crypto.randomUUID(),
      occurredAt: new Date().toISOString(),
      data: { id: crypto.randomUUID() },
    });
    const first = [event(), event()];
    await env.bus.publish(QUOTES, first);
    await sleep(QUIET_MS);
    assertEquals(seen.length, 0, "nothing read by itself: no LISTEN, no poll due");

    await subscription.settle();
    assertEquals(seen.map((e) => e.id), first.map((e) => e.id), "read by the time it resolves");

    const second = event();
    await env.bus.publish(QUOTES, [second]);
    await sleep(QUIET_MS);
    assertEquals(seen.length, 2, "again nothing by itself");
    await subscription.settle();
    await subscription.settle();
    assertEquals(
      seen.map((e) => e.id),
      [...first, second].map((e) => e.id),
      "each event once: the position moved with each settle",
    );
  } finally {
    await subscription.stop();
  }
  await subscription.settle();
});

Deno.test("on demand, settling the relay and then the consumer carries a commit to its consumer", async () => {
  await using env = await setup();
  const { seen, subscription } = await collect(env.bus, "on-demand-drain");
  const relay = await quotesRelay(env.sql, env.bus, () => {});
  const stages = [
    { name: "outbox relay", work: relay },
    { name: "consumer", work: subscription },
  ];
  try {
    await settleInOrder(stages, logger, 10_000);
    const ids = await write(env.sql, 3);
    await sleep(QUIET_MS);
    assertEquals(seen.length, 0);
    await settleInOrder(stages, logger, 10_000);
    assertEquals(seen.map((e) => e.id), ids, "one drain: relayed, then consumed");
  } finally {
    await relay.stop();
    await subscription.stop();
  }
});

/** A folder of `n` migrations, each creating table tN. */
async function migrationFolder(n: number): Promise<URL> {
  const path = await Deno.makeTempDir({ prefix: "printshop-verify-migrations-" });
  for (let version = 1; version <= n; version++) {
    await Deno.writeTextFile(
      `${path}/${String(version).padStart(4, "0")}_table_${version}.sql`,
      `CREATE TABLE t${version} (id integer PRIMARY KEY);`,
    );
  }
  return new URL(`file://${path}/`);
}

Deno.test("openDatabase() with migrations: verify opens a schema that is up to date and refuses one that is behind, applying nothing", async () => {
  const db = await createTestDatabase();
  const two = await migrationFolder(2);
  const three = await migrationFolder(3);
  const admin = connect(db.url, { schema: "public", max: 1 });
  try {
    await (await openDatabase(db.url, "verified", two, logger, { watch: false })).end();

    const opened = await openDatabase(db.url, "verified", two, logger, {
      watch: false,
      migrations: "verify",
    });
    try {
      const [row] = await opened<{ n: number }[]>`SELECT count(*)::int AS n FROM t2`;
      assertEquals(row?.n, 0, "a working pool on the schema");
    } finally {
      await opened.end();
    }

    await assert.rejects(
      openDatabase(db.url, "verified", three, logger, { watch: false, migrations: "verify" }),
      (error: Error) => {
        assert.match(error.message, /verified/, "names the schema");
        assert.match(error.message, /\b2\b/, "names the version applied");
        assert.match(error.message, /\b3\b/, "names the version needed");
        return true;
      },
    );
    // The refused pool is closed, not left holding a connection until its idle timeout.
    await waitFor("the refused pool's connection to close", async () => {
      const [open] = await admin<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'verified'`;
      return open!.n === 0;
    }, 5_000);
    const [t3] = await admin<{ t: string | null }[]>`SELECT to_regclass('verified.t3')::text AS t`;
    assertEquals(t3!.t, null, "the missing migration was not applied");
    const versions = await admin<{ version: number }[]>`
      SELECT version FROM verified.schema_migrations ORDER BY version`;
    assertEquals(versions.map((r) => r.version), [1, 2]);

    await assert.rejects(
      openDatabase(db.url, "never_migrated", two, logger, { watch: false, migrations: "verify" }),
      /never_migrated/,
      "a schema never migrated is refused too",
    );
    const [schema] = await admin<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'never_migrated'`;
    assertEquals(schema!.n, 0, "and verifying created nothing");
  } finally {
    await admin.end();
    await db.drop();
    await Deno.remove(new URL(two), { recursive: true });
    await Deno.remove(new URL(three), { recursive: true });
  }
});

Deno.test("createEmbeddedBus() with migrations: verify refuses a bus never migrated and opens one that was", async () => {
  const db = await createTestDatabase();
  try {
    await assert.rejects(
      createEmbeddedBus({ url: db.url, logger, migrations: "verify" }),
      /eventbus/,
    );
    await (await createEmbeddedBus({ url: db.url, logger })).close();
    const bus = await createEmbeddedBus({ url: db.url, logger, migrations: "verify" });
    await bus.close();
  } finally {
    await db.drop();
  }
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, openDatabase, type Sql, transaction } from "../db/mod.ts";
import { createLogger } from "../log.ts";
import { type OutboxFixture, outboxFixture, writeTestEvents } from "../testing/outbox.ts";
import { writeEvent } from "../outbox.ts";
import { sleep, waitFor } from "../net.ts";
import { type BusEvent, type EventBus, PublishRefusedError } from "./bus.ts";
import { outboxChannel, type OutboxRelay, type RelayOptions, startOutboxRelay } from "./relay.ts";

const logger = createLogger({ level: "error" });
const NO_MIGRATIONS = new URL("./no_such_folder/", import.meta.url);

const setup = (): Promise<OutboxFixture> => outboxFixture({ pollIntervalMs: 100 });
/** A relay's polls too slow to run within a test: only a wake can make it look. */
const NO_POLLS = { pollIntervalMs: 60_000, idlePollMaxMs: 60_000 } as const;
const write = writeTestEvents;

function collector(bus: EventBus, groupId: string) {
  const seen: BusEvent[] = [];
  const subscription = bus.subscribe({
    groupId,
    topics: ["printshop.quotes"],
    handle: (events) => {
      seen.push(...events);
      return Promise.resolve();
    },
  });
  return { seen, subscription };
}

/** The quotes service's relay (its outbox onto printshop.quotes) over `bus`, with overrides. */
function quotesRelay(
  sql: Sql,
  bus: EventBus,
  options: Partial<RelayOptions> = {},
): Promise<OutboxRelay> {
  return startOutboxRelay({
    sql,
    schema: "quotes",
    topic: "printshop.quotes",
    bus,
    logger,
    ...options,
  });
}

Deno.test("startOutboxRelay() publishes in write order and marks rows published", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  const relay = await quotesRelay(env.sql, env.bus, { batchSize: 7 });
  const { seen, subscription } = collector(env.bus, "relay-order");
  try {
    const ids = await write(env.sql, org, 30);
    await waitFor("30 events", () => Promise.resolve(seen.length >= 30), 10_000);
    assertEquals(seen.map((e) => e.id), ids);
    assertEquals(seen[0]!.type, "quote.deleted");
    assertEquals(seen[0]!.organizationId, org);
    // Consumers can see a batch before the relay's marking transaction commits.
    await waitFor("every row marked published", async () => {
      const [left] = await env.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
      return left!.n === 0;
    }, 5_000);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("a commit notifies its own schema's relay channel and no other", async () => {
  await using env = await setup();
  const crm = await openDatabase(env.url, "crm", NO_MIGRATIONS, logger);
  const heard = { quotes: 0, crm: 0 };
  const listeners = await Promise.all([
    env.sql.listen(outboxChannel("quotes"), () => void heard.quotes++),
    env.sql.listen(outboxChannel("crm"), () => void heard.crm++),
  ]);
  try {
    await write(crm, crypto.randomUUID(), 1);
    await write(env.sql, crypto.randomUUID(), 1);
    await waitFor(
      "both notifications",
      () => Promise.resolve(heard.quotes + heard.crm >= 2),
      5_000,
    );
    // Both listen on one connection, which gets notifications in commit order: a commit that
    // also woke the other schema's relay would have been counted by now.
    assertEquals(heard, { quotes: 1, crm: 1 });
  } finally {
    for (const listener of listeners) await listener.unlisten();
    await crm.end();
  }
});

Deno.test("startOutboxRelay() wakes on commit instead of waiting for its poll", async () => {
  await using env = await setup();
  // A poll this slow would fail the test: only the NOTIFY at commit can wake it in time.
  const relay = await quotesRelay(env.sql, env.bus, { pollIntervalMs: 60_000 });
  const { seen, subscription } = collector(env.bus, "relay-wake");
  try {
    await sleep(200);
    await write(env.sql, crypto.randomUUID(), 1);
    await waitFor("the event", () => Promise.resolve(seen.length === 1), 5_000);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay() publishes rows a crash left behind, and nothing rolled back", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  // Written while no relay runs, as after a crash between commit and publish.
  const before = await write(env.sql, org, 5);
  await env.sql.begin(async (tx) => {
    await writeEvent(tx, {
      organizationId: org,
      type: "quote.deleted",
      aggregateId: crypto.randomUUID(),
      payload: { id: crypto.randomUUID() },
    });
    throw new Error("the change failed");
  }).catch(() => {});
  const { seen, subscription } = collector(env.bus, "relay-recover");
  const relay = await quotesRelay(env.sql, env.bus);
  try {
    await waitFor("5 events", () => Promise.resolve(seen.length >= 5), 10_000);
    await sleep(300);
    assertEquals(seen.map((e) => e.id), before);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay() keeps rows while the bus refuses them and publishes later", async () => {
  await using env = await setup();
  let refusing = true;
  let refusals = 0;
  const flaky: EventBus = {
    transport: "embedded",
    publish: (topic, events) => {
      if (!refusing) return env.bus.publish(topic, events);
      refusals++;
      return Promise.reject(new Error("broker down"));
    },
    subscribe: (options) => env.bus.subscribe(options),
    close: () => Promise.resolve(),
  };
  const relay = await quotesRelay(env.sql, flaky);
  const { seen, subscription } = collector(env.bus, "relay-outage");
  try {
    const ids = await write(env.sql, crypto.randomUUID(), 3);
    await waitFor("the relay to try and be refused", () => Promise.resolve(refusals > 0), 10_000);
    const [kept] = await env.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
    assertEquals(kept!.n, 3, "nothing is marked while the bus refuses");
    refusing = false;
    await waitFor("3 events", () => Promise.resolve(seen.length >= 3), 20_000);
    assertEquals(seen.map((e) => e.id), ids);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("two relays on one schema never publish the same rows twice or out of order", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  const second = connect(env.url, { schema: "quotes", max: 4 });
  const relays = await Promise.all(
    [env.sql, second].map((sql) => quotesRelay(sql, env.bus)),
  );
  const { seen, subscription } = collector(env.bus, "relay-replicas");
  try {
    const writes = await Promise.all([write(env.sql, org, 40), write(second, org, 40)]);
    await waitFor("80 events", () => Promise.resolve(seen.length >= 80), 20_000);
    await sleep(300);
    assertEquals(seen.length, 80);
    assertEquals(new Set(seen.map((e) => e.id)).size, 80);
    // Each writer's own events stay in the order it wrote them.
    for (const ids of writes) {
      const positions = ids.map((id) => seen.findIndex((e) => e.id === id));
      assert(positions.every((p, i) => i === 0 || p > positions[i - 1]!));
    }
  } finally {
    await Promise.all(relays.map((r) => r.stop()));
    await (await subscription).stop();
    await second.end();
  }
});

Deno.test("startOutboxRelay() quarantines an event the broker refuses and publishes the rest", async () => {
  await using env = await setup();
  const ids = await write(env.sql, crypto.randomUUID(), 9);
  const poison = ids[4]!;
  let attempts = 0;
  const picky: EventBus = {
    transport: "embedded",
    publish: (topic, events) => {
      attempts++;
      return events.some((e) => e.id === poison)
        ? Promise.reject(new PublishRefusedError("INVALID_RECORD: record failed validation"))
        : env.bus.publish(topic, events);
    },
    subscribe: (options) => env.bus.subscribe(options),
    close: () => Promise.resolve(),
  };
  const relay = await quotesRelay(env.sql, picky);
  const { seen, subscription } = collector(env.bus, "relay-poison");
  try {
    await waitFor("8 events", () => Promise.resolve(seen.length >= 8), 10_000);
    assertEquals(seen.map((e) => e.id), ids.filter((id) => id !== poison));
    const [kept] = await env.sql<{ publish_error: string; published_at: Date | null }[]>`
      SELECT publish_error, published_at FROM outbox WHERE id = ${poison}
        AND quarantined_at IS NOT NULL`;
    assertEquals(kept?.published_at, null, "kept in the outbox, not marked published");
    assert(kept?.publish_error.includes("INVALID_RECORD"));
    assert(attempts < 20, `found the poison by halving (${attempts} publishes)`);
    // An operator clears the mark once the cause is fixed, and it goes out.
    await env.sql`UPDATE outbox SET quarantined_at = NULL WHERE id = ${poison}`;
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

/** Stores an outbox row as writeEvent does, but without its notification: as if it were lost. */
async function writeSilently(sql: Sql, organizationId: string): Promise<string> {
  const id = crypto.randomUUID();
  await sql`
    INSERT INTO outbox (id, organization_id, type, aggregate_id, payload, created_at)
    VALUES (${id}, ${organizationId}, 'quote.deleted', ${crypto.randomUUID()},
            ${sql.json({ id: crypto.randomUUID() })}, clock_timestamp())`;
  return id;
}

Deno.test("startOutboxRelay() publishes a row whose notification was lost on its safety poll", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  const relay = await quotesRelay(env.sql, env.bus, { pollIntervalMs: 50, idlePollMaxMs: 200 });
  const { seen, subscription } = collector(env.bus, "relay-lost");
  try {
    const [first] = await write(env.sql, org, 1);
    await waitFor("the notified event", () => Promise.resolve(seen.length === 1), 10_000);
    await sleep(500); // idle long enough for the poll to back off to its cap
    const lost = await writeSilently(env.sql, org);
    await waitFor(
      "the event nobody was told about",
      () => Promise.resolve(seen.length === 2),
      10_000,
    );
    assertEquals(seen.map((e) => e.id), [first, lost]);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay() looks for missed rows as soon as its LISTEN connection is back", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  // No poll would run within the test: only the reconnection can find the row.
  const relay = await quotesRelay(env.sql, env.bus, NO_POLLS);
  const { seen, subscription } = collector(env.bus, "relay-reconnect");
  try {
    await write(env.sql, org, 1);
    await waitFor("the notified event", () => Promise.resolve(seen.length === 1), 10_000);
    const missed = await writeSilently(env.sql, org);
    const dropped = await env.sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'quotes'
        AND query ILIKE 'listen%'`;
    assertEquals(dropped.length, 1, "one LISTEN connection");
    await waitFor("the missed event", () => Promise.resolve(seen.length === 2), 10_000);
    assertEquals(seen[1]!.id, missed);
    await write(env.sql, org, 1);
    await waitFor("an event notified on the new connection", () => {
      return Promise.resolve(seen.length === 3);
    }, 10_000);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay() picks and marks a batch in one statement between BEGIN and COMMIT", async () => {
  await using env = await setup();
  const statements: string[] = [];
  const relaySql = connect(env.url, {
    schema: "quotes",
    max: 2,
    onQuery: (text) => statements.push(text),
  });
  const relay = await quotesRelay(relaySql, env.bus, NO_POLLS);
  const { seen, subscription } = collector(env.bus, "relay-statements");
  const committed = () => statements.at(-1)?.trim() === "commit";
  try {
    // The relay's first round ends with its purge of published rows (again only after 10
    // minutes): let it end first, so that no purge falls among the statements counted below.
    await relay.settle();
    const org = crypto.randomUUID();
    await write(env.sql, org, 1);
    await waitFor(
      "the first batch",
      () => Promise.resolve(seen.length === 1 && committed()),
      10_000,
    );
    statements.length = 0;
    await env.sql.begin(async (tx) => {
      for (let i = 0; i < 3; i++) {
        await writeEvent(tx, {
          organizationId: org,
          type: "quote.deleted",
          aggregateId: crypto.randomUUID(),
          payload: { id: crypto.randomUUID() },
        });
      }
    });
    await waitFor(
      "the second batch",
      () => Promise.resolve(seen.length === 4 && committed()),
      10_000,
    );
    const keywords = statements.map((text) => text.trim().split(/\s+/)[0]!.toLowerCase());
    // BEGIN and the platform role (the relay reads every organisation's rows) in one message.
    // (A look for more right after the batch, finding none, is the same three statements.)
    const batches = Array.from(
      { length: Math.ceil(keywords.length / 3) },
      () => ["begin;", "with", "commit"],
    );
    assertEquals(keywords, batches.flat(), statements.join("\n---\n"));
    assertEquals(statements[0]!.trim(), "begin; set local role printshop_platform");
    const [left] = await env.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
    assertEquals(left!.n, 0, "every row marked published");
  } finally {
    await relay.stop();
    await (await subscription).stop();
    await relaySql.end();
  }
});

Deno.test("startOutboxRelay() publishes commits that come in just after a batch together", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  let publishes = 0;
  const counting: EventBus = {
    transport: "embedded",
    publish: (topic, events) => {
      publishes++;
      return env.bus.publish(topic, events);
    },
    subscribe: (options) => env.bus.subscribe(options),
    close: () => Promise.resolve(),
  };
  // A wide window, so that twenty commits in a row surely fall within it.
  const relay = await quotesRelay(env.sql, counting, { gatherMs: 1_000 });
  const { seen, subscription } = collector(env.bus, "relay-gather");
  try {
    const ids = await write(env.sql, org, 1);
    await waitFor("the first event", () => Promise.resolve(seen.length === 1), 10_000);
    ids.push(...await write(env.sql, org, 20));
    await waitFor("twenty more", () => Promise.resolve(seen.length === 21), 10_000);
    assert(publishes <= 3, `published in ${publishes} batches, not one per commit`);
    assertEquals(seen.map((e) => e.id), ids, "in write order");
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

/**
 * Another writer's connection (a replica, a script) to the database, counting the notifications
 * on the quotes relay's channel.
 */
async function notificationCounter(
  url: string,
): Promise<{ sql: Sql; heard: number; [Symbol.asyncDispose](): Promise<void> }> {
  const sql = connect(url, { schema: "quotes", max: 1 });
  const counter = {
    sql,
    heard: 0,
    async [Symbol.asyncDispose]() {
      await listener.unlisten();
      await sql.end();
    },
  };
  const listener = await sql.listen(outboxChannel("quotes"), () => void counter.heard++);
  return counter;
}

/** One `quote.deleted` event written through the db module's transaction(); its id. */
async function writeInTransaction(sql: Sql, organizationId: string): Promise<string> {
  return await transaction(sql, (tx) =>
    writeEvent(tx, {
      organizationId,
      type: "quote.deleted",
      aggregateId: crypto.randomUUID(),
      payload: { id: crypto.randomUUID() },
    }));
}

Deno.test("startOutboxRelay() is woken by this process's commits on its pool without a NOTIFY; other writers still notify", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  // No poll would run within the test: only a wake can publish.
  const relay = await quotesRelay(env.sql, env.bus, NO_POLLS);
  const { seen, subscription } = collector(env.bus, "relay-commit-wake");
  await using other = await notificationCounter(env.url);
  try {
    const woken = await writeInTransaction(env.sql, org);
    await waitFor("the event woken in process", () => Promise.resolve(seen.length === 1), 10_000);
    // A writer whose commits this process is not told of (another replica, a script): notified.
    const [notified] = await write(other.sql, org, 1);
    await waitFor("the notified event", () => Promise.resolve(seen.length === 2), 10_000);
    await waitFor("its notification", () => Promise.resolve(other.heard >= 1), 5_000);
    // Notifications come in commit order on one connection: the first write's would be in.
    assertEquals(other.heard, 1, "the in-process write sent no notification");
    assertEquals(seen.map((e) => e.id), [woken, notified]);
  } finally {
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay() woken while another replica holds its schema looks again until it has it", async () => {
  await using env = await setup();
  const org = crypto.randomUUID();
  const relay = await quotesRelay(env.sql, env.bus, NO_POLLS);
  const { seen, subscription } = collector(env.bus, "relay-lock-retry");
  // Another replica's relay, mid-batch: it holds the schema's lock, and was not told of the
  // write below (woken in this process only), so it would not look for it.
  const replica = await env.sql.reserve();
  try {
    await replica`BEGIN`;
    await replica`SELECT pg_advisory_xact_lock(hashtext('printshop.relay.quotes'))`;
    const id = await writeInTransaction(env.sql, org);
    await sleep(300);
    assertEquals(seen.length, 0, "nothing is published while the other replica has the schema");
    await replica`COMMIT`;
    await waitFor(
      "the event, once the lock is free",
      () => Promise.resolve(seen.length === 1),
      10_000,
    );
    assertEquals(seen[0]!.id, id);
  } finally {
    replica.release();
    await relay.stop();
    await (await subscription).stop();
  }
});

Deno.test("startOutboxRelay(): once stopped, this process's writes notify again, for a relay elsewhere", async () => {
  await using env = await setup();
  const relay = await quotesRelay(env.sql, env.bus);
  await using other = await notificationCounter(env.url);
  await relay.stop();
  await writeInTransaction(env.sql, crypto.randomUUID());
  await waitFor("the notification", () => Promise.resolve(other.heard === 1), 5_000);
});

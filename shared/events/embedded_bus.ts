import { connect, migrate, readMigrations } from "../db/mod.ts";
import type { Logger } from "../log.ts";
import { SpanKind, withSpan } from "../telemetry.ts";
import type { BusEvent, BusSubscription, EventBus, SubscribeOptions } from "./bus.ts";
import { Backoff, Waker } from "./waker.ts";

export interface EmbeddedBusOptions {
  /** The platform's Postgres; the bus keeps its log in the `eventbus` schema. */
  url: string;
  logger: Logger;
  /** Safety net under LISTEN/NOTIFY: how often an idle consumer looks anyway. */
  pollIntervalMs?: number;
  /** How long published events are kept for consumers that fall behind. */
  retentionDays?: number;
}

const SCHEMA = "eventbus";
const CHANNEL = "printshop_eventbus";
const BATCH_SIZE = 200;
const MIGRATIONS = new URL("./embedded_migrations/", import.meta.url);

interface MessageRow {
  seq: string;
  id: string;
  type: string;
  organization_id: string;
  aggregate_id: string | null;
  occurred_at: Date;
  data: unknown;
  traceparent: string | null;
}

/**
 * The default transport: a per-topic log in Postgres, so one machine needs no broker. Publishing
 * to a topic is serialised by a transaction-scoped advisory lock, so sequence numbers of a topic
 * become visible in order and a consumer that has read up to N can never later find a row below
 * N. A consumer group holds one advisory lock per topic while it handles a batch, so replicas of
 * a consumer share the work without handling the same batch twice; its position moves in the
 * same transaction, after the handler has resolved.
 */
export async function createEmbeddedBus(options: EmbeddedBusOptions): Promise<EventBus> {
  const { logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const retentionDays = options.retentionDays ?? 7;
  const sql = connect(options.url, { schema: SCHEMA, max: 4, applicationName: "eventbus" });
  await migrate(sql, SCHEMA, await readMigrations(MIGRATIONS), logger);
  const subscriptions = new Set<BusSubscription>();

  async function publish(topic: string, events: readonly BusEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map((e) => ({
      topic,
      id: e.id,
      organization_id: e.organizationId,
      type: e.type,
      aggregate_id: e.aggregateId,
      occurred_at: e.occurredAt,
      data: e.data,
      traceparent: e.traceparent ?? null,
    }));
    await withSpan(`${topic} publish`, { "messaging.system": "printshop-embedded" }, async () => {
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`eventbus.topic.${topic}`}))`;
        await tx`
          INSERT INTO messages
            (topic, id, organization_id, type, aggregate_id, occurred_at, data, traceparent)
          SELECT r.topic, r.id, r.organization_id, r.type, r.aggregate_id, r.occurred_at,
                 e.value -> 'data', r.traceparent
          FROM jsonb_array_elements(${
          tx.json(rows as Parameters<typeof tx.json>[0])
        }::jsonb) WITH ORDINALITY AS e(value, n),
               jsonb_to_record(e.value) AS r(topic text, id uuid, organization_id uuid,
                 type text, aggregate_id uuid, occurred_at timestamptz, traceparent text)
          ORDER BY e.n
          ON CONFLICT (topic, id) DO NOTHING`;
        await tx`SELECT pg_notify(${CHANNEL}, ${topic})`;
      });
    }, SpanKind.PRODUCER);
  }

  async function subscribe(subscribeOptions: SubscribeOptions): Promise<BusSubscription> {
    const { groupId, topics, handle } = subscribeOptions;
    const waker = new Waker();
    // Topics with news: a notification names one topic, so only that one is read. Every topic
    // is read at start, after a failure, and on each poll (the safety net).
    const pending = new Set<string>(topics);
    const listener = await sql.listen(CHANNEL, (topic) => {
      if (!topics.includes(topic)) return;
      pending.add(topic);
      waker.wake();
    });
    const backoff = new Backoff(250, 10_000);
    let running = true;
    let lastPurge = 0;

    /** Handles one batch of a topic; true when it made progress and more may be waiting. */
    const drain = (topic: string): Promise<boolean> =>
      sql.begin(async (tx) => {
        const [lock] = await tx<{ locked: boolean }[]>`
          SELECT pg_try_advisory_xact_lock(hashtext(${`eventbus.group.${groupId}.${topic}`}))
            AS locked`;
        if (!lock?.locked) return false;
        await tx`
          INSERT INTO consumer_offsets (group_id, topic) VALUES (${groupId}, ${topic})
          ON CONFLICT DO NOTHING`;
        const [offset] = await tx<{ position: string }[]>`
          SELECT position FROM consumer_offsets WHERE group_id = ${groupId} AND topic = ${topic}`;
        const rows = await tx<MessageRow[]>`
          SELECT seq, id, type, organization_id, aggregate_id, occurred_at, data, traceparent
          FROM messages
          WHERE topic = ${topic} AND seq > ${offset?.position ?? "0"}
          ORDER BY seq LIMIT ${BATCH_SIZE}`;
        if (rows.length === 0) return false;
        await withSpan(`${topic} receive`, {
          "messaging.system": "printshop-embedded",
          "messaging.batch.message_count": rows.length,
        }, () =>
          handle(rows.map(toEvent), topic), SpanKind.CONSUMER);
        await tx`
          UPDATE consumer_offsets SET position = ${rows.at(-1)!.seq}, updated_at = now()
          WHERE group_id = ${groupId} AND topic = ${topic}`;
        return rows.length === BATCH_SIZE;
      });

    const purgeOldMessages = async (): Promise<void> => {
      if (Date.now() - lastPurge < 3_600_000) return;
      lastPurge = Date.now();
      await sql`
        DELETE FROM messages
        WHERE published_at < now() - make_interval(days => ${retentionDays})`;
    };

    const loop = (async () => {
      while (running) {
        let more = false;
        const round = pending.size > 0 ? [...pending] : topics;
        pending.clear();
        try {
          for (const topic of round) {
            if (!running) break;
            if (await drain(topic)) {
              more = true;
              pending.add(topic);
            }
          }
          await purgeOldMessages();
          backoff.reset();
        } catch (error) {
          for (const topic of topics) pending.add(topic);
          const delay = backoff.next();
          logger.warn("event consumer will retry", {
            groupId,
            error: error instanceof Error ? error.message : String(error),
            retryInMs: delay,
          });
          await waker.sleep(delay);
          continue;
        }
        if (!more) await waker.sleep(pollIntervalMs);
      }
    })();

    const subscription: BusSubscription = {
      async stop() {
        if (!running) return;
        running = false;
        waker.wake();
        await loop;
        await listener.unlisten();
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    transport: "embedded",
    publish,
    subscribe,
    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await sql.end({ timeout: 5 });
    },
  };
}

function toEvent(row: MessageRow): BusEvent {
  return {
    id: row.id,
    type: row.type,
    organizationId: row.organization_id,
    aggregateId: row.aggregate_id,
    occurredAt: row.occurred_at.toISOString(),
    data: row.data,
    ...(row.traceparent ? { traceparent: row.traceparent } : {}),
  };
}

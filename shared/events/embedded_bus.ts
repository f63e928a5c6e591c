import { loopFailed, onDatabaseBack, openDatabase, transaction } from "../db/mod.ts";
import type { Logger } from "../log.ts";
import { consumerLag, sampleInto } from "../metrics.ts";
import { batchOrigin, SpanKind, withSpan } from "../telemetry.ts";
import type { BusEvent, BusSubscription, EventBus, SubscribeOptions } from "./bus.ts";
import {
  Backoff,
  GATHER_MS,
  IDLE_POLL_MAX_MS,
  IdlePoll,
  pause,
  POLL_INTERVAL_MS,
  Waker,
} from "./waker.ts";

export interface EmbeddedBusOptions {
  /** The platform's Postgres; the bus keeps its log in the `eventbus` schema. */
  url: string;
  /** Where its migrations run (the owner role); unset, on `url`. */
  migrationUrl?: string;
  /**
   * The role its connections take: `printshop_platform` in a process, since every statement of
   * the bus is about every organisation (one log, read by topic). Unset: `url`'s own.
   */
  role?: string;
  logger: Logger;
  /**
   * Safety net under LISTEN/NOTIFY: how soon an idle consumer looks anyway after its last
   * activity. Each look that finds nothing doubles the wait, up to `idlePollMaxMs`.
   */
  pollIntervalMs?: number;
  /** The longest an idle consumer goes without looking: the bound on a lost notification. */
  idlePollMaxMs?: number;
  /** After a batch, how long a consumer lets further notifications gather before reading. */
  gatherMs?: number;
  /** How long published events are kept for consumers that fall behind. */
  retentionDays?: number;
  /** Called with each statement the bus runs (tests count them). */
  onQuery?: (text: string) => void;
  /**
   * Whether consumers are woken through LISTEN (yes unless said). Without it (behind a
   * transaction pooler, on Deno Deploy) they read when `settle()` asks and on their own polls.
   */
  listen?: boolean;
  /** Whether opening the bus applies its migrations (yes) or only checks they were applied. */
  migrations?: "apply" | "verify";
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

/** What one drain did: events handled, whether the batch was full, the position committed. */
interface Drained {
  handled: number;
  more: boolean;
  last: string | null;
}

/** A publish notifies `<topic> <last seq>` (just `<topic>` when every event was a repeat). */
function parseNotification(payload: string): { topic: string; seq: bigint | null } {
  const [topic = "", seq] = payload.split(" ");
  return { topic, seq: seq !== undefined && /^\d+$/.test(seq) ? BigInt(seq) : null };
}

/**
 * The default transport: a per-topic log in Postgres, so one machine needs no broker. Publishing
 * to a topic is serialised by a transaction-scoped advisory lock, so sequence numbers of a topic
 * become visible in order and a consumer that has read up to N can never later find a row below
 * N. A consumer group holds one advisory lock per topic while it handles a batch, so replicas of
 * a consumer share the work without handling the same batch twice; its position moves in the
 * same transaction, after the handler has resolved.
 *
 * Cost per event: a publish is one statement (lock, insert, notify); a batch a consumer handles
 * is four (BEGIN; lock, position and events in one SELECT; the position's UPDATE; COMMIT). A
 * consumer that just handled a batch lets notifications gather for `gatherMs` before the next,
 * so under a steady stream it reads several events per batch; an idle one reads at once.
 *
 * Lost notifications: each consumer also looks for news on its own (one statement for all its
 * topics), `pollIntervalMs` after its last activity, then less and less often while nothing
 * turns up, at least every `idlePollMaxMs` (25 s by default). It looks at once when its
 * LISTEN connection comes back after a drop, since notifications sent meanwhile are lost.
 */
export async function createEmbeddedBus(options: EmbeddedBusOptions): Promise<EventBus> {
  const { logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
  const idlePollMaxMs = options.idlePollMaxMs ?? IDLE_POLL_MAX_MS;
  const gatherMs = options.gatherMs ?? GATHER_MS;
  const retentionDays = options.retentionDays ?? 7;
  const sql = await openDatabase(options.url, SCHEMA, MIGRATIONS, logger, {
    platform: false,
    watch: false,
    max: 4,
    applicationName: "eventbus",
    ...(options.migrationUrl ? { migrationUrl: options.migrationUrl } : {}),
    ...(options.role ? { role: options.role } : {}),
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
    ...(options.migrations ? { migrations: options.migrations } : {}),
  });
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
    // One statement, so one implicit transaction: the topic's lock is taken before the first
    // row draws its seq (every row joins the lock's row) and held until the commit.
    await withSpan(
      `${topic} publish`,
      {
        "messaging.system": "printshop-embedded",
        "messaging.batch.message_count": events.length,
      },
      async () => {
        await sql`
        WITH topic_lock AS MATERIALIZED (
          SELECT pg_advisory_xact_lock(hashtext(${`eventbus.topic.${topic}`}))
        ), inserted AS (
          INSERT INTO messages
            (topic, id, organization_id, type, aggregate_id, occurred_at, data, traceparent)
          SELECT r.topic, r.id, r.organization_id, r.type, r.aggregate_id, r.occurred_at,
                 e.value -> 'data', r.traceparent
          FROM topic_lock,
               jsonb_array_elements(${
          sql.json(rows as Parameters<typeof sql.json>[0])
        }::jsonb) WITH ORDINALITY AS e(value, n),
               jsonb_to_record(e.value) AS r(topic text, id uuid, organization_id uuid,
                 type text, aggregate_id uuid, occurred_at timestamptz, traceparent text)
          ORDER BY e.n
          ON CONFLICT (topic, id) DO NOTHING
          RETURNING seq
        )
        SELECT pg_notify(${CHANNEL}, ${topic}::text || coalesce(' ' || max(seq), ''))
        FROM inserted`;
      },
      SpanKind.PRODUCER,
      batchOrigin(events.map((e) => e.traceparent)),
    );
  }

  async function subscribe(subscribeOptions: SubscribeOptions): Promise<BusSubscription> {
    const { groupId, topics, handle } = subscribeOptions;
    const waker = new Waker();
    // Back from a database outage: read at once, rather than at the end of a backoff.
    const forgetBack = onDatabaseBack(() => waker.wake());
    // Topics with news: a notification names one topic, so only that one is read. Every topic
    // is looked at (one statement) at start, after a failure, on each safety poll and when the
    // LISTEN connection is back after a drop.
    const pending = new Set<string>();
    let lookEverywhere = true;
    // The group's position per topic as this member last committed it: a notification of
    // events at or below it (handled already, in a batch read after they were published) is
    // dropped without a round trip.
    const committed = new Map<string, bigint>();
    let listening = false;
    const listener = options.listen === false ? null : await sql.listen(CHANNEL, (payload) => {
      const { topic, seq } = parseNotification(payload);
      if (!topics.includes(topic)) return;
      if (seq !== null && seq <= (committed.get(topic) ?? -1n)) return;
      pending.add(topic);
      waker.wake();
    }, () => {
      // Called again each time the connection is back after a drop: look for what was missed.
      if (!listening) return void (listening = true);
      lookEverywhere = true;
      waker.wake();
    });
    const backoff = new Backoff(250, 10_000);
    const idle = new IdlePoll(pollIntervalMs, idlePollMaxMs);
    let running = true;
    let lastPurge = 0;

    /**
     * The topics with events past the group's position, creating the group's position rows the
     * first time (position 0: a new group reads each topic from its start).
     */
    const topicsWithNews = async (): Promise<string[]> => {
      const rows = await sql<{ topic: string }[]>`
        WITH created AS (
          INSERT INTO consumer_offsets (group_id, topic)
          SELECT ${groupId}, t FROM unnest(${topics}::text[]) AS t
          ON CONFLICT DO NOTHING
          RETURNING topic
        )
        SELECT topic FROM created
        UNION
        SELECT o.topic FROM consumer_offsets o
        WHERE o.group_id = ${groupId} AND o.topic = ANY(${topics}::text[])
          AND EXISTS (SELECT 1 FROM messages m WHERE m.topic = o.topic AND m.seq > o.position)`;
      return rows.map((r) => r.topic);
    };

    /**
     * Handles one batch of a topic. The SELECT takes the group's lock on the topic, its position
     * and the events after it at once: no rows when another member holds the lock or nothing is
     * new. FOR UPDATE reads the position as the member before committed it, even when it
     * committed after this statement's snapshot was taken.
     */
    const drain = (topic: string): Promise<Drained> =>
      transaction(sql, async (tx): Promise<Drained> => {
        const rows = await tx<MessageRow[]>`
          SELECT m.seq, m.id, m.type, m.organization_id, m.aggregate_id, m.occurred_at, m.data,
                 m.traceparent
          FROM (
            SELECT position FROM consumer_offsets
            WHERE group_id = ${groupId} AND topic = ${topic}
              AND pg_try_advisory_xact_lock(hashtext(${`eventbus.group.${groupId}.${topic}`}))
            FOR UPDATE
          ) o, LATERAL (
            SELECT seq, id, type, organization_id, aggregate_id, occurred_at, data, traceparent
            FROM messages
            WHERE topic = ${topic} AND seq > o.position
            ORDER BY seq LIMIT ${BATCH_SIZE}
          ) m
          ORDER BY m.seq`;
        if (rows.length === 0) return { handled: 0, more: false, last: null };
        await withSpan(
          `${topic} receive`,
          {
            "messaging.system": "printshop-embedded",
            "messaging.batch.message_count": rows.length,
          },
          () => handle(rows.map(toEvent), topic),
          SpanKind.CONSUMER,
          batchOrigin(rows.map((row) => row.traceparent)),
        );
        const last = rows.at(-1)!.seq;
        await tx`
          UPDATE consumer_offsets SET position = ${last}, updated_at = now()
          WHERE group_id = ${groupId} AND topic = ${topic}`;
        return { handled: rows.length, more: rows.length === BATCH_SIZE, last };
      }).then((outcome) => {
        if (outcome.last !== null) {
          const last = BigInt(outcome.last);
          if (last > (committed.get(topic) ?? -1n)) {
            committed.set(topic, last);
          }
        }
        return outcome;
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
        let handled = 0;
        try {
          let round: string[];
          if (lookEverywhere) {
            lookEverywhere = false;
            pending.clear();
            round = await topicsWithNews();
          } else {
            round = [...pending];
            pending.clear();
          }
          for (const topic of round) {
            if (!running) break;
            const outcome = await drain(topic);
            handled += outcome.handled;
            if (outcome.more) {
              more = true;
              pending.add(topic);
            }
          }
          await purgeOldMessages();
          backoff.reset();
        } catch (error) {
          lookEverywhere = true;
          const delay = backoff.next();
          loopFailed(logger, "event consumer will retry", error, { groupId, retryInMs: delay });
          await waker.sleep(delay);
          continue;
        }
        if (more) continue;
        if (handled > 0) {
          idle.reset();
          // Under a steady stream, the events published meanwhile make the next batch.
          await pause(gatherMs);
        }
        if (await waker.sleep(idle.next())) idle.reset();
        else lookEverywhere = true;
      }
    })();

    // Events past the group's position on each topic: how far behind its consumers are.
    const stopSampling = sampleInto(consumerLag, async () => {
      const rows = await sql<{ topic: string; lag: number }[]>`
        SELECT o.topic, (COALESCE((SELECT max(seq) FROM messages m WHERE m.topic = o.topic), 0)
          - o.position)::int AS lag
        FROM consumer_offsets o WHERE o.group_id = ${groupId} AND o.topic = ANY(${topics})`;
      return rows.map(({ topic, lag }) => ({
        value: Math.max(0, lag),
        attributes: {
          "messaging.consumer.group.name": groupId,
          "messaging.destination.name": topic,
        },
      }));
    });

    const subscription: BusSubscription = {
      async stop() {
        if (!running) return;
        running = false;
        stopSampling();
        forgetBack();
        waker.wake();
        await loop;
        waker.release();
        await listener?.unlisten();
        subscriptions.delete(subscription);
      },
      settle() {
        if (!running) return Promise.resolve();
        lookEverywhere = true;
        return waker.settle();
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
      await sql.end({ timeout: 1 });
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

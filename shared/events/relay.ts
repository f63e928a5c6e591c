import { outboxBacklog, outboxOldestAge, sampleInto } from "../metrics.ts";
import {
  databaseUnavailable,
  onDatabaseBack,
  platformRead,
  platformTransaction,
  type Sql,
  wakeAfterCommits,
} from "../db/mod.ts";
import type { Logger } from "../log.ts";
import { type BusEvent, type EventBus, PublishRefusedError } from "./bus.ts";
import {
  Backoff,
  GATHER_MS,
  IDLE_POLL_MAX_MS,
  IdlePoll,
  pause,
  POLL_INTERVAL_MS,
  Waker,
} from "./waker.ts";

/** Prefix of the channels `writeEvent` notifies on commit: see `outboxChannel`. */
export const OUTBOX_CHANNEL = "printshop_outbox";

/**
 * The channel a commit in `schema` notifies: one per schema, so that a write wakes only the
 * relay of its own schema. (One channel for all, with the schema as payload, woke every
 * process's relay on every write of any service only to be dropped: at the create load, ~0.25
 * ms of CPU per event across the processes that had nothing to relay and their backends.) A
 * writer of an older release still notifies the shared channel; its events are then found by
 * the relay's own poll. PostgreSQL still signals every listening backend of the database at each
 * such commit, whatever its channel: why the process's own writes send none (db/commit_wakes.ts).
 */
export function outboxChannel(schema: string): string {
  return `${OUTBOX_CHANNEL}.${schema}`;
}

export interface RelayOptions {
  /** Pool bound to the service's schema, where its `outbox` table is. */
  sql: Sql;
  schema: string;
  topic: string;
  bus: EventBus;
  logger: Logger;
  /**
   * Safety net under LISTEN/NOTIFY, and how rows a crash left behind are found: how soon an
   * idle relay looks anyway after its last activity. Each look that finds nothing doubles the
   * wait, up to `idlePollMaxMs`.
   */
  pollIntervalMs?: number;
  /** The longest an idle relay goes without looking: the bound on a lost notification. */
  idlePollMaxMs?: number;
  /** After publishing a batch, how long to let further commits gather before the next. */
  gatherMs?: number;
  batchSize?: number;
  /** Published rows are kept this long for inspection, then removed. */
  keepPublishedHours?: number;
  /**
   * Whether commits wake the relay, through LISTEN and, for this process's own, in the process
   * (yes unless said). Without it (behind a transaction pooler, on Deno Deploy) it looks when
   * `settle()` asks and on its own polls.
   */
  listen?: boolean;
  /** Called after each batch the bus acknowledged: who consumes the topic may be told. */
  onPublished?: (count: number) => void;
}

export interface OutboxRelay {
  /** Resolves once the batch in flight is published or abandoned. */
  stop(): Promise<void>;
  /** Relays what is committed now; resolves once the outbox was found empty (or failing). */
  settle(): Promise<void>;
}

interface OutboxRow {
  id: string;
  organization_id: string;
  type: string;
  aggregate_id: string | null;
  payload: unknown;
  traceparent: string | null;
  created_at: Date;
}

/**
 * Publishes a service's outbox to its topic, oldest first, and marks rows published in the
 * transaction that publishes them, which commits only once the bus has acknowledged them (a
 * failed publish rolls the mark back). Rows stay locked by the publishing transaction, and a
 * transaction-scoped advisory lock lets only one replica relay a schema at a time, which keeps
 * the order. A crash between publishing and committing means the rows are published again: at
 * least once, with the same event ids. When a batch fails, the next tries are smaller, down to
 * one event; a single event the broker refuses for good is quarantined in the outbox, so it
 * cannot hold back the rest.
 *
 * Cost per batch: BEGIN, one statement that takes the lock, picks the rows and marks them, the
 * bus's publish, COMMIT. A relay that just published lets commits gather for `gatherMs` before
 * the next batch, so under a steady stream of writes it publishes several events per batch; an
 * idle one publishes at once.
 *
 * Waking: this process's own writes on `sql` wake the relay once committed, without a NOTIFY
 * (db/commit_wakes.ts); other writers notify the schema's channel. Only the relay holding the
 * schema's lock publishes, and another replica was not told of a write woken here: a relay that
 * finds the lock taken looks again until it has it, after `gatherMs`, then twice as long each
 * time up to `pollIntervalMs` (at once on its process's next commit).
 *
 * Lost notifications: the relay also looks on its own, `pollIntervalMs` after its last
 * activity, then less and less often while nothing turns up, at least every `idlePollMaxMs`
 * (25 s by default). It looks at once when its LISTEN connection comes back after a drop, since
 * notifications sent meanwhile are lost.
 */
export async function startOutboxRelay(options: RelayOptions): Promise<OutboxRelay> {
  const { sql, schema, topic, bus, logger } = options;
  const batchSize = options.batchSize ?? 500;
  const keepPublishedHours = options.keepPublishedHours ?? 24;
  const gatherMs = options.gatherMs ?? GATHER_MS;
  const idle = new IdlePoll(
    options.pollIntervalMs ?? POLL_INTERVAL_MS,
    options.idlePollMaxMs ?? IDLE_POLL_MAX_MS,
  );
  const waker = new Waker();
  // Back from a database outage: look at once, rather than at the end of a backoff.
  const forgetBack = onDatabaseBack(() => waker.wake());
  let listening = false;
  const listener = options.listen === false
    ? null
    : await sql.listen(outboxChannel(schema), () => waker.wake(), () => {
      // Called again each time the connection is back after a drop: look for what was missed.
      if (listening) waker.wake();
      listening = true;
    });
  // This process's own writes on the pool wake the relay once committed, without a NOTIFY
  // (db/commit_wakes.ts); other writers' still notify. Where nothing listens (on demand), a
  // write's kick drains the relay instead.
  const forgetCommits = listener ? wakeAfterCommits(sql, () => waker.wake()) : () => {};
  const backoff = new Backoff(250, 15_000);
  // The wait before looking again when another replica held the schema.
  const lockRetry = new Backoff(Math.max(gatherMs, 1), options.pollIntervalMs ?? POLL_INTERVAL_MS);
  let running = true;
  let failing = false;
  let lastPurge = 0;

  let limit = batchSize;

  // What an operator looks at first when events are late: how many wait, and for how long.
  const service = { "printshop.outbox.schema": schema };
  // Both gauges are collected together: they share the one statement in flight.
  let inFlight: Promise<{ count: number; age: number }> | null = null;
  const waiting = (): Promise<{ count: number; age: number }> =>
    inFlight ??= countWaiting().finally(() => inFlight = null);
  const countWaiting = async (): Promise<{ count: number; age: number }> => {
    const [row] = await platformRead(sql, (q) =>
      q<{ count: number; age: number }[]>`
        SELECT count(*)::int AS count,
          COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0)::float8 AS age
        FROM outbox WHERE published_at IS NULL AND quarantined_at IS NULL`);
    return row!;
  };
  const stopSampling = [
    sampleInto(
      outboxBacklog,
      async () => [{ value: (await waiting()).count, attributes: service }],
    ),
    sampleInto(
      outboxOldestAge,
      async () => [{ value: (await waiting()).age, attributes: service }],
    ),
  ];

  /**
   * Publishes one batch; `full` when it was full and more may be waiting. The outbox holds every
   * organisation's events in one order, so the relay reads it as the platform.
   */
  const relayBatch = (): Promise<Batch> =>
    platformTransaction(sql, async (tx) => {
      const size = limit;
      // The scalar sub-select is evaluated once, before any row is read: without the lock
      // nothing is scanned. FOR UPDATE re-reads each row as the last relay committed it, so
      // rows it published after this statement's snapshot was taken are skipped. The answer has
      // one row (with no event) when none was marked, saying whether the lock was taken.
      const answer = await tx<PickedRow[]>`
        WITH relay_lock AS MATERIALIZED (
          SELECT pg_try_advisory_xact_lock(hashtext(${`printshop.relay.${schema}`})) AS taken
        ), picked AS (
          SELECT id FROM outbox
          WHERE published_at IS NULL AND quarantined_at IS NULL
            AND (SELECT taken FROM relay_lock)
          ORDER BY created_at, id
          LIMIT ${size}
          FOR UPDATE
        ), marked AS (
          UPDATE outbox o SET published_at = now()
          FROM picked WHERE o.id = picked.id
          RETURNING o.id, o.organization_id, o.type, o.aggregate_id, o.payload, o.traceparent,
                    o.created_at
        )
        SELECT marked.*, relay_lock.taken FROM relay_lock LEFT JOIN marked ON true
        ORDER BY marked.created_at, marked.id`;
      const rows = answer.filter((row): row is OutboxRow & { taken: boolean } => row.id !== null);
      // Another replica's relay holds the lock: its batch may have been picked before this
      // process's last commit, which woke only this relay (no NOTIFY), so look again shortly.
      if (rows.length === 0) return { published: 0, full: false, lockTaken: answer[0]!.taken };
      try {
        await bus.publish(topic, rows.map(toBusEvent));
      } catch (error) {
        throw new BatchFailed(rows, error);
      }
      return { published: rows.length, full: rows.length === size, lockTaken: true };
    });

  /** After a failed batch: try smaller ones, or set aside the one event the broker refuses. */
  const narrowDown = async (failure: BatchFailed): Promise<boolean> => {
    if (failure.rows.length > 1) {
      limit = Math.ceil(failure.rows.length / 2);
      return true;
    }
    const [row] = failure.rows;
    if (!row || !(failure.cause instanceof PublishRefusedError)) return false;
    const refusal = failure.cause.message;
    await platformTransaction(sql, (tx) =>
      tx`
        UPDATE outbox SET quarantined_at = now(), publish_error = ${refusal}
        WHERE id = ${row.id}`);
    logger.error("event quarantined: the broker refuses it", {
      topic,
      eventId: row.id,
      type: row.type,
      error: failure.cause.message,
    });
    return true;
  };

  const purge = async (): Promise<void> => {
    if (Date.now() - lastPurge < 600_000) return;
    lastPurge = Date.now();
    await platformTransaction(sql, (tx) =>
      tx`
        DELETE FROM outbox
        WHERE published_at < now() - make_interval(hours => ${keepPublishedHours})`);
  };

  const loop = (async () => {
    while (running) {
      let outcome: Batch = { published: 0, full: false, lockTaken: true };
      try {
        outcome = await relayBatch();
        await purge();
        if (failing) logger.info("outbox relay recovered", { topic });
        failing = false;
        // Grow back gradually after narrowing down: jumping straight to a full batch would hit
        // the same refusal again at once.
        limit = Math.min(batchSize, limit * 2);
        backoff.reset();
      } catch (error) {
        if (error instanceof BatchFailed && await narrowDown(error).catch(() => false)) continue;
        const cause = error instanceof BatchFailed ? error.cause : error;
        const delay = backoff.next();
        // One warning per outage, then debug: a long broker outage should not flood the log.
        // The database's own outage is logged once by the process's watch.
        const quiet = failing || databaseUnavailable(cause) !== null;
        (quiet ? logger.debug : logger.warn).call(logger, "outbox relay cannot publish", {
          topic,
          error: cause instanceof Error ? cause.message : String(cause),
          retryInMs: delay,
        });
        failing = true;
        await waker.sleep(delay);
        continue;
      }
      if (outcome.published > 0) options.onPublished?.(outcome.published);
      if (outcome.full) continue;
      if (!outcome.lockTaken && listener) {
        // Less and less often while the other replica keeps the schema (a slow broker), and at
        // once on this process's next commit.
        await waker.sleep(lockRetry.next());
        continue;
      }
      lockRetry.reset();
      if (outcome.published > 0) {
        idle.reset();
        // Under a steady stream of writes, the rows committed meanwhile make the next batch.
        await pause(gatherMs);
      }
      if (await waker.sleep(idle.next())) idle.reset();
    }
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      // First: a write that records its event from now on notifies (for another replica, or the
      // next start) rather than asking a loop that is ending to wake. One that asked already and
      // commits after the loop ended is left to those; the process's stop lets its requests and
      // background work finish before it stops the relay (service_main.ts).
      forgetCommits();
      for (const stop of stopSampling) stop();
      forgetBack();
      waker.wake();
      await loop;
      waker.release();
      await listener?.unlisten().catch(() => {});
    },
    settle: () => running ? waker.settle() : Promise.resolve(),
  };
}

/**
 * What one pick did: `full` when more may be waiting; `lockTaken` false when another relay held
 * the schema.
 */
interface Batch {
  published: number;
  full: boolean;
  lockTaken: boolean;
}

/** A row of the pick's answer: an event it marked, or its one row when it marked none. */
type PickedRow = (OutboxRow | { id: null }) & { taken: boolean };

class BatchFailed extends Error {
  constructor(readonly rows: OutboxRow[], override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

function toBusEvent(row: OutboxRow): BusEvent {
  return {
    id: row.id,
    type: row.type,
    organizationId: row.organization_id,
    aggregateId: row.aggregate_id,
    occurredAt: row.created_at.toISOString(),
    data: row.payload,
    ...(row.traceparent ? { traceparent: row.traceparent } : {}),
  };
}

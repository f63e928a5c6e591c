import type { Sql } from "../db/mod.ts";
import type { Logger } from "../log.ts";
import { type BusEvent, type EventBus, PublishRefusedError } from "./bus.ts";
import { Backoff, Waker } from "./waker.ts";

/** Channel `writeEvent` notifies on commit, with the writing schema as payload. */
export const OUTBOX_CHANNEL = "printshop_outbox";

export interface RelayOptions {
  /** Pool bound to the service's schema, where its `outbox` table is. */
  sql: Sql;
  schema: string;
  topic: string;
  bus: EventBus;
  logger: Logger;
  /** Safety net under LISTEN/NOTIFY, and how rows a crash left behind are found. */
  pollIntervalMs?: number;
  batchSize?: number;
  /** Published rows are kept this long for inspection, then removed. */
  keepPublishedHours?: number;
}

export interface OutboxRelay {
  /** Resolves once the batch in flight is published or abandoned. */
  stop(): Promise<void>;
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
 * Publishes a service's outbox to its topic, oldest first, and marks rows once the bus has
 * acknowledged them. Rows stay locked by the publishing transaction, and a transaction-scoped
 * advisory lock lets only one replica relay a schema at a time, which keeps the order. A crash
 * between publishing and marking means the rows are published again: at least once, with the
 * same event ids. When a batch fails, the next tries are smaller, down to one event; a single
 * event the broker refuses for good is quarantined in the outbox, so it cannot hold back the
 * rest.
 */
export async function startOutboxRelay(options: RelayOptions): Promise<OutboxRelay> {
  const { sql, schema, topic, bus, logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 500;
  const keepPublishedHours = options.keepPublishedHours ?? 24;
  const waker = new Waker();
  const listener = await sql.listen(OUTBOX_CHANNEL, (payload) => {
    if (payload === schema) waker.wake();
  });
  const backoff = new Backoff(250, 15_000);
  let running = true;
  let failing = false;
  let lastPurge = 0;

  let limit = batchSize;

  /** Publishes one batch; true when the batch was full and more may be waiting. */
  const relayBatch = (): Promise<boolean> =>
    sql.begin(async (tx) => {
      const [lock] = await tx<{ locked: boolean }[]>`
        SELECT pg_try_advisory_xact_lock(hashtext(${`printshop.relay.${schema}`})) AS locked`;
      if (!lock?.locked) return false;
      const rows = await tx<OutboxRow[]>`
        SELECT id, organization_id, type, aggregate_id, payload, traceparent, created_at
        FROM outbox WHERE published_at IS NULL AND quarantined_at IS NULL
        ORDER BY created_at, id
        LIMIT ${limit}
        FOR UPDATE`;
      if (rows.length === 0) return false;
      try {
        await bus.publish(topic, rows.map(toBusEvent));
      } catch (error) {
        throw new BatchFailed(rows, error);
      }
      await tx`UPDATE outbox SET published_at = now() WHERE id = ANY(${rows.map((r) => r.id)})`;
      return rows.length === limit;
    });

  /** After a failed batch: try smaller ones, or set aside the one event the broker refuses. */
  const narrowDown = async (failure: BatchFailed): Promise<boolean> => {
    if (failure.rows.length > 1) {
      limit = Math.ceil(failure.rows.length / 2);
      return true;
    }
    const [row] = failure.rows;
    if (!row || !(failure.cause instanceof PublishRefusedError)) return false;
    await sql`
      UPDATE outbox SET quarantined_at = now(), publish_error = ${failure.cause.message}
      WHERE id = ${row.id}`;
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
    await sql`
      DELETE FROM outbox
      WHERE published_at < now() - make_interval(hours => ${keepPublishedHours})`;
  };

  const loop = (async () => {
    while (running) {
      let more = false;
      try {
        more = await relayBatch();
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
        (failing ? logger.debug : logger.warn).call(logger, "outbox relay cannot publish", {
          topic,
          error: cause instanceof Error ? cause.message : String(cause),
          retryInMs: delay,
        });
        failing = true;
        await waker.sleep(delay);
        continue;
      }
      if (!more) await waker.sleep(pollIntervalMs);
    }
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      waker.wake();
      await loop;
      await listener.unlisten().catch(() => {});
    },
  };
}

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

import {
  type Fragment,
  platformStatement,
  platformTransaction,
  type Queryable,
  read,
  type Sql,
} from "@printshop/shared/db";
import type { BusEvent } from "@printshop/shared/events";
import { type ApiError, validationError } from "@printshop/shared/http";
import { uuidv7Time } from "@printshop/shared/ids";
import { col, defineTable, type ResourceOf, type RowOf } from "@printshop/shared/db/table";

/** Serialises recording events (and revoking keys), so the log's seq follows commit order. */
export const EVENT_LOG_LOCK = "printshop.webhooks.event_log";

/** Wakes delivery workers (in every replica) when new deliveries are queued. */
export const DELIVERIES_CHANNEL = "printshop_webhook_deliveries";

/**
 * Records integrator-visible events once each and queues one delivery per matching active
 * subscription, in one statement (so one transaction). An event seen before (a redelivery by
 * the bus) inserts nothing and queues nothing. The transaction-wide lock keeps `seq` in commit
 * order, so a reader of the event log who has seen seq N never later finds a new row below N:
 * it is taken before the first row draws its seq (every row joins the lock's row).
 *
 * The fan-out starts from the rows just recorded and looks their subscriptions up by
 * (organisation, event type), so its cost follows the batch and its subscribers. (It used to
 * look the batch up again in `events` in a statement of its own, which the planner could run
 * from the subscriptions side, scanning every event of the organisation once per subscription:
 * with 66 subscriptions, tens of milliseconds of database time per batch, growing with each
 * event the organisation had.)
 *
 * A batch holds several organisations' events, in the bus's order, and the log's seq is one order
 * across them all, so the batch is recorded as the platform (past the row-level policies), in one
 * transaction of one statement. Each event brings its own organisation, and each delivery takes
 * its event's: the keys that carry the organisation (a delivery's to its subscription and to its
 * event) refuse any other pairing, whoever writes.
 */
export async function recordEvents(
  sql: Sql,
  events: readonly BusEvent[],
): Promise<{ recorded: number; queued: number }> {
  if (events.length === 0) return { recorded: 0, queued: 0 };
  const rows = events.map((e) => ({
    id: e.id,
    organization_id: e.organizationId,
    type: e.type,
    aggregate_id: e.aggregateId,
    occurred_at: e.occurredAt,
    data: e.data,
    traceparent: e.traceparent ?? null,
  }));
  const [counts] = await platformStatement(sql, (tx) =>
    tx<{ recorded: number; queued: number }[]>`
    WITH event_log_lock AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(hashtext(${EVENT_LOG_LOCK}))
    ), recorded AS (
      INSERT INTO events (id, organization_id, type, aggregate_id, occurred_at, data, traceparent)
      SELECT r.id, r.organization_id, r.type, r.aggregate_id, r.occurred_at, e.value -> 'data',
             r.traceparent
      FROM event_log_lock,
           jsonb_array_elements(${tx.json(rows as Parameters<typeof tx.json>[0])}::jsonb)
             WITH ORDINALITY AS e(value, n),
           jsonb_to_record(e.value) AS r(id uuid, organization_id uuid, type text,
             aggregate_id uuid, occurred_at timestamptz, traceparent text)
      ORDER BY e.n
      ON CONFLICT (id) DO NOTHING
      RETURNING seq, id, organization_id, type
    ), queued AS (
      INSERT INTO deliveries (organization_id, subscription_id, event_id)
      SELECT e.organization_id, s.id, e.id
      FROM recorded e
      JOIN subscriptions s ON s.organization_id = e.organization_id AND s.event_type = e.type
      WHERE s.credential_revoked_at IS NULL AND s.scope_withdrawn_at IS NULL
      ORDER BY e.seq
      ON CONFLICT (subscription_id, event_id) DO NOTHING
      RETURNING id
    ), counted AS (
      SELECT (SELECT count(*) FROM recorded)::int AS recorded,
             (SELECT count(*) FROM queued)::int AS queued
    )
    SELECT recorded, queued,
           -- Wakes the workers at commit, only when there is something to send.
           (SELECT count(*) FROM (
              SELECT pg_notify(${DELIVERIES_CHANNEL}, '') FROM counted WHERE queued > 0
            ) AS notified) AS notified
    FROM counted`);
  return { recorded: counts!.recorded, queued: counts!.queued };
}

/**
 * The events table: an event of the log as GET /v1/event-log answers it. `data` is the payload as
 * recorded, handed over untouched.
 */
const EVENTS = defineTable({
  name: "events",
  tenant: true,
  noun: "Event",
  columns: {
    id: col.uuid(),
    type: col.text(),
    occurredAt: col.timestamp(),
    aggregateId: col.uuid().nullable(),
    data: col.json<unknown>(),
  },
});

export type LoggedEvent = ResourceOf<typeof EVENTS>;

/**
 * One page of an organisation's event log after a given event (from the start when `afterId`
 * is null), limited to the types the reader may see. An `afterId` that is not an event of this
 * organisation is a 400 naming `after`.
 */
export async function readEventLog(
  sql: Queryable,
  organizationId: string,
  options: { afterId: string | null; limit: number; types: readonly string[] },
): Promise<{ events: LoggedEvent[]; hasMore: boolean }> {
  // One read for the organisation: the policies show a statement sent to the pool no event.
  const rows = await read(sql, async (q) => {
    let afterSeq = "0";
    if (options.afterId) {
      const [anchor] = await q<{ seq: string }[]>`
        SELECT seq FROM events
        WHERE id = ${options.afterId} AND organization_id = ${organizationId}`;
      if (!anchor) throw unknownAnchor(options.afterId);
      afterSeq = anchor.seq;
    }
    return await q<RowOf<typeof EVENTS>[]>`
      SELECT ${q.unsafe(EVENTS.select)} FROM events
      WHERE organization_id = ${organizationId} AND seq > ${afterSeq}
        AND type = ANY(${options.types as string[]})
      ORDER BY seq
      LIMIT ${options.limit + 1}`;
  });
  const hasMore = rows.length > options.limit;
  return {
    hasMore,
    events: rows.slice(0, options.limit).map(EVENTS.read),
  };
}

/** How long the event log (and the deliveries of its events) is kept. */
export const EVENT_RETENTION_DAYS = 30;

/**
 * An `after` the log does not hold. Event ids carry their time, so one that has aged out of the
 * log gets its own answer: the integrator has to reconcile from the resources themselves.
 */
function unknownAnchor(after: string): ApiError {
  const time = uuidv7Time(after);
  if (time !== null && time < Date.now() - EVENT_RETENTION_DAYS * 86_400_000) {
    return validationError(
      "after",
      `Event "${after}" is older than the ${EVENT_RETENTION_DAYS} days the log keeps; ` +
        "read the current state from the resources, then page the log from its start",
    );
  }
  return validationError("after", `Event "${after}" is not in this organisation's log`);
}

/**
 * Removes events older than the retention, with their deliveries and attempts: every
 * organisation's, so as the platform (past the row-level policies).
 */
export async function purgeOldEvents(
  sql: Sql,
  days: number = EVENT_RETENTION_DAYS,
): Promise<number> {
  const removed = await platformTransaction(sql, (tx) => purgeStatement(tx, days));
  return removed.length;
}

/** The purge's statement (purgeOldEvents); exported for its plan check (plans_test.ts). */
export function purgeStatement(sql: Queryable, days: number): Fragment {
  return sql`
    DELETE FROM events WHERE recorded_at < now() - make_interval(days => ${days})
    RETURNING seq`;
}

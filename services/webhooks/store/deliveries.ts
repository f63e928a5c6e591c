import { Buffer } from "node:buffer";
import {
  type Fragment,
  oneStatement,
  platformStatement,
  type Queryable,
  read,
  type Sql,
  transaction,
} from "@printshop/shared/db";
import type postgres from "postgres";
import { withOrganization } from "@printshop/shared/db/tenancy";
import {
  type DELIVERY_SORT_FIELDS,
  DELIVERY_STATUSES,
  ListDeliveriesQuery,
  type WebhookDelivery,
} from "@printshop/shared/contracts/webhooks";
import { conflict, notFound } from "@printshop/shared/http";
import type { FieldTable } from "@printshop/shared/db/fields";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { nextAttemptDelay } from "../domain/retry_schedule.ts";
import type { DeliveredEvent } from "../domain/payload.ts";

/** A delivery a worker has claimed: everything needed to send it once. */
export interface ClaimedDelivery {
  id: string;
  /** Whose delivery it is, as its row says. */
  organizationId: string;
  /** This attempt's number, 1-based. */
  attempt: number;
  subscriptionId: string;
  url: string;
  includesCosts: boolean;
  eventId: string;
  event: DeliveredEvent;
  /** The trace the event's write began, which each attempt's span continues. */
  traceparent: string | null;
  /**
   * The subscription's signing secrets valid when it was claimed, newest first, still sealed:
   * read by the claim itself, so an attempt costs no statement of its own to sign.
   */
  sealedSecrets: Uint8Array[];
}

interface ClaimedRow {
  id: string;
  organization_id: string;
  attempt_count: number;
  subscription_id: string;
  url: string;
  includes_costs: boolean;
  event_id: string;
  type: string;
  occurred_at: Date;
  data: unknown;
  traceparent: string | null;
  sealed_secrets: string[];
}

/**
 * The claimed delivery's signing secrets, as `signingSecrets` reads them, for RETURNING: base64
 * in a JSON array, which every connection decodes alike (a `bytea[]` is decoded only once the
 * pool's connection has fetched the array types).
 */
const SEALED_SECRETS = `(
  SELECT coalesce(jsonb_agg(encode(k.sealed, 'base64') ORDER BY k.created_at DESC, k.id DESC),
                  '[]')
  FROM signing_secrets k
  WHERE k.subscription_id = d.subscription_id AND (k.expires_at IS NULL OR k.expires_at > now())
) AS sealed_secrets`;

const toClaimed = (row: ClaimedRow): ClaimedDelivery => ({
  id: row.id,
  organizationId: row.organization_id,
  attempt: row.attempt_count,
  subscriptionId: row.subscription_id,
  url: row.url,
  includesCosts: row.includes_costs,
  eventId: row.event_id,
  event: { type: row.type, occurredAt: row.occurred_at.toISOString(), data: row.data },
  traceparent: row.traceparent,
  sealedSecrets: row.sealed_secrets.map((sealed) => new Uint8Array(Buffer.from(sealed, "base64"))),
});

/**
 * Whether delivery `d`'s subscription is active, as a scalar sub-select: the planner keeps it a
 * lookup by primary key per delivery read, so a claim reads the due index in order and stops at
 * `limit`. Written as a join, it could be planned from the subscriptions side (a fresh table's
 * statistics say it is tiny), scanning every due index entry, dead ones included, once per
 * subscription: most of the database time of the delivery path under load.
 */
export const SUBSCRIPTION_ACTIVE = `(
  SELECT s.credential_revoked_at IS NULL AND s.scope_withdrawn_at IS NULL
  FROM subscriptions s WHERE s.id = d.subscription_id
)`;

/**
 * Claims up to `limit` due deliveries of active subscriptions. SKIP LOCKED lets replicas claim
 * side by side; pushing next_attempt_at past the lease makes the claim expire by itself. The
 * deliveries due are every organisation's, in one order, so the claim is the platform's (past the
 * row-level policies), one statement in a transaction of its own.
 */
export async function claimDueDeliveries(
  sql: Sql,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const rows = await platformStatement(sql, (tx) => claimStatement(tx, limit, leaseMs));
  return rows.map(toClaimed);
}

/** The claim's statement (claimDueDeliveries); exported for the plan checks (plans_test.ts). */
export function claimStatement(
  sql: Queryable,
  limit: number,
  leaseMs: number,
): postgres.PendingQuery<ClaimedRow[]> {
  return sql<ClaimedRow[]>`
    WITH due AS (
      SELECT d.id FROM deliveries d
      WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
        AND ${sql.unsafe(SUBSCRIPTION_ACTIVE)}
      ORDER BY d.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE deliveries d
    SET attempt_count = d.attempt_count + 1,
        next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
    FROM due, subscriptions s, events e
    WHERE d.id = due.id AND s.id = d.subscription_id AND e.id = d.event_id
      AND s.credential_revoked_at IS NULL AND s.scope_withdrawn_at IS NULL
    RETURNING d.id, d.organization_id, d.attempt_count, d.subscription_id, s.url,
              s.includes_costs, d.event_id, e.type, e.occurred_at, e.data, e.traceparent,
              ${sql.unsafe(SEALED_SECRETS)}`;
}

/**
 * Claims one failed delivery of a subscription for a replay requested by the integrator: 404
 * when the subscription has no such delivery, 409 when it cannot be replayed (not failed, or
 * its subscription is inactive, saying why in words an integrator can act on). The subscription
 * is held (FOR SHARE) from the check to the claim's commit: a revocation or a withdrawn read
 * scope either commits first, and the replay is refused, or waits for the claim, and then fails
 * the delivery it finds retrying (revokeCredential, applyPartnerGrant). Read without the lock,
 * one committed between the check and the claim left the delivery retrying for a revoked key.
 */
export async function claimFailedDelivery(
  sql: Sql,
  subscriptionId: string,
  deliveryId: string,
  leaseMs: number,
): Promise<ClaimedDelivery> {
  return await transaction(sql, async (tx) => {
    const [current] = await tx<{ status: string; revoked: boolean; withdrawn: boolean }[]>`
      SELECT d.status, s.credential_revoked_at IS NOT NULL AS revoked,
             s.scope_withdrawn_at IS NOT NULL AS withdrawn
      FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ${deliveryId} AND d.subscription_id = ${subscriptionId}
      FOR UPDATE OF d FOR SHARE OF s`;
    if (!current) throw notFound("Delivery", deliveryId);
    const inactive = current.revoked
      ? "the subscribing credential is revoked"
      : current.withdrawn
      ? "the partner app's grant no longer gives the read scope of this event"
      : null;
    if (inactive !== null) {
      throw conflict(`Delivery "${deliveryId}" cannot be replayed: ${inactive}`);
    }
    if (current.status !== "failed") {
      throw conflict(
        `Delivery "${deliveryId}" is ${current.status}; only a failed delivery can be replayed`,
      );
    }
    const [row] = await tx<ClaimedRow[]>`
      UPDATE deliveries d
      SET status = 'retrying', attempt_count = d.attempt_count + 1,
          next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
      FROM subscriptions s, events e
      WHERE d.id = ${deliveryId} AND s.id = d.subscription_id AND e.id = d.event_id
      RETURNING d.id, d.organization_id, d.attempt_count, d.subscription_id, s.url,
                s.includes_costs, d.event_id, e.type, e.occurred_at, e.data, e.traceparent,
                ${tx.unsafe(SEALED_SECRETS)}`;
    return toClaimed(row!);
  });
}

export interface AttemptRecord {
  startedAt: Date;
  durationMs: number;
  httpStatus: number | null;
  succeeded: boolean;
  failureReason: string | null;
  trigger: "automatic" | "manual";
}

/** One finished attempt of a claimed delivery, to record. */
export interface FinishedAttempt {
  delivery: ClaimedDelivery;
  attempt: AttemptRecord;
}

/**
 * Records an attempt and moves the delivery on: succeeded; retrying at the schedule's next
 * step; or failed when the schedule is used up (and after a manual replay, which does not start
 * the schedule again). A worker whose claim expired and was taken over, or whose delivery was
 * settled meanwhile (failed by a key revocation), only adds its attempt. One delivery, so a
 * transaction of its organisation's (as its claim found it).
 */
export async function recordAttempt(
  sql: Sql,
  delivery: ClaimedDelivery,
  attempt: AttemptRecord,
  schedule: readonly number[],
): Promise<void> {
  await withOrganization(
    delivery.organizationId,
    () => oneStatement(sql, (tx) => recordStatement(tx, [{ delivery, attempt }], schedule)),
  );
}

/**
 * Records many attempts in one statement, each exactly as `recordAttempt` does: the delivery
 * worker records the attempts that finished while its previous statement ran together, so
 * recording costs a fraction of a round trip per attempt under load instead of one. They are
 * several organisations' (whatever the claims gave), so the platform records them; each attempt
 * names its delivery's organisation as the claim read it, and the key (organization_id,
 * delivery_id) refuses an attempt whose delivery is not of that organisation (or is gone).
 */
export async function recordAttempts(
  sql: Sql,
  finished: readonly FinishedAttempt[],
  schedule: readonly number[],
): Promise<void> {
  if (finished.length === 0) return;
  await platformStatement(sql, (tx) => recordStatement(tx, finished, schedule));
}

function recordStatement(
  sql: Queryable,
  finished: readonly FinishedAttempt[],
  schedule: readonly number[],
): Fragment {
  const rows = finished.map(({ delivery, attempt }) => {
    const delay = attempt.succeeded || attempt.trigger === "manual"
      ? null
      : nextAttemptDelay(schedule, delivery.attempt);
    return {
      organization_id: delivery.organizationId,
      delivery_id: delivery.id,
      attempt: delivery.attempt,
      started_at: attempt.startedAt.toISOString(),
      duration_ms: Math.round(attempt.durationMs),
      http_status: attempt.httpStatus,
      succeeded: attempt.succeeded,
      failure_reason: attempt.failureReason,
      trigger: attempt.trigger,
      status: attempt.succeeded ? "succeeded" : delay === null ? "failed" : "retrying",
      delay_s: delay === null ? null : delay / 1000,
    };
  });
  return sql`
    WITH finished AS MATERIALIZED (
      SELECT * FROM jsonb_to_recordset(${sql.json(rows as Parameters<typeof sql.json>[0])}::jsonb)
        AS r(organization_id uuid, delivery_id uuid, attempt integer, started_at timestamptz,
             duration_ms integer, http_status integer, succeeded boolean, failure_reason text,
             trigger text, status text, delay_s float8)
    ), attempt AS (
      INSERT INTO delivery_attempts
        (organization_id, delivery_id, attempt, started_at, duration_ms, http_status, succeeded,
         failure_reason, trigger)
      SELECT organization_id, delivery_id, attempt, started_at, duration_ms, http_status,
             succeeded, failure_reason, trigger
      FROM finished
    )
    UPDATE deliveries d
    SET status = f.status,
        next_attempt_at = now() + make_interval(secs => f.delay_s),
        last_http_status = f.http_status,
        last_failure_reason = f.failure_reason
    FROM finished f
    WHERE d.id = f.delivery_id AND d.attempt_count = f.attempt
      AND d.status IN ('pending', 'retrying')`;
}

/**
 * The deliveries table: the fields of WebhookDelivery it holds, in the order the resource shows
 * them; the event's type (joined) and the attempts (aggregated) are read beside them.
 */
const DELIVERIES = defineTable({
  name: "deliveries",
  tenant: true,
  noun: "Delivery",
  references: { subscription_id: "subscriptions", event_id: "events" },
  columns: {
    id: col.uuid(),
    webhookId: col.uuid().named("subscription_id"),
    eventId: col.uuid().filterable(),
    // The event's type (joined) and the attempts (aggregated) are read beside the columns.
    eventType: col.computed<string>(),
    status: col.enum(DELIVERY_STATUSES).filterable(),
    createdAt: col.timestamp().filterable(),
    nextAttemptAt: col.timestamp().nullable(),
    lastHttpStatus: col.integer().nullable().filterable(),
    lastFailureReason: col.text().nullable(),
    attempts: col.computed<WebhookDelivery["attempts"]>(),
  },
});

// A LEFT JOIN, though every delivery has its event (event_id is NOT NULL and references it):
// events.id is unique, so a statement that reads nothing of the event (the list's count, unless
// it filters on the event type) drops the join, where an inner join made the count read every
// event of the shop (267 ms at 2,000 deliveries beside 200,000 events, `deno task bench:scale`).
const DELIVERY_FROM = "deliveries d LEFT JOIN events e ON e.id = d.event_id";

const DELIVERY_COLUMNS = `${DELIVERIES.selectAs("d")}, e.type,
  coalesce((
    SELECT jsonb_agg(jsonb_build_object(
      'attempt', a.attempt,
      'startedAt', to_char(a.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'durationMs', a.duration_ms,
      'httpStatus', a.http_status,
      'succeeded', a.succeeded,
      'failureReason', a.failure_reason,
      'trigger', a.trigger) ORDER BY a.started_at, a.id)
    FROM delivery_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempts`;

type DeliveryRow = RowOf<typeof DELIVERIES> & {
  type: string;
  attempts: WebhookDelivery["attempts"];
};

function toDelivery(row: DeliveryRow): WebhookDelivery {
  const delivery = DELIVERIES.read(row, { eventType: row.type, attempts: row.attempts });
  // Only a delivery still to be tried shows when its next attempt is due.
  const due = delivery.status === "pending" || delivery.status === "retrying";
  return { ...delivery, nextAttemptAt: due ? delivery.nextAttemptAt : null };
}

/** The delivery history's fields: what `filters` may name, and what `sortField` orders on. */
export const DELIVERY_FIELDS = DELIVERIES.fields("d", {
  eventType: { type: "text", column: "e.type" },
}) satisfies FieldTable<typeof DELIVERY_SORT_FIELDS[number]>;

export const DELIVERY_LIST = listSpec(ListDeliveriesQuery, {
  from: DELIVERY_FROM,
  select: DELIVERY_COLUMNS,
  id: "d.id",
  fields: DELIVERY_FIELDS,
  // Newest first, also when createdAt is asked for without a direction.
  order: { field: "createdAt", direction: "desc" },
  sortedDirection: "desc",
});

/**
 * A subscription's deliveries, newest first unless asked otherwise, each with its attempts
 * (never a response body).
 */
export async function listDeliveries(
  sql: Queryable,
  subscriptionId: string,
  query: ListDeliveriesQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<WebhookDelivery>> {
  return await offsetPage(
    sql,
    DELIVERY_LIST,
    { where: sql`d.subscription_id = ${subscriptionId}`, query, pageSizeMax },
    (rows: DeliveryRow[]) => rows.map(toDelivery),
  );
}

export async function findDelivery(
  sql: Queryable,
  subscriptionId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const [row] = await read(sql, (q) =>
    q<DeliveryRow[]>`
      SELECT ${q.unsafe(DELIVERY_COLUMNS)} FROM ${q.unsafe(DELIVERY_FROM)}
      WHERE d.id = ${deliveryId} AND d.subscription_id = ${subscriptionId}`);
  if (!row) throw notFound("Delivery", deliveryId);
  return toDelivery(row);
}

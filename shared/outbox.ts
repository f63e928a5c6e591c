import { type Queryable, sendBeforeCommit, wakeAfterCommit } from "./db/mod.ts";
import { uuidv7 } from "./ids.ts";
import { currentTraceparent } from "./telemetry.ts";
import { OUTBOX_CHANNEL } from "./events/relay.ts";
import { eventDefinition, type EventType } from "./events/catalogue.ts";
import type { EventData } from "./contracts/platform.ts";
import { assertEventDeclared, assertMatches, checking } from "./contract_checks.ts";

export interface NewEvent<T extends EventType> {
  organizationId: string;
  /** A declared event (shared/contracts): its payload type follows from its name. */
  type: T;
  aggregateId: string;
  payload: EventData<T>;
}

/**
 * Records an event in the service's `outbox` table. Call it with the transaction that makes the
 * change, so the event exists exactly when the change does. The relay is woken at commit (and not
 * at all on rollback): in this process once the write has committed, where the transaction is one
 * of db/mod.ts's and the pool's relay runs here (db/commit_wakes.ts), else by a notification. With
 * contract checks on, the payload must match its event's schema and the running operation must
 * declare the event.
 */
export async function writeEvent<T extends EventType>(
  tx: Queryable,
  event: NewEvent<T>,
): Promise<string> {
  const [id] = await writeEvents(tx, [event]);
  return id!;
}

/**
 * Records many events in one statement, in the order given (a bulk write's one event per row),
 * with one notification. Same rules and checks as writeEvent.
 */
export async function writeEvents<T extends EventType>(
  tx: Queryable,
  events: readonly NewEvent<T>[],
): Promise<string[]> {
  if (events.length === 0) return [];
  for (const event of events) assertPayload(event.type, event.payload);
  const traceparent = currentTraceparent();
  const ids = events.map(() => uuidv7());
  // clock_timestamp(), not now(): rows are ordered by when they were written, which follows
  // the row locks a change holds, rather than by when the transaction began. Within one
  // statement the ids (time-ordered) keep the given order.
  // Nothing waits for the INSERT's answer: in a transaction() it travels with the COMMIT.
  await sendBeforeCommit(
    tx,
    tx`
    WITH written AS (
      INSERT INTO outbox
        (id, organization_id, type, aggregate_id, payload, traceparent, created_at)
      SELECT e.id, e.organization_id, e.type, e.aggregate_id, e.payload,
             ${traceparent}, clock_timestamp()
      FROM jsonb_to_recordset(${
      tx.json(
        events.map((event, i) => ({
          id: ids[i],
          organization_id: event.organizationId,
          type: event.type,
          aggregate_id: event.aggregateId,
          payload: event.payload,
        })) as Parameters<typeof tx.json>[0],
      )
    }::jsonb) AS e(id uuid, organization_id uuid, type text, aggregate_id uuid, payload jsonb)
      ORDER BY e.id
    )
    SELECT ${tx.unsafe(notifySql(tx))}`,
  );
  return ids;
}

/** Wakes the relay of the writing schema (relay.ts's `outboxChannel`) at commit, not on rollback. */
const NOTIFY_SQL = `pg_notify('${OUTBOX_CHANNEL}.' || current_schema(), '')`;

/**
 * What a statement recording an event selects to wake the relay: nothing when the relay is woken in
 * this process once the write commits, else the notification.
 */
function notifySql(tx: Queryable): string {
  return wakeAfterCommit(tx) ? "NULL" : NOTIFY_SQL;
}

/** Catalogue and, under contract checks, the running operation's declaration and the schema. */
function assertPayload(type: EventType, payload: unknown): void {
  const definition = eventDefinition(type);
  if (!definition) {
    // Integrators learn event names from the catalogue; an unlisted one would reach nobody.
    throw new Error(`Event type "${type}" is not declared in shared/contracts`);
  }
  if (checking()) {
    assertEventDeclared(type);
    assertMatches(definition.data, payload, `The payload of event "${type}"`);
  }
}

/** A piece of SQL, with its parameters, to place in another statement. */
type Fragment = ReturnType<Queryable["unsafe"]>;

/** An event whose payload the writing statement itself computes (see eventWrittenBy). */
export interface EventInStatement<T extends EventType> {
  organizationId: string;
  type: T;
  aggregateId: string;
  /** The name of the statement's CTE or table that has the payload. */
  from: string;
  /** The payload as JSON text, an SQL expression over `from`. */
  payloadSql: string;
}

/** What eventWrittenBy gives the statement that makes the change. */
export interface EventWriting {
  /** A data-modifying CTE body (`INSERT INTO outbox …`), for `WITH event AS (…)`. */
  insert: Fragment;
  /** A select-list item the statement must include, so the relay is woken at commit. */
  notify: Fragment;
  /**
   * Under contract checks: the statement should answer its payload too (as `payloadSql` in its
   * select list, else NULL) and hand it to `check`, which validates it against the event's
   * schema. Otherwise false, and `check` does nothing.
   */
  checked: boolean;
  check(payloadJson: string | null): void;
}

/**
 * Records an event inside the one statement that makes the change (a quote create is one
 * statement, so its row lock is held for that statement alone, not across round trips): the
 * outbox row is a data-modifying CTE whose payload is computed from the statement's own rows, so
 * it is never built in JavaScript. Same row, same notification and same checks as writeEvent; the
 * payload's schema check runs on what the statement answers, after it.
 */
export function eventWrittenBy<T extends EventType>(
  tx: Queryable,
  event: EventInStatement<T>,
): EventWriting {
  if (!eventDefinition(event.type)) assertPayload(event.type, undefined);
  if (checking()) assertEventDeclared(event.type);
  return {
    insert: tx`
      INSERT INTO outbox
        (id, organization_id, type, aggregate_id, payload, traceparent, created_at)
      SELECT ${uuidv7()}::uuid, ${event.organizationId}::uuid, ${event.type},
             ${event.aggregateId}::uuid, (${tx.unsafe(event.payloadSql)})::jsonb,
             ${currentTraceparent()}, clock_timestamp()
      FROM ${tx.unsafe(event.from)}`,
    notify: tx.unsafe(notifySql(tx)),
    checked: checking(),
    check: (payloadJson) => {
      if (checking()) assertPayload(event.type, JSON.parse(payloadJson ?? "null"));
    },
  };
}

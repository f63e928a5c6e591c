import type { Queryable } from "./db/mod.ts";
import { uuidv7 } from "./ids.ts";
import { context, propagation } from "@opentelemetry/api";
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
 * change, so the event exists exactly when the change does. The notification is delivered at
 * commit (and not at all on rollback), which wakes the relay at once. With contract checks on,
 * the payload must match its event's schema and the running operation must declare the event.
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
  for (const event of events) {
    const definition = eventDefinition(event.type);
    if (!definition) {
      // Integrators learn event names from the catalogue; an unlisted one would reach nobody.
      throw new Error(`Event type "${event.type}" is not declared in shared/contracts`);
    }
    if (checking()) {
      assertEventDeclared(event.type);
      assertMatches(definition.data, event.payload, `The payload of event "${event.type}"`);
    }
  }
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const ids = events.map(() => uuidv7());
  // clock_timestamp(), not now(): rows are ordered by when they were written, which follows
  // the row locks a change holds, rather than by when the transaction began. Within one
  // statement the ids (time-ordered) keep the given order.
  await tx`
    WITH written AS (
      INSERT INTO outbox
        (id, organization_id, type, aggregate_id, payload, traceparent, created_at)
      SELECT e.id, e.organization_id, e.type, e.aggregate_id, e.payload,
             ${carrier.traceparent ?? null}, clock_timestamp()
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
    SELECT pg_notify(${OUTBOX_CHANNEL}, current_schema())`;
  return ids;
}

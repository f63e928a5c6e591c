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
  const definition = eventDefinition(event.type);
  if (!definition) {
    // Integrators learn event names from the catalogue; an unlisted one would reach nobody.
    throw new Error(`Event type "${event.type}" is not declared in shared/contracts`);
  }
  if (checking()) {
    assertEventDeclared(event.type);
    assertMatches(definition.data, event.payload, `The payload of event "${event.type}"`);
  }
  const id = uuidv7();
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  // clock_timestamp(), not now(): rows are ordered by when they were written, which follows
  // the row locks a change holds, rather than by when the transaction began.
  await tx`
    WITH written AS (
      INSERT INTO outbox
        (id, organization_id, type, aggregate_id, payload, traceparent, created_at)
      VALUES (${id}, ${event.organizationId}, ${event.type}, ${event.aggregateId},
              ${tx.json(event.payload as Parameters<typeof tx.json>[0])},
              ${carrier.traceparent ?? null}, clock_timestamp())
    )
    SELECT pg_notify(${OUTBOX_CHANNEL}, current_schema())`;
  return id;
}

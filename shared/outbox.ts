import type { Queryable } from "./db/mod.ts";
import { uuidv7 } from "./ids.ts";
import { context, propagation } from "@opentelemetry/api";
import { OUTBOX_CHANNEL } from "./events/relay.ts";
import { eventDefinition } from "./events/catalogue.ts";

export interface NewEvent {
  organizationId: string;
  /** Past tense, `<resource>.<verb>`: `quote.created`; listed in shared/events/catalogue.ts. */
  type: string;
  aggregateId: string;
  payload: unknown;
}

/**
 * Records an event in the service's `outbox` table. Call it with the transaction that makes the
 * change, so the event exists exactly when the change does. The notification is delivered at
 * commit (and not at all on rollback), which wakes the relay at once.
 */
export async function writeEvent(tx: Queryable, event: NewEvent): Promise<string> {
  if (!eventDefinition(event.type)) {
    // Integrators learn event names from the catalogue; an unlisted one would reach nobody.
    throw new Error(`Event type "${event.type}" is not in shared/events/catalogue.ts`);
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

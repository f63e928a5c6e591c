import type { Queryable } from "./db/mod.ts";
import { uuidv7 } from "./ids.ts";
import { context, propagation } from "@opentelemetry/api";

export interface NewEvent {
  organizationId: string;
  /** Past tense, `<resource>.<verb>`: `quote.created`. */
  type: string;
  aggregateId: string;
  payload: unknown;
}

/**
 * Records an event in the service's `outbox` table. Call it with the transaction that makes the
 * change, so the event exists exactly when the change does.
 */
export async function writeEvent(tx: Queryable, event: NewEvent): Promise<string> {
  const id = uuidv7();
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  await tx`
    INSERT INTO outbox (id, organization_id, type, aggregate_id, payload, traceparent)
    VALUES (${id}, ${event.organizationId}, ${event.type}, ${event.aggregateId},
            ${tx.json(event.payload as Parameters<typeof tx.json>[0])}, ${
    carrier.traceparent ?? null
  })`;
  return id;
}

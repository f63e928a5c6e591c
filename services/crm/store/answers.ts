/** How a CRM store announces its resources: one event per resource, in order. */
import type { Queryable } from "@printshop/shared/db";
import type { EventData, EventType } from "@printshop/shared/contracts/platform";
import { writeEvents } from "@printshop/shared/outbox";

/**
 * Writes an event of `type` for each resource, in order, each about the resource it carries
 * (its id the aggregate's): in the transaction that made the change (shared/outbox.ts).
 */
export async function announce<T extends EventType>(
  tx: Queryable,
  organizationId: string,
  type: T,
  payloads: readonly (EventData<T> & { id: string })[],
): Promise<void> {
  await writeEvents(
    tx,
    payloads.map((payload) => ({ organizationId, type, aggregateId: payload.id, payload })),
  );
}

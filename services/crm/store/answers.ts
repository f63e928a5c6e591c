/**
 * How a store hands its resources out: in the key order they have always had, and announced as
 * events. One of each for every CRM store.
 */
import type { Queryable } from "@printshop/shared/db";
import type { EventData, EventType } from "@printshop/shared/contracts/platform";
import { writeEvents } from "@printshop/shared/outbox";

/**
 * `fields` with `extra` inserted before the field `before` (appended when it has none): fields a
 * store computes, placed among those a table reads (shared/db/table.ts) where the resource has
 * always shown them, since clients and event consumers see the key order.
 */
export function placedBefore<T extends object, E extends object>(
  fields: T,
  before: keyof T & string,
  extra: E,
): T & E {
  const out: Record<string, unknown> = {};
  let placed = false;
  for (const [key, value] of Object.entries(fields)) {
    if (key === before) {
      Object.assign(out, extra);
      placed = true;
    }
    out[key] = value;
  }
  if (!placed) Object.assign(out, extra);
  return out as T & E;
}

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

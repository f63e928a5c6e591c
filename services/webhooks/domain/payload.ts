import { COST_FIELDS } from "@printshop/shared/costs";

const COSTS = new Set<string>(COST_FIELDS);

/**
 * A copy of event data without cost fields at any depth: events are recorded with costs, and a
 * subscriber or log reader without costs.read must not learn them.
 */
export function withoutCosts(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(withoutCosts);
  if (data !== null && typeof data === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      if (!COSTS.has(key)) copy[key] = withoutCosts(value);
    }
    return copy;
  }
  return data;
}

export interface DeliveredEvent {
  type: string;
  occurredAt: string;
  data: unknown;
}

/** The delivery body: `{ type, timestamp, data }`, per Standard Webhooks. */
export function deliveryBody(event: DeliveredEvent, includesCosts: boolean): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.occurredAt,
    data: includesCosts ? event.data : withoutCosts(event.data),
  });
}

import { withoutCosts } from "@printshop/shared/costs";

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

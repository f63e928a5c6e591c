import type { EventDefinition, EventOwner } from "../contracts/events.ts";
import { EVENTS, type EventType } from "../contracts/platform.ts";
import { topicOf } from "./bus.ts";

export type { EventDefinition, EventOwner, EventType };

/**
 * Every event the platform emits, as the contracts declare them beside their resources: its
 * name, the service whose topic carries it, the scope a credential needs to see it (subscribe to
 * it, read it in the event log), and the schema of its `data`. The public catalogue, the
 * AsyncAPI document and the webhooks service all read this list; `writeEvent` accepts nothing
 * else.
 */
export const EVENT_DEFINITIONS: readonly EventDefinition[] = Object.values(EVENTS);

const BY_TYPE = new Map(EVENT_DEFINITIONS.map((d) => [d.type, d]));

export function eventDefinition(type: string): EventDefinition | undefined {
  return BY_TYPE.get(type);
}

/** Names an integrator can subscribe to and read: everything with a read scope. */
export const PUBLIC_EVENT_TYPES: readonly string[] = EVENT_DEFINITIONS
  .filter((d) => d.readScope !== null).map((d) => d.type);

/** The topics that carry events, one per emitting service. */
export const EVENT_TOPICS: readonly string[] = [
  ...new Set(EVENT_DEFINITIONS.map((d) => topicOf(d.service))),
];

export const EVENT_CATALOGUE_NOTE =
  "Subscribe with POST /v1/webhooks { url, event }. Each delivery is signed per Standard " +
  "Webhooks (webhook-id, webhook-timestamp, webhook-signature) and its body is " +
  "{ type, timestamp, data }; webhook-id is the event id, so deduplicate on it. Subscribing " +
  "needs the read scope of the event's area, and cost fields are left out unless the " +
  "subscribing credential holds costs.read. Missed deliveries can be caught up through " +
  "GET /v1/event-log?after=<eventId>.";

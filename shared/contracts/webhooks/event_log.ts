/** The event catalogue and an organisation's event log, to catch up on missed deliveries. */
import { z } from "zod";
import { DateTime, Uuid } from "../common.ts";
import { PositiveIntParam } from "../lists.ts";
import { operations } from "../operation.ts";

export const EventCatalogue = z.object({
  events: z.array(z.string()),
  note: z.string(),
}).meta({ id: "EventCatalogue" });

export const EventLogEntry = z.object({
  id: Uuid,
  type: z.string(),
  occurredAt: DateTime,
  aggregateId: Uuid.nullable(),
  data: z.unknown(),
}).meta({ id: "EventLogEntry" });

export const EventLogQuery = z.strictObject({
  after: Uuid.optional(),
  // At least 1: an empty page would say hasMore forever to a client that loops on it.
  limit: PositiveIntParam.optional(),
});

export const EventLogPage = z.object({
  items: z.array(EventLogEntry),
  /** Pass as `after` to continue: the last event of this page, else the `after` given (null if none). */
  lastEventId: Uuid.nullable(),
  hasMore: z.boolean(),
}).meta({ id: "EventLogPage" });
export type EventLogPage = z.infer<typeof EventLogPage>;

export const eventLogOperations = operations("Events", {
  getEventCatalogue: {
    method: "GET",
    path: "/v1/reference/events",
    scope: null,
    summary: "Every event name a webhook can subscribe to, and how deliveries work",
    responses: { 200: EventCatalogue },
  },
  getEventLog: {
    method: "GET",
    path: "/v1/event-log",
    scope: null,
    summary:
      "This organisation's events in order, after a given event id; only areas the credential can read",
    query: EventLogQuery,
    responses: { 200: EventLogPage },
  },
});

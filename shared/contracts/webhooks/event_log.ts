/** The event catalogue and an organisation's event log, to catch up on missed deliveries. */
import { z } from "zod";
import { DateTime, described, setExamples, Uuid } from "../common.ts";
import { PositiveIntParam } from "../lists.ts";
import { operations } from "../operation.ts";

export const EventCatalogue = z.object(described({
  events: z.array(z.string()),
  note: z.string(),
}, {
  events: "Every event name a webhook can subscribe to",
  note: "How subscriptions, signatures and catching up work, in brief",
})).meta({ id: "EventCatalogue", description: "The events a webhook can subscribe to" });
setExamples(EventCatalogue, {
  events: ["quote.created", "quote.updated", "quote.status_changed", "quote.deleted"],
  note: "Subscribe with POST /v1/webhooks { url, event }; deliveries are signed per Standard " +
    "Webhooks, and GET /v1/event-log?after=<eventId> catches up on missed ones.",
});

export const EventLogEntry = z.object(described({
  id: Uuid,
  type: z.string(),
  occurredAt: DateTime,
  aggregateId: Uuid.nullable(),
  data: z.unknown(),
}, {
  id: "The event's id, the same as a delivery's `webhook-id`",
  type: "The event's name",
  occurredAt: "When the change happened",
  aggregateId: "The id of the row the event is about",
  data: "The event's payload, as a delivery carries it (/asyncapi.json gives each schema); " +
    "without costs.read, cost and margin fields are left out",
})).meta({ id: "EventLogEntry", description: "One event of the organisation's log" });

export const EventLogQuery = z.strictObject(described({
  after: Uuid.optional(),
  // At least 1: an empty page would say hasMore forever to a client that loops on it.
  limit: PositiveIntParam.optional(),
}, {
  after: "Start after this event (a `lastEventId`); from the oldest event when omitted",
  limit: "Most events to answer, a whole number ≥ 1; capped at `pageSizeMax`",
}));

export const EventLogPage = z.object(described({
  items: z.array(EventLogEntry),
  lastEventId: Uuid.nullable(),
  hasMore: z.boolean(),
}, {
  items: "Events in the order they happened, only of areas the credential can read",
  lastEventId: "Pass as `after` to continue: the last event of this page, else the `after` " +
    "given (null if none)",
  hasMore: "Whether more events follow this page",
})).meta({ id: "EventLogPage", description: "A page of the event log" });
export type EventLogPage = z.infer<typeof EventLogPage>;
setExamples(EventLogPage, {
  items: [{
    id: "0193a1b2-f1e0-7d3c-a2b1-908f7e6d5c4b",
    type: "quote_line.deleted",
    occurredAt: "2026-03-02T10:02:44.318Z",
    aggregateId: "0193a1b2-4c5f-7081-8b12-3d4e5f607182",
    data: {
      id: "0193a1b2-4c5f-7081-8b12-3d4e5f607182",
      quoteGroupId: "0193a1b2-4c5e-7f70-9a01-2c3d4e5f6071",
    },
  }],
  lastEventId: "0193a1b2-f1e0-7d3c-a2b1-908f7e6d5c4b",
  hasMore: false,
});

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
    examples: { query: { after: "0193a1b2-e0d1-7c2b-9a08-1f2e3d4c5b6a", limit: "100" } },
  },
});

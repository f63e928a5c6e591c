/** Webhook subscriptions of the calling credential, their signing secrets and deliveries. */
import { z } from "zod";
import { WEBHOOK_SECRET_OVERLAP_HOURS } from "../../limits.ts";
import { DateTime, Deleted, described, page, setExamples, Uuid } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { operations } from "../operation.ts";

export const WEBHOOK_URL_MAX = 2048;

/** One description per field, for the subscription and its write bodies. */
const SUBSCRIPTION_DESCRIPTIONS = {
  id: "The subscription's id",
  event: "The event name delivered (GET /v1/reference/events lists them); subscribing needs " +
    "the read scope of the event's area",
  url: "Where deliveries are POSTed: a public http(s) URL, stored in canonical form",
  includesCosts: "Whether deliveries carry cost and margin fields: the subscribing credential " +
    "held costs.read",
  active: "False once the subscribing credential is revoked; nothing is delivered then",
  createdAt: "When the subscription was made",
  secretRotatedAt: "When the signing secret was last rotated; null if never",
  secret: "Signing secret (`whsec_…`); present only in the answer that created the " +
    "subscription or rotated its secret",
  previousSecretExpiresAt: "After a rotation: until when deliveries are also signed with the " +
    "previous secret",
};

export const CreateWebhookBody = z.strictObject(described({
  url: z.string().trim().min(1, "Must not be empty").max(
    WEBHOOK_URL_MAX,
    `Must be at most ${WEBHOOK_URL_MAX} characters`,
  ),
  event: z.string().min(1, "Must not be empty").max(100, "Must be at most 100 characters"),
}, SUBSCRIPTION_DESCRIPTIONS)).meta({
  id: "CreateWebhookBody",
  description: "The event to subscribe to and where to deliver it",
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;
setExamples(CreateWebhookBody, {
  url: "https://erp.inkwellprint.com.au/hooks/printshop",
  event: "quote.status_changed",
});

export const UpdateWebhookBody = z.strictObject({
  url: CreateWebhookBody.shape.url,
}).meta({ id: "UpdateWebhookBody", description: "The subscription's new target" });
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>;
setExamples(UpdateWebhookBody, { url: "https://erp.inkwellprint.com.au/hooks/printshop-v2" });

export const WebhookSubscription = z.object(described({
  id: Uuid,
  event: z.string(),
  url: z.string(),
  includesCosts: z.boolean(),
  active: z.boolean(),
  createdAt: DateTime,
  secretRotatedAt: DateTime.nullable(),
  secret: z.string().optional(),
  previousSecretExpiresAt: DateTime.optional(),
}, SUBSCRIPTION_DESCRIPTIONS)).meta({
  id: "WebhookSubscription",
  description: "A subscription of the calling credential to one event",
});
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

/** The shop's ERP hears when a quote changes status. */
const SUBSCRIPTION_EXAMPLE: WebhookSubscription = {
  id: "0193a0f0-9b8c-7d6e-8f5a-4b3c2d1e0f9a",
  event: "quote.status_changed",
  url: "https://erp.inkwellprint.com.au/hooks/printshop",
  includesCosts: false,
  active: true,
  createdAt: "2026-02-27T22:10:31.220Z",
  secretRotatedAt: null,
};
setExamples(WebhookSubscription, SUBSCRIPTION_EXAMPLE);

export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES, {
  error: `Must be one of ${DELIVERY_STATUSES.join(", ")}`,
});

export const DELIVERY_TRIGGERS = ["automatic", "manual"] as const;

export const DeliveryAttempt = z.object(described({
  attempt: z.int().min(1),
  startedAt: DateTime,
  durationMs: z.int().min(0),
  httpStatus: z.int().nullable(),
  succeeded: z.boolean(),
  failureReason: z.string().nullable(),
  trigger: z.enum(DELIVERY_TRIGGERS),
}, {
  attempt: "1 for the first attempt, counting up",
  startedAt: "When the attempt started",
  durationMs: "How long it took, in milliseconds",
  httpStatus: "The endpoint's HTTP status; null when no answer came",
  succeeded: "Whether the endpoint answered 2xx",
  failureReason: "Why it failed, in words to act on (`connection refused`, `timed out after " +
    "10000 ms`, `HTTP 503 from endpoint`); null on success",
  trigger: "`automatic` (the retry schedule) or `manual` (a replay through the API)",
})).meta({ id: "WebhookDeliveryAttempt", description: "One attempt to deliver an event" });

export const WebhookDelivery = z.object(described({
  id: Uuid,
  webhookId: Uuid,
  eventId: Uuid,
  eventType: z.string(),
  status: DeliveryStatus,
  createdAt: DateTime,
  nextAttemptAt: DateTime.nullable(),
  lastHttpStatus: z.int().nullable(),
  lastFailureReason: z.string().nullable(),
  attempts: z.array(DeliveryAttempt),
}, {
  id: "The delivery's id",
  webhookId: "The subscription it belongs to",
  eventId: "The event delivered; also the `webhook-id` header, to deduplicate on",
  eventType: "The event's name",
  status: "`pending` or `retrying` while attempts remain, then `succeeded` or `failed`; only " +
    "a failed delivery can be replayed",
  createdAt: "When the event was queued for this subscription",
  nextAttemptAt: "When the next automatic attempt is due; null when none is",
  lastHttpStatus: "The HTTP status of the latest attempt; null when no answer came",
  lastFailureReason: "Why the latest attempt failed; null after a success",
  attempts: "Every attempt so far, oldest first; response bodies are never kept",
})).meta({ id: "WebhookDelivery", description: "An event's delivery to one subscription" });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** A delivery the ERP refused twice while it was down for maintenance. */
const DELIVERY_EXAMPLE: WebhookDelivery = {
  id: "0193a1b3-0a1b-7c2d-9e3f-4a5b6c7d8e9f",
  webhookId: SUBSCRIPTION_EXAMPLE.id,
  eventId: "0193a1b3-09f2-7a41-b6c8-d1e2f3a4b5c6",
  eventType: "quote.status_changed",
  status: "retrying",
  createdAt: "2026-03-02T10:02:44.401Z",
  nextAttemptAt: "2026-03-02T10:38:10.052Z",
  lastHttpStatus: 503,
  lastFailureReason: "HTTP 503 from endpoint",
  attempts: [
    {
      attempt: 1,
      startedAt: "2026-03-02T10:02:44.512Z",
      durationMs: 184,
      httpStatus: 503,
      succeeded: false,
      failureReason: "HTTP 503 from endpoint",
      trigger: "automatic",
    },
    {
      attempt: 2,
      startedAt: "2026-03-02T10:08:09.877Z",
      durationMs: 175,
      httpStatus: 503,
      succeeded: false,
      failureReason: "HTTP 503 from endpoint",
      trigger: "automatic",
    },
  ],
};
setExamples(WebhookDelivery, DELIVERY_EXAMPLE);

export const WEBHOOK_SORT_FIELDS = ["createdAt", "event", "url"] as const;

export const ListWebhooksQuery = offsetListQuery({
  sortFields: WEBHOOK_SORT_FIELDS,
  named: described({
    event: z.string().max(100, "Must be at most 100 characters").optional(),
  }, { event: "Only subscriptions to this event" }),
});
export type ListWebhooksQuery = z.infer<typeof ListWebhooksQuery>;

export const DELIVERY_SORT_FIELDS = ["createdAt"] as const;

/** Newest first unless asked otherwise. */
export const ListDeliveriesQuery = offsetListQuery({
  sortFields: DELIVERY_SORT_FIELDS,
  named: described({ status: DeliveryStatus.optional() }, {
    status: "Only deliveries in this status",
  }),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const webhookOperations = operations("Webhooks", {
  listWebhooks: {
    method: "GET",
    path: "/v1/webhooks",
    scope: "webhooks.read",
    summary: "This credential's webhook subscriptions, oldest first unless sorted otherwise",
    query: ListWebhooksQuery,
    responses: { 200: page(WebhookSubscription) },
    examples: { query: { event: "quote.status_changed" } },
  },
  createWebhook: {
    method: "POST",
    path: "/v1/webhooks",
    scope: "webhooks.write",
    summary:
      "Subscribe a URL to an event (needs the event area's read scope too); the secret is shown once",
    body: CreateWebhookBody,
    responses: { 201: WebhookSubscription, 200: WebhookSubscription },
    examples: {
      // Only a new subscription shows its secret; subscribing again answers 200 without it.
      responses: {
        201: {
          ...SUBSCRIPTION_EXAMPLE,
          secret: "whsec_rZBq/0SkZm+5i0fhHljA4DMOhsdengJ8khFhNv4NjS4=",
        },
      },
    },
  },
  getWebhook: {
    method: "GET",
    path: "/v1/webhooks/{webhookId}",
    scope: "webhooks.read",
    summary: "One subscription of this credential",
    responses: { 200: WebhookSubscription },
  },
  updateWebhook: {
    method: "PATCH",
    path: "/v1/webhooks/{webhookId}",
    scope: "webhooks.write",
    summary: "Point a subscription at another URL; its secret and delivery history stay",
    body: UpdateWebhookBody,
    responses: { 200: WebhookSubscription },
    examples: {
      responses: {
        200: { ...SUBSCRIPTION_EXAMPLE, url: "https://erp.inkwellprint.com.au/hooks/printshop-v2" },
      },
    },
  },
  deleteWebhook: {
    method: "DELETE",
    path: "/v1/webhooks/{webhookId}",
    scope: "webhooks.write",
    summary: "Unsubscribe; succeeds for an unknown id too",
    responses: { 200: Deleted },
    unknownIdSucceeds: true,
  },
  rotateWebhookSecret: {
    method: "POST",
    path: "/v1/webhooks/{webhookId}/rotate-secret",
    scope: "webhooks.write",
    summary:
      `Issue a new signing secret; the old one keeps signing deliveries for ${WEBHOOK_SECRET_OVERLAP_HOURS} hours`,
    responses: { 200: WebhookSubscription },
    examples: {
      responses: {
        200: {
          ...SUBSCRIPTION_EXAMPLE,
          secretRotatedAt: "2026-03-04T01:00:00.000Z",
          secret: "whsec_5Ca1ASgk47Qy+o/DfjZv/1YTyQU0dhemmB4sVHnfiMY=",
          previousSecretExpiresAt: "2026-03-06T01:00:00.000Z",
        },
      },
    },
  },
  listWebhookDeliveries: {
    method: "GET",
    path: "/v1/webhooks/{webhookId}/deliveries",
    scope: "webhooks.read",
    summary:
      "Deliveries of a subscription, newest first, with every attempt; never a response body",
    query: ListDeliveriesQuery,
    responses: { 200: page(WebhookDelivery) },
    examples: { query: { limit: "20" } },
  },
  retryWebhookDelivery: {
    method: "POST",
    path: "/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry",
    scope: "webhooks.write",
    summary: "Attempt a failed delivery again now and answer with the result (409 unless failed)",
    responses: { 200: WebhookDelivery },
    examples: {
      // The ERP is back: the replay succeeds.
      responses: {
        200: {
          ...DELIVERY_EXAMPLE,
          status: "succeeded",
          nextAttemptAt: null,
          lastHttpStatus: 200,
          lastFailureReason: null,
          attempts: [...DELIVERY_EXAMPLE.attempts, {
            attempt: 3,
            startedAt: "2026-03-02T11:47:03.338Z",
            durationMs: 212,
            httpStatus: 200,
            succeeded: true,
            failureReason: null,
            trigger: "manual",
          }],
        },
      },
    },
  },
});

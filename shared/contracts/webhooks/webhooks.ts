/** Webhook subscriptions of the calling credential, their signing secrets and deliveries. */
import { z } from "zod";
import { WEBHOOK_SECRET_OVERLAP_HOURS } from "../../limits.ts";
import { DateTime, Deleted, page, Uuid } from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { operations } from "../operation.ts";

export const WEBHOOK_URL_MAX = 2048;

export const CreateWebhookBody = z.strictObject({
  url: z.string().trim().min(1, "Must not be empty").max(
    WEBHOOK_URL_MAX,
    `Must be at most ${WEBHOOK_URL_MAX} characters`,
  ),
  event: z.string().min(1, "Must not be empty").max(100, "Must be at most 100 characters"),
}).meta({ id: "CreateWebhookBody" });
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const UpdateWebhookBody = z.strictObject({
  url: CreateWebhookBody.shape.url,
}).meta({ id: "UpdateWebhookBody" });
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>;

export const WebhookSubscription = z.object({
  id: Uuid,
  event: z.string(),
  url: z.string(),
  /** Whether deliveries carry cost fields: the subscribing credential held costs.read. */
  includesCosts: z.boolean(),
  /** False once the subscribing credential is revoked: nothing is delivered any more. */
  active: z.boolean(),
  createdAt: DateTime,
  secretRotatedAt: DateTime.nullable(),
  /** Present only in the answer that created the subscription or rotated its secret. */
  secret: z.string().optional().meta({
    description: "Signing secret (whsec_…); shown once",
  }),
  previousSecretExpiresAt: DateTime.optional().meta({
    description: "After a rotation: until when deliveries are also signed with the old secret",
  }),
}).meta({ id: "WebhookSubscription" });
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const DELIVERY_STATUSES = ["pending", "retrying", "succeeded", "failed"] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES, {
  error: `Must be one of ${DELIVERY_STATUSES.join(", ")}`,
});

export const DELIVERY_TRIGGERS = ["automatic", "manual"] as const;

export const DeliveryAttempt = z.object({
  attempt: z.int().min(1),
  startedAt: DateTime,
  durationMs: z.int().min(0),
  httpStatus: z.int().nullable(),
  succeeded: z.boolean(),
  /** Actionable: "connection refused", "timed out after 10000 ms", "HTTP 503 from endpoint"… */
  failureReason: z.string().nullable(),
  trigger: z.enum(DELIVERY_TRIGGERS),
}).meta({ id: "WebhookDeliveryAttempt" });

export const WebhookDelivery = z.object({
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
}).meta({ id: "WebhookDelivery" });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WEBHOOK_SORT_FIELDS = ["createdAt", "event", "url"] as const;

export const ListWebhooksQuery = offsetListQuery({
  sortFields: WEBHOOK_SORT_FIELDS,
  named: { event: z.string().max(100, "Must be at most 100 characters").optional() },
});
export type ListWebhooksQuery = z.infer<typeof ListWebhooksQuery>;

export const DELIVERY_SORT_FIELDS = ["createdAt"] as const;

/** Newest first unless asked otherwise. */
export const ListDeliveriesQuery = offsetListQuery({
  sortFields: DELIVERY_SORT_FIELDS,
  named: { status: DeliveryStatus.optional() },
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
  },
  createWebhook: {
    method: "POST",
    path: "/v1/webhooks",
    scope: "webhooks.write",
    summary:
      "Subscribe a URL to an event (needs the event area's read scope too); the secret is shown once",
    body: CreateWebhookBody,
    responses: { 201: WebhookSubscription, 200: WebhookSubscription },
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
  },
  deleteWebhook: {
    method: "DELETE",
    path: "/v1/webhooks/{webhookId}",
    scope: "webhooks.write",
    summary: "Unsubscribe; succeeds for an unknown id too",
    responses: { 200: Deleted },
  },
  rotateWebhookSecret: {
    method: "POST",
    path: "/v1/webhooks/{webhookId}/rotate-secret",
    scope: "webhooks.write",
    summary:
      `Issue a new signing secret; the old one keeps signing deliveries for ${WEBHOOK_SECRET_OVERLAP_HOURS} hours`,
    responses: { 200: WebhookSubscription },
  },
  listWebhookDeliveries: {
    method: "GET",
    path: "/v1/webhooks/{webhookId}/deliveries",
    scope: "webhooks.read",
    summary:
      "Deliveries of a subscription, newest first, with every attempt; never a response body",
    query: ListDeliveriesQuery,
    responses: { 200: page(WebhookDelivery) },
  },
  retryWebhookDelivery: {
    method: "POST",
    path: "/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry",
    scope: "webhooks.write",
    summary: "Attempt a failed delivery again now and answer with the result (409 unless failed)",
    responses: { 200: WebhookDelivery },
  },
});

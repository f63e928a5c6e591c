import { z } from "zod";
import { DateTime, NonNegativeIntParam, SortDirection, Uuid } from "./common.ts";

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

export const DeliveryAttempt = z.object({
  attempt: z.int().min(1),
  startedAt: DateTime,
  durationMs: z.int().min(0),
  httpStatus: z.int().nullable(),
  succeeded: z.boolean(),
  /** Actionable: "connection refused", "timed out after 10000 ms", "HTTP 503 from endpoint"… */
  failureReason: z.string().nullable(),
  trigger: z.enum(["automatic", "manual"]),
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

const FiltersParam = z.string().max(20_000, "Must be at most 20000 characters").optional();

export const WEBHOOK_SORT_FIELDS = ["createdAt", "event", "url"] as const;

export const ListWebhooksQuery = z.strictObject({
  limit: NonNegativeIntParam.optional(),
  offset: NonNegativeIntParam.optional(),
  event: z.string().max(100, "Must be at most 100 characters").optional(),
  sortField: z.enum(WEBHOOK_SORT_FIELDS, {
    error: `Must be one of ${WEBHOOK_SORT_FIELDS.join(", ")}`,
  }).optional(),
  sortDirection: SortDirection.optional(),
  filters: FiltersParam,
});
export type ListWebhooksQuery = z.infer<typeof ListWebhooksQuery>;

export const DELIVERY_SORT_FIELDS = ["createdAt"] as const;

export const ListDeliveriesQuery = z.strictObject({
  limit: NonNegativeIntParam.optional(),
  offset: NonNegativeIntParam.optional(),
  status: DeliveryStatus.optional(),
  sortField: z.enum(DELIVERY_SORT_FIELDS, {
    error: `Must be one of ${DELIVERY_SORT_FIELDS.join(", ")}`,
  }).optional(),
  /** Newest first unless asked otherwise. */
  sortDirection: SortDirection.optional(),
  filters: FiltersParam,
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

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
  limit: z.string().regex(/^[1-9]\d{0,8}$/, "Must be a whole number ≥ 1").transform(Number)
    .optional(),
});

export const EventLogPage = z.object({
  items: z.array(EventLogEntry),
  /** Pass as `after` to continue: the last event of this page, else the `after` given (null if none). */
  lastEventId: Uuid.nullable(),
  hasMore: z.boolean(),
}).meta({ id: "EventLogPage" });
export type EventLogPage = z.infer<typeof EventLogPage>;

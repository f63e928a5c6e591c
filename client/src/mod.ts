/**
 * A typed client of the Print Shop API: `createPrintShopClient` (openapi-fetch over the generated
 * types, with idempotency keys, retries and `paginate`) and `verifyWebhook`.
 */
export {
  createPrintShopClient,
  type PrintShopClient,
  type PrintShopClientOptions,
} from "./client.ts";
export {
  backoffMs,
  type FetchLike,
  retryAfterMs,
  type RetryEvent,
  type RetryOptions,
  withRetries,
} from "./retry.ts";
export {
  createPaginate,
  type ListItem,
  type ListQuery,
  type Paginate,
  type PaginateArgs,
  type PaginateInit,
} from "./paginate.ts";
export {
  type ErrorCode,
  type ErrorEnvelope,
  type FetchResult,
  PrintShopApiError,
  unwrap,
} from "./errors.ts";
export {
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  type WebhookHeaders,
  WebhookVerificationError,
} from "./webhooks.ts";
export {
  type components,
  type operations,
  type PaginatedPath,
  pagination,
  type paths,
  type webhooks,
} from "./schema.ts";

/** Limits that are fixed by the API contract rather than configured. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
export const WEBHOOK_SECRET_OVERLAP_HOURS = 48;
/**
 * Header fields in one request head. Deno's HTTP server refuses more than 128 with a bare 400; the
 * gateway's edge refuses beyond this first, with a 431 envelope.
 */
export const MAX_HEADER_COUNT = 100;

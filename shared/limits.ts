/** Limits that are fixed by the API contract rather than configured. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
export const WEBHOOK_SECRET_OVERLAP_HOURS = 48;

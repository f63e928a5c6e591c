import { IDEMPOTENCY_KEY_MAX_LENGTH, WEBHOOK_SECRET_OVERLAP_HOURS } from "@printshop/shared/limits";
import type { Config } from "../config.ts";
import type { Principal } from "../auth.ts";
import type { Limits, Me } from "@printshop/shared/contracts/gateway";

/** Body of GET /v1/me. */
export function describeCaller(principal: Principal): Me {
  return {
    organization: { id: principal.organizationId, name: principal.organizationName },
    credential: { kind: principal.credentialKind, id: principal.credentialId },
    scopes: [...principal.scopes].sort(),
  };
}

/** Body of GET /v1/reference/limits: the values in force for this caller right now. */
export function describeLimits(
  config: Pick<
    Config,
    "RATE_LIMIT_PER_MINUTE" | "PAGE_SIZE_MAX" | "BULK_MAX_ROWS" | "MAX_BODY_BYTES"
  >,
  principal: Principal,
): Limits {
  const requestsPerMinute = principal.requestsPerMinute ?? config.RATE_LIMIT_PER_MINUTE;
  return {
    pageSizeMax: config.PAGE_SIZE_MAX,
    bulkMaxRows: config.BULK_MAX_ROWS,
    maxBodyBytes: config.MAX_BODY_BYTES,
    idempotencyKeyMaxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    rateLimit: { requestsPerMinute, burst: requestsPerMinute },
    webhookSecretOverlapHours: WEBHOOK_SECRET_OVERLAP_HOURS,
  };
}

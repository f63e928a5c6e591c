import type { Sql } from "@printshop/shared/db";
import type { Logger } from "@printshop/shared/log";
import { SpanKind, withSpan } from "@printshop/shared/telemetry";
import { deliveryBody } from "./domain/payload.ts";
import { type ClaimedDelivery, recordAttempt } from "./store/deliveries.ts";
import { signingSecrets } from "./store/subscriptions.ts";
import type { SecretBox } from "./delivery/secret_box.ts";
import { signatureHeaders } from "./delivery/signing.ts";
import { sendWebhook } from "./delivery/sender.ts";

export interface DispatchDeps {
  sql: Sql;
  box: SecretBox;
  logger: Logger;
  timeoutMs: number;
  allowPrivateTargets: boolean;
  retrySchedule: readonly number[];
}

/** How long a claim lasts: the attempt's timeout plus room to record its result. */
export const leaseMs = (timeoutMs: number): number => timeoutMs + 15_000;

/**
 * Sends one claimed delivery, signed with every secret that is valid now, and records the
 * attempt. The event id is the `webhook-id`, so a receiver that sees an event twice (after a
 * crash mid-attempt, or a replay) can tell.
 */
export async function deliverOnce(
  deps: DispatchDeps,
  delivery: ClaimedDelivery,
  trigger: "automatic" | "manual",
): Promise<void> {
  await withSpan("webhook deliver", {
    "webhook.delivery_id": delivery.id,
    "webhook.event_type": delivery.event.type,
    "webhook.attempt": delivery.attempt,
  }, async (span) => {
    const secrets = await signingSecrets(deps.sql, deps.box, delivery.subscriptionId);
    const body = deliveryBody(delivery.event, delivery.includesCosts);
    const startedAt = new Date();
    const outcome = await sendWebhook({
      url: delivery.url,
      headers: signatureHeaders({ id: delivery.eventId, timestamp: startedAt, body, secrets }),
      body,
      timeoutMs: deps.timeoutMs,
      allowPrivateTargets: deps.allowPrivateTargets,
    });
    span.setAttribute("http.response.status_code", outcome.httpStatus ?? 0);
    await recordAttempt(deps.sql, delivery, {
      startedAt,
      durationMs: outcome.durationMs,
      httpStatus: outcome.httpStatus,
      succeeded: outcome.succeeded,
      failureReason: outcome.failureReason,
      trigger,
    }, deps.retrySchedule);
    if (!outcome.succeeded) {
      deps.logger.info("webhook delivery attempt failed", {
        deliveryId: delivery.id,
        subscriptionId: delivery.subscriptionId,
        attempt: delivery.attempt,
        reason: outcome.failureReason,
      });
    }
  }, SpanKind.CLIENT);
}

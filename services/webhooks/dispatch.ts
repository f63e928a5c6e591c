import type { Sql } from "@printshop/shared/db";
import type { Logger } from "@printshop/shared/log";
import { SpanKind, withSpan } from "@printshop/shared/telemetry";
import { webhookAttempts, webhookLatency } from "@printshop/shared/metrics";
import { deliveryBody } from "./domain/payload.ts";
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type FinishedAttempt,
  recordAttempt,
  recordAttempts,
} from "./store/deliveries.ts";
import type { SecretBox } from "./delivery/secret_box.ts";
import { signatureHeaders } from "./delivery/signing.ts";
import { type AttemptOutcome, sendWebhook, type WebhookRequest } from "./delivery/sender.ts";

export interface DispatchDeps {
  sql: Sql;
  box: SecretBox;
  logger: Logger;
  timeoutMs: number;
  allowPrivateTargets: boolean;
  retrySchedule: readonly number[];
  /** How an attempt is sent: over a connection of its own unless said (the worker keeps them). */
  send?: (request: WebhookRequest) => Promise<AttemptOutcome>;
}

/** How long a claim lasts: the attempt's timeout plus room to record its result. */
export const leaseMs = (timeoutMs: number): number => timeoutMs + 15_000;

/** Records one finished attempt; resolves once it is in the database. */
export type AttemptSink = (delivery: ClaimedDelivery, attempt: AttemptRecord) => Promise<void>;

/** At most this many attempts in one recording statement. */
const MAX_RECORD_BATCH = 200;

/**
 * Records attempts as they finish, in as few statements as the database's pace allows: an attempt
 * that finishes while no statement is running is recorded at once, alone; those that finish
 * while one runs gather and go together in the next, one statement for all. Nothing waits on a
 * timer. When a statement of several fails, each of its attempts is recorded on its own, so one
 * attempt that cannot be recorded does not leave the others unrecorded.
 */
export function attemptRecorder(sql: Sql, schedule: readonly number[]): AttemptSink {
  const queue: (FinishedAttempt & { settle: (error?: unknown) => void })[] = [];
  let running = false;
  const drain = async (): Promise<void> => {
    running = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_RECORD_BATCH);
      try {
        await recordAttempts(sql, batch, schedule);
        for (const item of batch) item.settle();
      } catch (error) {
        if (batch.length === 1) batch[0]!.settle(error);
        else {
          await Promise.all(
            batch.map((item) =>
              recordAttempts(sql, [item], schedule).then(() => item.settle(), item.settle)
            ),
          );
        }
      }
    }
    running = false;
  };
  return (delivery, attempt) =>
    new Promise<void>((resolve, reject) => {
      queue.push({
        delivery,
        attempt,
        settle: (error?: unknown) => error === undefined ? resolve() : reject(error),
      });
      if (!running) void drain();
    });
}

/**
 * Sends one claimed delivery, signed with every secret that was valid when it was claimed, and
 * records the attempt (through `record`; one statement of its own by default). The event id is
 * the `webhook-id`, so a receiver that sees an event twice (after a crash mid-attempt, or a
 * replay) can tell.
 */
export async function deliverOnce(
  deps: DispatchDeps,
  delivery: ClaimedDelivery,
  trigger: "automatic" | "manual",
  record: AttemptSink = (claimed, attempt) =>
    recordAttempt(deps.sql, claimed, attempt, deps.retrySchedule),
): Promise<void> {
  await withSpan(
    "webhook deliver",
    {
      "webhook.delivery_id": delivery.id,
      "webhook.event_type": delivery.event.type,
      "webhook.attempt": delivery.attempt,
    },
    async (span) => {
      const secrets = await Promise.all(
        delivery.sealedSecrets.map((sealed) => deps.box.open(sealed)),
      );
      const body = deliveryBody(delivery.event, delivery.includesCosts);
      const startedAt = new Date();
      const outcome = await (deps.send ?? sendWebhook)({
        url: delivery.url,
        headers: signatureHeaders({ id: delivery.eventId, timestamp: startedAt, body, secrets }),
        body,
        timeoutMs: deps.timeoutMs,
        allowPrivateTargets: deps.allowPrivateTargets,
      });
      span.setAttribute("http.response.status_code", outcome.httpStatus ?? 0);
      webhookAttempts.add(1, {
        outcome: outcome.succeeded ? "succeeded" : "failed",
        "webhook.event_type": delivery.event.type,
      });
      if (outcome.succeeded) {
        webhookLatency.record((Date.now() - Date.parse(delivery.event.occurredAt)) / 1000, {
          "webhook.event_type": delivery.event.type,
        });
      }
      await record(delivery, {
        startedAt,
        durationMs: outcome.durationMs,
        httpStatus: outcome.httpStatus,
        succeeded: outcome.succeeded,
        failureReason: outcome.failureReason,
        trigger,
      });
      if (!outcome.succeeded) {
        deps.logger.info("webhook delivery attempt failed", {
          deliveryId: delivery.id,
          subscriptionId: delivery.subscriptionId,
          attempt: delivery.attempt,
          reason: outcome.failureReason,
        });
      }
    },
    SpanKind.CLIENT,
    { parent: delivery.traceparent },
  );
}

/**
 * The platform's own metrics, declared once, through @opentelemetry/api: Deno's built-in SDK
 * (OTEL_DENO=true) exports them over OTLP with its own; without it every instrument is a no-op.
 * Names and units follow the OpenTelemetry conventions where there is one (HTTP); the rest are
 * the platform's, under `printshop.`.
 */
import { metrics } from "@opentelemetry/api";

const meter = metrics.getMeter("printshop");

/**
 * Per operation, each request's duration, with its route template, method and status: the RED
 * metrics (its count is the rate, the status classes the errors). Deno's own histogram of the
 * same name has no route; this one is under the `printshop` scope.
 */
export const requestDuration = meter.createHistogram("http.server.request.duration", {
  unit: "s",
  description: "Duration of HTTP server requests, per operation (route template)",
  advice: {
    explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
});

/** Requests refused for their credential's rate limit (429). */
export const rateLimitRefusals = meter.createCounter("printshop.rate_limit.refusals", {
  unit: "{request}",
  description: "Requests refused with 429 for their credential's rate limit",
});

/** Webhook delivery attempts by outcome (`succeeded`, `failed`) and event type. */
export const webhookAttempts = meter.createCounter("printshop.webhook.attempts", {
  unit: "{attempt}",
  description: "Webhook delivery attempts, by outcome and event type",
});

/** From an event's commit to the end of its delivery attempt, for attempts that succeeded. */
export const webhookLatency = meter.createHistogram("printshop.webhook.delivery.latency", {
  unit: "s",
  description: "Time from an event's commit to its successful delivery",
  advice: { explicitBucketBoundaries: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600] },
});

/** Proof mail handed to the SMTP server, by outcome (`sent`, `failed`). */
export const mailAttempts = meter.createCounter("printshop.mail.attempts", {
  unit: "{attempt}",
  description: "Proof mail attempts, by outcome",
});

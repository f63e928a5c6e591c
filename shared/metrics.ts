/**
 * The platform's own metrics, declared once, through @opentelemetry/api: Deno's built-in SDK
 * (OTEL_DENO=true) exports them over OTLP with its own; without it every instrument is a no-op.
 * Names and units follow the OpenTelemetry conventions where there is one (HTTP); the rest are
 * the platform's, under `printshop.`.
 */
import {
  type Attributes,
  metrics,
  type ObservableGauge,
  type ObservableResult,
} from "@opentelemetry/api";

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

// ---------------------------------------------------------------------------------------------
// The edge (gateway/edge/guard.ts)

/** Client connections the edge holds now (the public port's listener, per process). */
export const edgeConnectionsOpen = meter.createObservableGauge(
  "printshop.edge.connections.open",
  { unit: "{connection}", description: "Client connections the gateway's edge holds now" },
);

/** Connections refused at accept (`capacity`) or for their address's share (`address_share`). */
export const edgeConnectionsShed = meter.createCounter("printshop.edge.connections.shed", {
  unit: "{connection}",
  description: "Client connections refused with 503 because the edge was full, by reason",
});

/**
 * Connections given up to make room for others, by reason: `cap` (a newcomer at the cap),
 * `high_water` (idle ones above the high-water mark), `links` (the slowest body, every link to
 * the app in use), `address_share` (a proxied client's address over its share).
 */
export const edgeConnectionsEvicted = meter.createCounter("printshop.edge.connections.evicted", {
  unit: "{connection}",
  description: "Client connections the edge closed to make room for others, by reason",
});

// ---------------------------------------------------------------------------------------------
// The database pool (shared/db/mod.ts), by the conventions' names

/**
 * A pool's figures as plain numbers, moved on every transaction and read at each collection:
 * an instrument's `add` costs about a microsecond with the SDK on (measured), four of them on
 * every transaction; an increment costs nothing.
 */
export interface PoolGauge {
  /** Transactions and reads holding one of the pool's connections now. */
  used: number;
  /** Transactions and reads waiting for one. */
  pending: number;
}

const pools = new Map<string, PoolGauge>();

/** The figures of the pool named `name` (`db.client.connection.pool.name`), made once. */
export function poolGauge(name: string): PoolGauge {
  let gauge = pools.get(name);
  if (gauge === undefined) {
    gauge = { used: 0, pending: 0 };
    pools.set(name, gauge);
  }
  return gauge;
}

/** Connections of a pool serving a transaction or read now (`db.client.connection.state`). */
meter.createObservableUpDownCounter("db.client.connection.count", {
  unit: "{connection}",
  description: "Connections of the pool in use by a transaction or read",
}).addCallback((result) => {
  for (const [name, gauge] of pools) {
    result.observe(gauge.used, {
      "db.client.connection.pool.name": name,
      "db.client.connection.state": "used",
    });
  }
});

/** Transactions and reads waiting for a connection of the pool. */
meter.createObservableUpDownCounter("db.client.connection.pending_requests", {
  unit: "{request}",
  description: "Transactions and reads waiting for a connection of the pool",
}).addCallback((result) => {
  for (const [name, gauge] of pools) {
    result.observe(gauge.pending, { "db.client.connection.pool.name": name });
  }
});

// ---------------------------------------------------------------------------------------------
// Backlogs, sampled from the database (sampleInto)

/** Outbox rows not yet published to the bus, per service. */
export const outboxBacklog = meter.createObservableGauge("printshop.outbox.backlog", {
  unit: "{event}",
  description: "Events written to the service's outbox and not yet published to the bus",
});

/** Age of the oldest unpublished outbox row, per service (0 when none waits). */
export const outboxOldestAge = meter.createObservableGauge("printshop.outbox.oldest_age", {
  unit: "s",
  description: "Age of the oldest event of the service's outbox not yet published",
});

/** Events published to a topic that a consumer group has not yet handled. */
export const consumerLag = meter.createObservableGauge("printshop.bus.consumer.lag", {
  unit: "{message}",
  description: "Events on a topic past the consumer group's committed position",
});

/** Proof mail waiting for the mail server, and mail given up on (`status`). */
export const mailQueue = meter.createObservableGauge("printshop.mail.queue", {
  unit: "{message}",
  description: "Proof mail by status: pending (queued or waiting for a retry) and failed",
});

/** One value a sampled gauge reports. */
export interface Sample {
  value: number;
  attributes: Attributes;
}

/**
 * Reports what `sample` (a database round trip) found on each collection of `gauge`: the last
 * sample's values, while the next is taken, so an export never waits on the database and a
 * figure is at most one export interval old (the first collection reports nothing). Nothing is
 * sampled unless a metrics SDK collects (OTEL_DENO=true). Returns what stops it (before the
 * pool closes).
 */
export function sampleInto(
  gauge: ObservableGauge,
  sample: () => Promise<readonly Sample[]>,
): () => void {
  let last: readonly Sample[] = [];
  let sampling = false;
  const callback = (result: ObservableResult): void => {
    for (const { value, attributes } of last) result.observe(value, attributes);
    if (sampling) return;
    sampling = true;
    sample().then((next) => {
      last = next;
    }, () => {/* the database is away: keep the last figures; the logs say why */}).finally(() => {
      sampling = false;
    });
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}

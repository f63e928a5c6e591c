/**
 * Events under the write load (item 6 of issue 15): a second organisation subscribes once to
 * every event type, each subscription to its own path of a verifying receiver in this process;
 * then `POST /v1/quotes`, open loop at the rate the create load reached, and each created
 * quote's event timed from its occurredAt to its signed delivery.
 */
import { sleep } from "@printshop/shared/net";
import { absoluteGoal, type Goal } from "./goals.ts";
import { openLoop } from "./load.ts";
import { type Receiver, startReceiver } from "./receiver.ts";
import { api, benchOrganization, type BenchStack } from "./stack.ts";
import { type LatencyFigures, latencyFigures } from "./stats.ts";

export interface EventsUnderLoad {
  organizationId: string;
  /** One subscription per event type the API lists, each to a path of its own. */
  subscriptions: number;
  transport: string;
  /** The write rate the 16-writer quote create reached in this run. */
  targetRatePerSecond: number;
  durationS: number;
  writes: {
    request: string;
    sent: number;
    succeeded: number;
    failed: number;
    /** Requests sent ÷ the time between the first and the last one leaving. */
    offeredRatePerSecond: number;
    maxScheduleSlipMs: number;
    maxInFlight: number;
    responseMs: LatencyFigures;
  };
  /** quote.created events expected: one per quote created by the load. */
  expected: number;
  /** Of those, how many arrived, signed and verified. */
  delivered: number;
  allArrived: boolean;
  /** Deliveries (to any subscription) whose signature did not verify: answered 401. */
  refused: number;
  duplicates: number;
  /** Deliveries to the other subscriptions (none expected: the load only creates), by event. */
  otherDeliveries: Record<string, number>;
  /** Receipt − the event's occurredAt, over the delivered events. */
  latency: LatencyFigures;
  /** Last delivery − last write answered, in seconds. */
  drainAfterLastWriteS: number;
  note: string;
}

/** Goal of event → signed delivery under the write load, p99 in ms. */
const EVENTS_GOAL_P99_MS = 1000;

/** The events goal: p99 within the bound, and every event arrived, signed. */
export function eventsGoal(events: EventsUnderLoad | null): Goal {
  const g = absoluteGoal(
    "event → signed delivery p99 under the create load",
    events?.latency.p99Ms ?? NaN,
    "ms",
    "≤",
    EVENTS_GOAL_P99_MS,
  );
  return { ...g, met: g.met && events !== null && events.allArrived && events.refused === 0 };
}

/** Quotes created (each waited for, delivered) before the events load, to warm the path. */
const EVENTS_WARMUP = 10;
/** The open loop of the events load holds back a request past this many unanswered. */
const EVENTS_MAX_IN_FLIGHT = 64;
/** Waiting for the events load's deliveries gives up when none arrived for this long… */
const EVENTS_STALL_MS = 20_000;
/** …or this long after the last write. */
const EVENTS_DRAIN_CAP_MS = 60_000;

/**
 * quote.created deliveries of `quoteIds`, by quote id, waiting until every one has arrived at
 * `path` or none has for EVENTS_STALL_MS (or `capMs` passed).
 */
async function awaitCreatedDeliveries(
  receiver: Receiver,
  path: string,
  quoteIds: ReadonlySet<string>,
  capMs: number,
): Promise<Map<string, { receivedAt: number; occurredAt: number }>> {
  const deadline = Date.now() + capMs;
  let seen = -1;
  let progressAt = Date.now();
  const arrivedOf = () => {
    const out = new Map<string, { receivedAt: number; occurredAt: number }>();
    for (const a of receiver.arrivals(path).values()) {
      if (a.dataId !== null && quoteIds.has(a.dataId)) out.set(a.dataId, a);
    }
    return out;
  };
  let arrived = arrivedOf();
  while (
    arrived.size < quoteIds.size && Date.now() < deadline &&
    Date.now() - progressAt < EVENTS_STALL_MS
  ) {
    if (arrived.size !== seen) {
      seen = arrived.size;
      progressAt = Date.now();
    }
    await sleep(50);
    arrived = arrivedOf();
  }
  return arrived;
}

/**
 * Item 6: a second organisation subscribes to every event type, each subscription to its own
 * path of a verifying receiver; then `POST /v1/quotes` open loop at `ratePerS` for `durationS`.
 */
export async function eventsUnderWriteLoad(
  bench: BenchStack,
  ratePerS: number,
  durationS: number,
): Promise<EventsUnderLoad> {
  if (!(ratePerS > 0)) throw new Error(`no write rate to run at (${ratePerS} req/s)`);
  const gatewayUrl = bench.stack.gatewayUrl;
  const { organizationId, apiKey } = await benchOrganization(
    { adminUrl: bench.stack.adminUrl, adminToken: bench.adminToken },
    "Ratios Events Shop",
  );
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const { events } = await api<{ events: string[] }>(`${gatewayUrl}/v1/reference/events`, {
    headers,
  });
  const receiver = startReceiver();
  try {
    const pathOf = (event: string): string => `/events/${event}`;
    for (const event of events) {
      const subscription = await api<{ secret: string }>(`${gatewayUrl}/v1/webhooks`, {
        method: "POST",
        headers,
        body: { url: `${receiver.url}${pathOf(event)}`, event },
      });
      receiver.verifyWith(pathOf(event), subscription.secret);
    }
    const created = pathOf("quote.created");
    const create = async (i: number): Promise<{ quoteId: string | null; ms: number }> => {
      const started = performance.now();
      try {
        const res = await fetch(`${gatewayUrl}/v1/quotes`, {
          method: "POST",
          headers,
          body: JSON.stringify({ reference: `Events under load ${i}` }),
        });
        const text = await res.text();
        const quoteId = res.status === 201
          ? (JSON.parse(text) as { data: { id: string } }).data.id
          : null;
        return { quoteId, ms: performance.now() - started };
      } catch {
        return { quoteId: null, ms: performance.now() - started };
      }
    };

    console.error(`[ratios] events under load: ${events.length} subscriptions, warming up…`);
    const warm = new Set<string>();
    for (let i = 0; i < EVENTS_WARMUP; i++) {
      const { quoteId } = await create(-1 - i);
      if (quoteId === null) throw new Error("a warm-up quote was refused");
      warm.add(quoteId);
      const arrived = await awaitCreatedDeliveries(receiver, created, new Set([quoteId]), 30_000);
      if (!arrived.has(quoteId)) throw new Error("a warm-up event was not delivered within 30 s");
    }

    const total = Math.max(1, Math.round(ratePerS * durationS));
    console.error(
      `[ratios] events under load: POST /v1/quotes at ${ratePerS.toFixed(0)}/s for ` +
        `${durationS} s, open loop…`,
    );
    const driven = await openLoop(total, ratePerS, create, { maxInFlight: EVENTS_MAX_IN_FLIGHT });
    const lastWriteAt = Date.now();
    const quoteIds = new Set(driven.results.flatMap((r) => r.quoteId === null ? [] : [r.quoteId]));
    const arrived = await awaitCreatedDeliveries(receiver, created, quoteIds, EVENTS_DRAIN_CAP_MS);
    const arrivals = [...arrived.values()];
    const lastDelivery = arrivals.length > 0 ? Math.max(...arrivals.map((a) => a.receivedAt)) : NaN;
    let refused = 0;
    let duplicates = 0;
    const otherDeliveries: Record<string, number> = {};
    for (const event of events) {
      refused += receiver.refused(pathOf(event));
      duplicates += receiver.duplicates(pathOf(event));
    }
    for (const [path, count] of receiver.paths()) {
      if (path !== created) otherDeliveries[path.slice(pathOf("").length)] = count;
    }
    return {
      organizationId,
      subscriptions: events.length,
      transport: "embedded (the eventbus schema of the stack's PostgreSQL)",
      targetRatePerSecond: ratePerS,
      durationS,
      writes: {
        request: "POST /v1/quotes { reference }",
        sent: total,
        succeeded: quoteIds.size,
        failed: total - quoteIds.size,
        offeredRatePerSecond: driven.offeredRatePerSecond,
        maxScheduleSlipMs: driven.maxScheduleSlipMs,
        maxInFlight: EVENTS_MAX_IN_FLIGHT,
        responseMs: latencyFigures(driven.results.map((r) => r.ms)),
      },
      expected: quoteIds.size,
      delivered: arrived.size,
      allArrived: quoteIds.size > 0 && arrived.size === quoteIds.size,
      refused,
      duplicates,
      otherDeliveries,
      latency: latencyFigures(arrivals.map((a) => a.receivedAt - a.occurredAt)),
      drainAfterLastWriteS: (lastDelivery - lastWriteAt) / 1000,
      note: `one subscription per event type of GET /v1/reference/events, each to its own ` +
        `path of a loopback receiver in the bench process that verifies the Standard Webhooks ` +
        `signature with that subscription's secret; ${EVENTS_WARMUP} quotes created and ` +
        `delivered first (not counted); latency = receipt − the event's occurredAt (the ` +
        `outbox row's time), one machine clock`,
    };
  } finally {
    await receiver.stop();
  }
}

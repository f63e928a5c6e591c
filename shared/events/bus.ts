/**
 * The event bus every service publishes to and the webhooks service consumes from. Two
 * transports implement it (Kafka and the embedded Postgres one); both pass one shared test
 * suite, so code above this interface never knows which is running.
 */

/** One event as it travels: the outbox row, minus bookkeeping. */
export interface BusEvent {
  /** Unique per event (UUIDv7); consumers deduplicate on it. */
  id: string;
  /** Past tense, `<resource>.<verb>`. */
  type: string;
  /** Also the partition key: one organisation's events stay in order. */
  organizationId: string;
  aggregateId: string | null;
  /** RFC 3339 UTC with milliseconds: when the change committed its outbox row. */
  occurredAt: string;
  data: unknown;
  /** W3C trace context of the request that caused the event, when there was one. */
  traceparent?: string;
}

/**
 * Receives events of one topic in publish order per organisation. Resolving means the events
 * are safely recorded: only then does the transport commit the consumer's position. Throwing
 * means the same events (and possibly ones after them) are offered again later.
 */
export type EventHandler = (events: BusEvent[], topic: string) => Promise<void>;

export interface SubscribeOptions {
  /** Consumers with the same group share the work; each event goes to one of them. */
  groupId: string;
  topics: string[];
  handle: EventHandler;
}

export interface BusSubscription {
  /** Stops fetching; resolves once the handler call in progress has finished. */
  stop(): Promise<void>;
}

export interface EventBus {
  readonly transport: "kafka" | "embedded";
  /** Resolves once the broker has acknowledged every event; rejects if any was not stored. */
  publish(topic: string, events: readonly BusEvent[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<BusSubscription>;
  close(): Promise<void>;
}

/** Topic of a service's events: one topic per service. */
export function topicOf(service: string): string {
  return `printshop.${service}`;
}

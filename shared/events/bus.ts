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
  /**
   * Stops fetching; resolves once the handler call in progress has finished. May be called from
   * inside the handler. (A message a transport cannot decode is logged and skipped, never handed
   * to the handler.)
   */
  stop(): Promise<void>;
  /**
   * Reads every topic now and resolves once nothing new is left (or reading fails): what a kick
   * or a cron tick awaits where no process runs for long (Deno Deploy). Only the embedded
   * transport has it; a Kafka consumer is a long-lived member of its group.
   */
  settle?(): Promise<void>;
}

export interface EventBus {
  readonly transport: "kafka" | "embedded";
  /**
   * Resolves once the broker has acknowledged every event. A rejection may come after some of
   * them were stored (a Kafka batch spans partitions), so a retry can duplicate them: delivery is
   * at least once and consumers deduplicate on `id`. Rejects with PublishRefusedError when the
   * broker refused the events themselves.
   */
  publish(topic: string, events: readonly BusEvent[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<BusSubscription>;
  close(): Promise<void>;
}

/** Topic of a service's events: one topic per service. */
export function topicOf(service: string): string {
  return `printshop.${service}`;
}

/**
 * Thrown by `publish` when the broker refused events for a reason that retrying cannot fix (a
 * record it rejects as invalid or too large), as opposed to the broker being unreachable.
 */
export class PublishRefusedError extends Error {
  override name = "PublishRefusedError";
}

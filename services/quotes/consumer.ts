import type { Sql } from "@printshop/shared/db";
import type { Logger } from "@printshop/shared/log";
import {
  type BusEvent,
  type BusSubscription,
  type EventBus,
  topicOf,
} from "@printshop/shared/events";
import {
  CUSTOMER_EVENTS_SERVICE,
  type CustomerFact,
  customerFact,
  isCustomerEvent,
} from "./domain/customers.ts";
import { applyCustomerFacts } from "./store/customers.ts";

/** The quotes service's own consumer group: its position on a topic is its own. */
export const CONSUMER_GROUP = "quotes";
/** The CRM's topic, where `customer.*` events travel. */
export const CUSTOMER_TOPIC = topicOf(CUSTOMER_EVENTS_SERVICE);

/**
 * Applies one batch of the CRM's topic to the customer projection: `customer.*` events are
 * applied (each only over an older state, so a batch offered again is harmless), every other
 * event is passed over and so acknowledged with the batch. A payload quotes cannot read is logged
 * and skipped: offering it again would never succeed and would hold back every event after it.
 */
export async function handleCustomerEvents(
  sql: Sql,
  logger: Logger,
  events: readonly BusEvent[],
): Promise<void> {
  const facts: CustomerFact[] = [];
  for (const event of events) {
    if (!isCustomerEvent(event.type)) continue;
    const fact = customerFact({ ...event, type: event.type });
    if (Array.isArray(fact)) {
      logger.error("customer event with an unreadable payload skipped", {
        eventId: event.id,
        type: event.type,
        problems: fact,
      });
    } else {
      facts.push(fact);
    }
  }
  if (facts.length === 0) return;
  const changed = await applyCustomerFacts(sql, facts);
  logger.debug("customer events applied", { events: facts.length, changed });
}

/**
 * Consumes the CRM's topic as the `quotes` group. The transport commits the group's position
 * only after a batch's handler resolved, that is after its facts are in the database: a crash
 * offers the batch again, and a process that was down starts where its group stopped (the
 * embedded bus's stored position, Kafka's committed offset), so it catches up on what changed
 * meanwhile.
 */
export async function startCustomerConsumer(
  deps: { sql: Sql; bus: EventBus; logger: Logger },
): Promise<BusSubscription> {
  const logger = deps.logger.child({ consumer: CONSUMER_GROUP });
  return await deps.bus.subscribe({
    groupId: CONSUMER_GROUP,
    topics: [CUSTOMER_TOPIC],
    handle: (events) => handleCustomerEvents(deps.sql, logger, events),
  });
}

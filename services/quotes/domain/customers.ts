/**
 * What the quotes service learns of the CRM's customers, and in which order: pure rules over the
 * `customer.*` events (shared/contracts/crm/customers.ts), with no I/O. The store applies what
 * these decide (store/customers.ts).
 */
import { Customer, customerEvents } from "@printshop/shared/contracts/crm";
import type { BusEvent } from "@printshop/shared/events";
import { type ErrorDetail, validate } from "@printshop/shared/http";

/** The CRM's events about a customer, each carrying the whole customer as it is after it. */
export type CustomerEventType = keyof typeof customerEvents;

/** The topic's owner for these events: the CRM's, from its contract. */
export const CUSTOMER_EVENTS_SERVICE = customerEvents["customer.created"].service;

/**
 * The fields of a customer quotes keeps. Only these are read from the payload, so a change to
 * the CRM's other fields never stops the projection.
 */
const CustomerFacts = Customer.pick({ id: true, companyName: true, isArchived: true });

/** One customer as one event leaves it: the row the projection keeps for it. */
export interface CustomerFact {
  organizationId: string;
  customerId: string;
  name: string;
  isArchived: boolean;
  deleted: boolean;
  /** The event's version: applied only over an older one. */
  occurredAt: string;
  eventId: string;
}

export function isCustomerEvent(type: string): type is CustomerEventType {
  return Object.hasOwn(customerEvents, type);
}

/**
 * The fact a `customer.*` event states, or the problems with its payload (a payload quotes cannot
 * read is skipped, not retried: no retry would ever read it).
 */
export function customerFact(
  event: BusEvent & { type: CustomerEventType },
): CustomerFact | ErrorDetail[] {
  const parsed = validate(CustomerFacts, event.data);
  if (!parsed.success) return parsed.details;
  return {
    organizationId: event.organizationId,
    customerId: parsed.data.id,
    name: parsed.data.companyName,
    isArchived: parsed.data.isArchived,
    deleted: event.type === "customer.deleted",
    occurredAt: event.occurredAt,
    eventId: event.id,
  };
}

/**
 * Whether `a` is a newer event than `b`: later `occurredAt` (written by the CRM after the row
 * lock of the change, so it follows the order changes were made in), then the larger id for the
 * same millisecond. An event is never newer than itself, so a repeated delivery changes nothing.
 * The same order as the store's `(occurred_at, event_id)` comparison (PostgreSQL compares uuids
 * byte by byte, which is how their lower-case hex texts compare).
 */
export function isNewer(
  a: Pick<CustomerFact, "occurredAt" | "eventId">,
  b: Pick<CustomerFact, "occurredAt" | "eventId">,
): boolean {
  const at = Date.parse(a.occurredAt) - Date.parse(b.occurredAt);
  return at > 0 || (at === 0 && a.eventId.toLowerCase() > b.eventId.toLowerCase());
}

/**
 * The newest fact of each customer among `facts`, in the order their customers first appear:
 * what a batch leaves behind, whatever order its events came in (the store then applies each
 * only over an older row).
 */
export function newestPerCustomer(facts: readonly CustomerFact[]): CustomerFact[] {
  const newest = new Map<string, CustomerFact>();
  for (const fact of facts) {
    const key = `${fact.organizationId}/${fact.customerId}`;
    const seen = newest.get(key);
    if (seen === undefined || isNewer(fact, seen)) newest.set(key, fact);
  }
  return [...newest.values()];
}

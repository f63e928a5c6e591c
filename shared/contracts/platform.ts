/**
 * The whole platform's contract: each service's operations and events, listed once here. A new
 * service is one line in each list; a new resource never touches this file.
 */
import type { z } from "zod";
import type { EventDefinition } from "./events.ts";
import { gatewayContract, gatewayEvents } from "./gateway/mod.ts";
import { quotesContract, quotesEvents } from "./quotes/mod.ts";
import { catalogueContract, catalogueEvents } from "./catalogue/mod.ts";
import { crmContract, crmEvents } from "./crm/mod.ts";
import { proofsContract, proofsEvents } from "./proofs/mod.ts";
import { webhooksContract } from "./webhooks/mod.ts";

/** The services behind the gateway, in the order they start and are reported. */
export const SERVICE_CONTRACTS = [
  quotesContract,
  catalogueContract,
  crmContract,
  proofsContract,
  webhooksContract,
] as const;

export { gatewayContract };

/**
 * Every event by name: the services' events, then the gateway's platform events (the order of
 * the catalogue and of the AsyncAPI document).
 */
export const EVENTS = {
  ...quotesEvents,
  ...catalogueEvents,
  ...crmEvents,
  ...proofsEvents,
  ...gatewayEvents,
} satisfies Record<string, EventDefinition>;

export type EventType = keyof typeof EVENTS;

/** What `writeEvent` must be given as the `data` of an event of this type. */
export type EventData<T extends EventType> = z.input<typeof EVENTS[T]["data"]>;

/**
 * How an event is declared: once, beside the resource it speaks of, with the schema of its
 * `data`. The public catalogue, the AsyncAPI document, `writeEvent`'s types and its checks, and
 * the webhooks service's fan-out all read these declarations.
 */
import type { z } from "zod";
import type { Scope } from "../scopes.ts";

/** Who emits an event: a service, or the gateway (platform events no integrator receives). */
export type EventOwner = "quotes" | "catalogue" | "crm" | "proofs" | "gateway";

export interface EventDefinition<T extends string = string, D extends z.ZodType = z.ZodType> {
  /** Past tense, `<resource>.<verb>`: `quote.created`. */
  readonly type: T;
  /** The service whose topic carries it. */
  readonly service: EventOwner;
  /** Read scope of the event's area; null for platform events no integrator receives. */
  readonly readScope: Scope | null;
  readonly summary: string;
  readonly data: D;
}

export interface EventSpec {
  summary: string;
  data: z.ZodType;
}

/** Declares the events of one area: their owner and read scope are shared, names are keys. */
export function defineEvents<const E extends Record<string, EventSpec>>(
  service: EventOwner,
  readScope: Scope | null,
  events: E,
): { readonly [K in keyof E & string]: EventDefinition<K, E[K]["data"]> } {
  return Object.fromEntries(
    Object.entries(events).map(([type, spec]) => [type, { type, service, readScope, ...spec }]),
  ) as { readonly [K in keyof E & string]: EventDefinition<K, E[K]["data"]> };
}

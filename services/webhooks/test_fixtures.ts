/**
 * Set-up shared by the webhooks service's tests: the service on a fresh database, a bus event to
 * record, and a subscription made straight through the store.
 */
import assert from "node:assert/strict";
import type { BusEvent } from "@printshop/shared/events";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { webhooksService } from "./app.ts";
import type { Config } from "./config.ts";
import { createSecretBox } from "./delivery/secret_box.ts";
import { findSubscription, type Owner, subscribe } from "./store/subscriptions.ts";
import { withOrganization } from "@printshop/shared/db/tenancy";
import type { WebhookSubscription } from "@printshop/shared/contracts/webhooks";

/**
 * The webhooks app on a fresh, migrated database. Private targets are allowed unless a test says
 * otherwise, so a receiver on loopback can be subscribed; retries wait 200 ms so a test can watch
 * a delivery run out of them.
 */
export async function webhooksHarness(
  overrides: Partial<Config> = {},
): Promise<ServiceHarness<Config>> {
  return await serviceHarness(webhooksService, {
    env: { WEBHOOK_SECRETS_KEY: "test-webhook-secrets-key-of-at-least-32-chars" },
    config: {
      PAGE_SIZE_MAX: 50,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
      WEBHOOK_RETRY_SCHEDULE: [200, 200],
      WEBHOOK_TIMEOUT_MS: 1000,
      ...overrides,
    },
  });
}

/** An event as it arrives from the bus, with fresh ids; `occurredAt` is fixed when order matters. */
export function busEvent(
  organizationId: string,
  type = "quote.created",
  data: unknown = { id: crypto.randomUUID() },
  occurredAt: Date = new Date(),
): BusEvent {
  return {
    id: crypto.randomUUID(),
    type,
    organizationId,
    aggregateId: crypto.randomUUID(),
    occurredAt: occurredAt.toISOString(),
    data,
  };
}

/**
 * Subscribes `who` through the store, skipping the API's checks, and returns the new
 * subscription's id; it insists the subscription is new, so a test never reuses one by accident.
 * The URL is a public address (no DNS needed) unique to the call unless one is given.
 */
export async function subscribedId(
  h: ServiceHarness<Config>,
  who: Owner,
  options: { event?: string; url?: string; includesCosts?: boolean } = {},
): Promise<string> {
  const {
    event = "quote.created",
    url = `http://93.184.216.34/${crypto.randomUUID()}`,
    includesCosts = true,
  } = options;
  const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
  const result = await asOrganization(
    who.organizationId,
    () => subscribe(h.deps.sql, box, who, { event, url, includesCosts }),
  );
  assert(result.created);
  return result.subscription.id;
}

/**
 * Runs a store call as the service makes it for `organizationId`: on the service's own pool
 * (`h.deps.sql`, the runtime role, held to the row-level policies), as that organisation's work.
 */
export function asOrganization<T>(organizationId: string, fn: () => Promise<T>): Promise<T> {
  return withOrganization(organizationId, fn);
}

/** One of `who`'s subscriptions, read as the service reads it (findSubscription). */
export function findOwned(
  h: ServiceHarness<Config>,
  who: Owner,
  id: string,
): Promise<WebhookSubscription> {
  return asOrganization(who.organizationId, () => findSubscription(h.deps.sql, who, id));
}

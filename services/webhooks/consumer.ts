import type { Sql } from "@printshop/shared/db";
import type { Logger } from "@printshop/shared/log";
import {
  type BusEvent,
  type BusSubscription,
  EVENT_TOPICS,
  type EventBus,
  eventDefinition,
} from "@printshop/shared/events";
import { recordEvents } from "./store/events.ts";
import { applyPartnerGrant, revokeCredential } from "./store/subscriptions.ts";

export const CONSUMER_GROUP = "webhooks";

/**
 * Consumes every topic as the `webhooks` group. A batch is acknowledged (and the group's
 * position committed) only after its events and their deliveries are in the database, so a
 * crash at any point means the batch is offered again, and recording it again is harmless.
 */
export async function startEventConsumer(
  deps: { sql: Sql; bus: EventBus; logger: Logger },
): Promise<BusSubscription> {
  const { sql, logger } = deps;
  return await deps.bus.subscribe({
    groupId: CONSUMER_GROUP,
    topics: [...EVENT_TOPICS],
    handle: async (events: BusEvent[]) => {
      const visible: BusEvent[] = [];
      for (const event of events) {
        const definition = eventDefinition(event.type);
        if (!definition) {
          logger.warn("event of an unknown type skipped", { eventId: event.id, type: event.type });
        } else if (event.type === "api_key.revoked") {
          // Record what came before in order, so events of the key's last moments still go out.
          await recordEvents(sql, visible.splice(0));
          const { id, organizationId } = event.data as { id: string; organizationId: string };
          const stopped = await revokeCredential(sql, { organizationId, apiKeyId: id });
          logger.info("subscriptions of a revoked key stopped", { apiKeyId: id, stopped });
        } else if (event.type === "partner_grant.updated") {
          // Events before the change still go out under the rights they were recorded with.
          await recordEvents(sql, visible.splice(0));
          const grant = event.data as { appId: string; organizationId: string; scopes: string[] };
          const outcome = await applyPartnerGrant(sql, {
            eventId: event.id,
            occurredAt: event.occurredAt,
            appId: grant.appId,
            organizationId: grant.organizationId,
            scopes: grant.scopes,
          });
          logger.info("partner subscriptions brought in line with the grant", {
            appId: grant.appId,
            eventId: event.id,
            ...outcome,
          });
        } else if (definition.readScope !== null) {
          visible.push(event);
        }
      }
      await recordEvents(sql, visible);
    },
  });
}

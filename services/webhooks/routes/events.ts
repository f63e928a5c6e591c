import type { eventLogOperations } from "@printshop/shared/contracts/webhooks";
import {
  EVENT_CATALOGUE_NOTE,
  EVENT_DEFINITIONS,
  PUBLIC_EVENT_TYPES,
} from "@printshop/shared/events";
import { pageLimit } from "@printshop/shared/db/pages";
import type { Handlers } from "@printshop/shared/service-app";
import type { Sql } from "@printshop/shared/db";
import { readEventLog } from "../store/events.ts";
import { withoutCosts } from "@printshop/shared/costs";

/** The event catalogue and the per-organisation event log. */
export function eventRoutes(
  deps: { sql: Sql; pageSizeMax: number },
): Handlers<typeof eventLogOperations> {
  return {
    getEventCatalogue: () => ({
      data: { events: [...PUBLIC_EVENT_TYPES], note: EVENT_CATALOGUE_NOTE },
    }),

    getEventLog: async ({ query, auth, costs }) => {
      const types = EVENT_DEFINITIONS
        .filter((d) => d.readScope !== null && auth.scopes.includes(d.readScope))
        .map((d) => d.type);
      const page = await readEventLog(deps.sql, auth.organizationId, {
        afterId: query.after ?? null,
        limit: pageLimit(query.limit, deps.pageSizeMax),
        types,
      });
      const items = page.events.map((e) => (costs ? e : { ...e, data: withoutCosts(e.data) }));
      return {
        data: {
          items,
          lastEventId: items.at(-1)?.id ?? query.after ?? null,
          hasMore: page.hasMore,
        },
      };
    },
  };
}

import type { eventLogOperations } from "@printshop/shared/contracts/webhooks";
import { type ApiError, validationError } from "@printshop/shared/http";
import {
  EVENT_CATALOGUE_NOTE,
  EVENT_DEFINITIONS,
  PUBLIC_EVENT_TYPES,
} from "@printshop/shared/events";
import { pageLimit } from "@printshop/shared/db/pages";
import type { Handlers } from "@printshop/shared/service-app";
import type { Sql } from "@printshop/shared/db";
import { uuidv7Time } from "@printshop/shared/ids";
import { EVENT_RETENTION_DAYS, readEventLog } from "../store/events.ts";
import { withoutCosts } from "../domain/payload.ts";

/**
 * An `after` the log does not hold. Event ids carry their time, so one that has aged out of the
 * log gets its own answer: the integrator has to reconcile from the resources themselves.
 */
function unknownAnchor(after: string): ApiError {
  const time = uuidv7Time(after);
  if (time !== null && time < Date.now() - EVENT_RETENTION_DAYS * 86_400_000) {
    return validationError(
      "after",
      `Event "${after}" is older than the ${EVENT_RETENTION_DAYS} days the log keeps; ` +
        "read the current state from the resources, then page the log from its start",
    );
  }
  return validationError("after", `Event "${after}" is not in this organisation's log`);
}

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
      if (!page) throw unknownAnchor(query.after!);
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

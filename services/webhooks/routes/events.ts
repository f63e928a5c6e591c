import { Hono } from "hono";
import { EventLogQuery, NoQuery } from "@printshop/shared/contracts";
import { type ApiError, ok, readQuery, validationError } from "@printshop/shared/http";
import {
  EVENT_CATALOGUE_NOTE,
  EVENT_DEFINITIONS,
  PUBLIC_EVENT_TYPES,
} from "@printshop/shared/events";
import { canSeeCosts, type ServiceEnv } from "@printshop/shared/service-defaults";
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
export function eventRoutes(deps: { sql: Sql; pageSizeMax: number }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.get("/v1/reference/events", (c) => {
    readQuery(c, NoQuery);
    return ok(c, { events: [...PUBLIC_EVENT_TYPES], note: EVENT_CATALOGUE_NOTE });
  });

  app.get("/v1/event-log", async (c) => {
    const query = readQuery(c, EventLogQuery);
    const auth = c.get("auth");
    const types = EVENT_DEFINITIONS
      .filter((d) => d.readScope !== null && auth.scopes.includes(d.readScope))
      .map((d) => d.type);
    const limit = Math.min(query.limit ?? deps.pageSizeMax, deps.pageSizeMax);
    const page = await readEventLog(deps.sql, auth.organizationId, {
      afterId: query.after ?? null,
      limit,
      types,
    });
    if (!page) throw unknownAnchor(query.after!);
    const costs = canSeeCosts(c);
    const items = page.events.map((e) => (costs ? e : { ...e, data: withoutCosts(e.data) }));
    return ok(c, {
      items,
      lastEventId: items.at(-1)?.id ?? query.after ?? null,
      hasMore: page.hasMore,
    });
  });

  return app;
}

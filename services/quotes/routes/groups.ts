import { Hono } from "hono";
import { CreateQuoteGroupBody } from "@printshop/shared/contracts";
import { created, notFound, readBody, readUuidParam } from "@printshop/shared/http";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createGroup } from "../store/groups.ts";

export function groupRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quotes/:quoteId/groups", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    const input = await readBody(c, CreateQuoteGroupBody);
    const group = await createGroup(sql, c.get("auth").organizationId, quoteId, input);
    if (!group) throw notFound("Quote", quoteId);
    return created(c, group, "Quote group created");
  });

  return app;
}

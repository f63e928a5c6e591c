import { Hono } from "hono";
import {
  CreateQuoteGroupBody,
  ReorderBody,
  UpdateQuoteGroupBody,
} from "@printshop/shared/contracts";
import { created, ok, readBody, readUuidParam } from "@printshop/shared/http";
import { canSeeCosts, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createGroup, deleteGroup, reorderGroup, updateGroup } from "../store/groups.ts";

export function groupRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quotes/:quoteId/groups", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    const input = await readBody(c, CreateQuoteGroupBody);
    const group = await createGroup(
      sql,
      c.get("auth").organizationId,
      quoteId,
      input,
      canSeeCosts(c),
    );
    return created(c, group, "Quote group created");
  });

  app.patch("/v1/quote-groups/:groupId", async (c) => {
    const groupId = readUuidParam(c, "groupId");
    const input = await readBody(c, UpdateQuoteGroupBody);
    const group = await updateGroup(
      sql,
      c.get("auth").organizationId,
      groupId,
      input,
      canSeeCosts(c),
    );
    return ok(c, group, { message: "Quote group updated" });
  });

  app.delete("/v1/quote-groups/:groupId", async (c) => {
    const groupId = readUuidParam(c, "groupId");
    await deleteGroup(sql, c.get("auth").organizationId, groupId);
    return ok(c, { id: groupId }, { message: "Quote group deleted" });
  });

  app.post("/v1/quote-groups/:groupId/reorder", async (c) => {
    const groupId = readUuidParam(c, "groupId");
    const input = await readBody(c, ReorderBody);
    const group = await reorderGroup(
      sql,
      c.get("auth").organizationId,
      groupId,
      input,
      canSeeCosts(c),
    );
    return ok(c, group, { message: "Quote group reordered" });
  });

  return app;
}

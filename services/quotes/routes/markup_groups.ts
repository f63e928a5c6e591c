import { Hono } from "hono";
import { CreateMarkupGroupBody, NoQuery, UpdateMarkupGroupBody } from "@printshop/shared/contracts";
import {
  conflict,
  created,
  notFound,
  ok,
  readBody,
  readQuery,
  readUuidParam,
} from "@printshop/shared/http";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import {
  createMarkupGroup,
  deleteMarkupGroup,
  findMarkupGroup,
  listMarkupGroups,
  updateMarkupGroup,
} from "../store/markup_groups.ts";

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `/v1/markup-groups`: CRUD of the organisation's markup groups (scopes come from the route table). */
export function markupGroupRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/markup-groups", async (c) => {
    const input = await readBody(c, CreateMarkupGroupBody);
    const group = await createMarkupGroup(sql, c.get("auth").organizationId, input);
    return created(c, group, "Markup group created");
  });

  app.get("/v1/markup-groups", async (c) => {
    readQuery(c, NoQuery);
    return ok(c, await listMarkupGroups(sql, c.get("auth").organizationId));
  });

  app.get("/v1/markup-groups/:markupGroupId", async (c) => {
    const id = readUuidParam(c, "markupGroupId");
    readQuery(c, NoQuery);
    const group = await findMarkupGroup(sql, c.get("auth").organizationId, id);
    if (!group) throw notFound("Markup group", id);
    return ok(c, group);
  });

  app.patch("/v1/markup-groups/:markupGroupId", async (c) => {
    const id = readUuidParam(c, "markupGroupId");
    const input = await readBody(c, UpdateMarkupGroupBody);
    const group = await updateMarkupGroup(sql, c.get("auth").organizationId, id, input);
    if (!group) throw notFound("Markup group", id);
    return ok(c, group, { message: "Markup group updated" });
  });

  app.delete("/v1/markup-groups/:markupGroupId", async (c) => {
    const id = readUuidParam(c, "markupGroupId");
    const result = await deleteMarkupGroup(sql, c.get("auth").organizationId, id);
    if (result.outcome === "not_found") throw notFound("Markup group", id);
    if (result.outcome === "in_use") {
      const rows = result.variants + result.decorations;
      throw conflict(
        `Markup group "${id}" is used by ${plural(rows, "quote row")} (${
          plural(result.variants, "variant")
        }, ${plural(result.decorations, "decoration")}); point them elsewhere before deleting it`,
      );
    }
    return ok(c, { id: result.group.id }, { message: "Markup group deleted" });
  });

  return app;
}

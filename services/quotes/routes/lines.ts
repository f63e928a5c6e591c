import { Hono } from "hono";
import {
  CreateQuoteLineBody,
  CreateQuoteVariantBody,
  UpdateQuoteLineBody,
  UpdateQuoteVariantBody,
} from "@printshop/shared/contracts";
import { created, ok, readBody, readUuidParam } from "@printshop/shared/http";
import {
  assertMayWriteCosts,
  canSeeCosts,
  type ServiceEnv,
} from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createLine, deleteLine, updateLine } from "../store/lines.ts";
import { createVariant, deleteVariant, updateVariant } from "../store/variants.ts";

/** Lines of a group and the variants of a line. */
export function lineRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quote-groups/:groupId/lines", async (c) => {
    const groupId = readUuidParam(c, "groupId");
    const input = await readBody(c, CreateQuoteLineBody);
    const line = await createLine(
      sql,
      c.get("auth").organizationId,
      groupId,
      input,
      canSeeCosts(c),
    );
    return created(c, line, "Quote line created");
  });

  app.patch("/v1/quote-lines/:lineId", async (c) => {
    const lineId = readUuidParam(c, "lineId");
    const input = await readBody(c, UpdateQuoteLineBody);
    const line = await updateLine(sql, c.get("auth").organizationId, lineId, input, canSeeCosts(c));
    return ok(c, line, { message: "Quote line updated" });
  });

  app.delete("/v1/quote-lines/:lineId", async (c) => {
    const lineId = readUuidParam(c, "lineId");
    await deleteLine(sql, c.get("auth").organizationId, lineId);
    return ok(c, { id: lineId }, { message: "Quote line deleted" });
  });

  app.post("/v1/quote-lines/:lineId/variants", async (c) => {
    const lineId = readUuidParam(c, "lineId");
    const input = await readBody(c, CreateQuoteVariantBody);
    assertMayWriteCosts(c, input);
    const variant = await createVariant(
      sql,
      c.get("auth").organizationId,
      lineId,
      input,
      canSeeCosts(c),
    );
    return created(c, variant, "Quote variant created");
  });

  app.patch("/v1/quote-variants/:variantId", async (c) => {
    const variantId = readUuidParam(c, "variantId");
    const input = await readBody(c, UpdateQuoteVariantBody);
    assertMayWriteCosts(c, input);
    const variant = await updateVariant(
      sql,
      c.get("auth").organizationId,
      variantId,
      input,
      canSeeCosts(c),
    );
    return ok(c, variant, { message: "Quote variant updated" });
  });

  app.delete("/v1/quote-variants/:variantId", async (c) => {
    const variantId = readUuidParam(c, "variantId");
    await deleteVariant(sql, c.get("auth").organizationId, variantId);
    return ok(c, { id: variantId }, { message: "Quote variant deleted" });
  });

  return app;
}

import { Hono } from "hono";
import {
  CreateQuoteDecorationBody,
  type QuoteGroupDecoration,
  UpdateQuoteDecorationBody,
} from "@printshop/shared/contracts";
import { created, ok, readBody, readUuidParam } from "@printshop/shared/http";
import {
  assertMayWriteCosts,
  canSeeCosts,
  type ServiceContext,
  type ServiceEnv,
} from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createDecoration, deleteDecoration, updateDecoration } from "../store/decorations.ts";
import { type DecorationRow, toDecoration } from "../store/item_rows.ts";

/**
 * A decoration as the operator's API returns it: cost fields only with costs.read.
 * `specialInstructions` is internal shop notes: it belongs in this (operator) API, but any
 * customer-facing presenter (documents, emails, portal) must leave it out.
 */
function present(c: ServiceContext, row: DecorationRow): QuoteGroupDecoration {
  return toDecoration(row, canSeeCosts(c));
}

export function decorationRoutes({ sql }: { sql: Sql }): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quote-groups/:groupId/decorations", async (c) => {
    const groupId = readUuidParam(c, "groupId");
    const input = await readBody(c, CreateQuoteDecorationBody);
    assertMayWriteCosts(c, input);
    const row = await createDecoration(sql, c.get("auth").organizationId, groupId, input);
    return created(c, present(c, row), "Quote decoration created");
  });

  app.patch("/v1/quote-decorations/:decorationId", async (c) => {
    const decorationId = readUuidParam(c, "decorationId");
    const input = await readBody(c, UpdateQuoteDecorationBody);
    assertMayWriteCosts(c, input);
    const row = await updateDecoration(sql, c.get("auth").organizationId, decorationId, input);
    return ok(c, present(c, row), { message: "Quote decoration updated" });
  });

  app.delete("/v1/quote-decorations/:decorationId", async (c) => {
    const decorationId = readUuidParam(c, "decorationId");
    const { id } = await deleteDecoration(sql, c.get("auth").organizationId, decorationId);
    return ok(c, { id }, { message: "Quote decoration deleted" });
  });

  return app;
}

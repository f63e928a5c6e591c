import { Hono } from "hono";
import {
  CreateQuoteBody,
  ListQuotesQuery,
  QuoteStatusBody,
  UpdateQuoteBody,
} from "@printshop/shared/contracts";
import {
  created,
  notFound,
  ok,
  okJson,
  readBody,
  readQuery,
  readUuidParam,
} from "@printshop/shared/http";
import { canSeeCosts, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { NoQuery } from "@printshop/shared/contracts";
import {
  createQuote,
  deleteQuote,
  findQuoteJson,
  listQuotesJson,
  salesRepFacet,
  setQuoteStatus,
  updateQuote,
} from "../store/quotes.ts";

export interface QuoteRoutesDeps {
  sql: Sql;
  pageSizeMax: number;
}

export function quoteRoutes({ sql, pageSizeMax }: QuoteRoutesDeps): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quotes", async (c) => {
    const input = await readBody(c, CreateQuoteBody);
    const quote = await createQuote(sql, c.get("auth").organizationId, input, canSeeCosts(c));
    return created(c, quote, "Quote created");
  });

  app.get("/v1/quotes", async (c) => {
    const query = readQuery(c, ListQuotesQuery);
    const limit = Math.min(query.limit ?? pageSizeMax, pageSizeMax);
    // The page comes as JSON text built by PostgreSQL and is sent as it is (no parse, no stringify).
    return okJson(
      c,
      await listQuotesJson(sql, c.get("auth").organizationId, query, limit, canSeeCosts(c)),
    );
  });

  app.get("/v1/quotes/facets", async (c) => {
    readQuery(c, NoQuery);
    return ok(c, { salesReps: await salesRepFacet(sql, c.get("auth").organizationId) });
  });

  app.get("/v1/quotes/:quoteId", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    readQuery(c, NoQuery);
    const quote = await findQuoteJson(
      sql,
      c.get("auth").organizationId,
      quoteId,
      canSeeCosts(c),
    );
    if (quote === null) throw notFound("Quote", quoteId);
    return okJson(c, quote);
  });

  app.patch("/v1/quotes/:quoteId", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    const input = await readBody(c, UpdateQuoteBody);
    const quote = await updateQuote(
      sql,
      c.get("auth").organizationId,
      quoteId,
      input,
      canSeeCosts(c),
    );
    return ok(c, quote, { message: "Quote updated" });
  });

  app.delete("/v1/quotes/:quoteId", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    if (!(await deleteQuote(sql, c.get("auth").organizationId, quoteId))) {
      throw notFound("Quote", quoteId);
    }
    return ok(c, { id: quoteId }, { message: "Quote deleted" });
  });

  app.post("/v1/quotes/:quoteId/status", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    const input = await readBody(c, QuoteStatusBody);
    const quote = await setQuoteStatus(
      sql,
      c.get("auth").organizationId,
      quoteId,
      input,
      canSeeCosts(c),
    );
    return ok(c, quote, { message: `Quote is ${quote.status}` });
  });

  return app;
}

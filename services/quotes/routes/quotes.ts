import { Hono } from "hono";
import { CreateQuoteBody, ListQuotesQuery } from "@printshop/shared/contracts";
import { created, notFound, ok, readBody, readQuery, readUuidParam } from "@printshop/shared/http";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import { createQuote, findQuote, listQuotes, salesRepFacet } from "../store/quotes.ts";

export interface QuoteRoutesDeps {
  sql: Sql;
  pageSizeMax: number;
}

export function quoteRoutes({ sql, pageSizeMax }: QuoteRoutesDeps): Hono<ServiceEnv> {
  const app = new Hono<ServiceEnv>();

  app.post("/v1/quotes", async (c) => {
    const input = await readBody(c, CreateQuoteBody);
    const quote = await createQuote(sql, c.get("auth").organizationId, input);
    return created(c, quote, "Quote created");
  });

  app.get("/v1/quotes", async (c) => {
    const query = readQuery(c, ListQuotesQuery);
    const limit = Math.min(query.limit ?? pageSizeMax, pageSizeMax);
    return ok(c, await listQuotes(sql, c.get("auth").organizationId, query, limit));
  });

  app.get("/v1/quotes/facets", async (c) => {
    readQuery(c, ListQuotesQuery.pick({}));
    return ok(c, { salesReps: await salesRepFacet(sql, c.get("auth").organizationId) });
  });

  app.get("/v1/quotes/:quoteId", async (c) => {
    const quoteId = readUuidParam(c, "quoteId");
    const quote = await findQuote(sql, c.get("auth").organizationId, quoteId);
    if (!quote) throw notFound("Quote", quoteId);
    return ok(c, quote);
  });

  return app;
}

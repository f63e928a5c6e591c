import type { quoteOperations } from "@printshop/shared/contracts/quotes";
import { type Handlers, jsonText } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createQuote,
  deleteQuote,
  findQuoteJson,
  listQuotesJson,
  salesRepFacet,
  setQuoteStatus,
  updateQuote,
} from "../store/quotes.ts";

export function quoteRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof quoteOperations> {
  return {
    createQuote: async ({ body, organizationId, costs }) => ({
      status: 201,
      data: await createQuote(sql, organizationId, body, costs),
      message: "Quote created",
    }),
    // Quotes are read as JSON text built by PostgreSQL and sent as it is (no parse, no stringify).
    listQuotes: async ({ query, organizationId, costs }) => ({
      data: jsonText(
        await listQuotesJson(sql, organizationId, query, config.PAGE_SIZE_MAX, costs),
      ),
    }),
    getQuoteFacets: async ({ organizationId }) => ({
      data: { salesReps: await salesRepFacet(sql, organizationId) },
    }),
    getQuote: async ({ params, organizationId, costs }) => ({
      data: jsonText(await findQuoteJson(sql, organizationId, params.quoteId, costs)),
    }),
    updateQuote: async ({ params, body, organizationId, costs }) => ({
      data: await updateQuote(sql, organizationId, params.quoteId, body, costs),
      message: "Quote updated",
    }),
    deleteQuote: async ({ params, organizationId }) => {
      await deleteQuote(sql, organizationId, params.quoteId);
      return { data: { id: params.quoteId }, message: "Quote deleted" };
    },
    setQuoteStatus: async ({ params, body, organizationId, costs }) => {
      const quote = await setQuoteStatus(sql, organizationId, params.quoteId, body, costs);
      return { data: quote, message: `Quote is ${quote.status}` };
    },
  };
}

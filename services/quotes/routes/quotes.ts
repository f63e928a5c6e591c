import type { quoteOperations } from "@printshop/shared/contracts/quotes";
import { type Handlers, jsonStream, jsonText } from "@printshop/shared/service-app";
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
    // Quotes are JSON text built by PostgreSQL and sent as it is (no parse, no stringify), so a
    // quote reads the same in every answer.
    createQuote: async ({ body, organizationId, costs }) => ({
      status: 201,
      data: jsonText(await createQuote(sql, organizationId, body, costs)),
      message: "Quote created",
    }),
    listQuotes: async ({ query, organizationId, costs }) => ({
      data: jsonStream(
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
      data: jsonText(await updateQuote(sql, organizationId, params.quoteId, body, costs)),
      message: "Quote updated",
    }),
    deleteQuote: async ({ params, organizationId }) => {
      await deleteQuote(sql, organizationId, params.quoteId);
      return { data: { id: params.quoteId }, message: "Quote deleted" };
    },
    setQuoteStatus: async ({ params, body, organizationId, costs }) => ({
      data: jsonText(await setQuoteStatus(sql, organizationId, params.quoteId, body, costs)),
      message: `Quote is ${body.status}`,
    }),
  };
}

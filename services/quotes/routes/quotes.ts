import { ListQuotesQuery, type quoteOperations } from "@printshop/shared/contracts/quotes";
import { listSpec } from "@printshop/shared/db/pages";
import { type Handlers, jsonText } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createQuote,
  deleteQuote,
  findQuoteJson,
  QUOTE_FIELDS,
  salesRepFacet,
  setQuoteStatus,
  updateQuote,
} from "../store/quotes.ts";
import { clientNameSql } from "../store/customers.ts";
import { listDocumentsJson } from "../store/quote_documents.ts";

/**
 * GET /v1/quotes: its filters and sorts (QUOTE_FIELDS), search and default order. Given to
 * listDocumentsJson from here because store/quotes.ts imports store/quote_documents.ts, which
 * therefore cannot import QUOTE_FIELDS back at load.
 */
const QUOTE_LIST = listSpec(ListQuotesQuery, {
  from: "quotes",
  select: "id",
  fields: QUOTE_FIELDS,
  // The client's name as the customer projection knows it (store/customers.ts).
  search: ["quote_ref", "reference", "notes", "client_id::text", clientNameSql("quotes")],
  order: { field: "createdAt", direction: "desc" },
});

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
      data: jsonText(
        await listDocumentsJson(sql, QUOTE_LIST, {
          organizationId,
          query,
          pageSizeMax: config.PAGE_SIZE_MAX,
          costs,
        }),
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

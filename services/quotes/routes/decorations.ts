import type { decorationOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createDecoration, deleteDecoration, updateDecoration } from "../store/decorations.ts";
import { toDecoration } from "../store/item_rows.ts";

/**
 * Decorations as the operator's API returns them: cost fields only with costs.read.
 * `specialInstructions` is internal shop notes: it belongs in this (operator) API, but any
 * customer-facing presenter (documents, emails, portal) must leave it out.
 */
export function decorationRoutes(
  { sql }: ServiceDeps<Config>,
): Handlers<typeof decorationOperations> {
  return {
    createQuoteDecoration: async ({ params, body, organizationId, costs }) => ({
      status: 201,
      data: toDecoration(await createDecoration(sql, organizationId, params.groupId, body), costs),
      message: "Quote decoration created",
    }),
    updateQuoteDecoration: async ({ params, body, organizationId, costs }) => ({
      data: toDecoration(
        await updateDecoration(sql, organizationId, params.decorationId, body),
        costs,
      ),
      message: "Quote decoration updated",
    }),
    deleteQuoteDecoration: async ({ params, organizationId }) => {
      const { id } = await deleteDecoration(sql, organizationId, params.decorationId);
      return { data: { id }, message: "Quote decoration deleted" };
    },
  };
}

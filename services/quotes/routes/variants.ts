import type { variantOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createVariant, deleteVariant, updateVariant } from "../store/variants.ts";

export function variantRoutes({ sql }: ServiceDeps<Config>): Handlers<typeof variantOperations> {
  return {
    createQuoteVariant: async ({ params, body, organizationId, costs }) => ({
      status: 201,
      data: await createVariant(sql, organizationId, params.lineId, body, costs),
      message: "Quote variant created",
    }),
    updateQuoteVariant: async ({ params, body, organizationId, costs }) => ({
      data: await updateVariant(sql, organizationId, params.variantId, body, costs),
      message: "Quote variant updated",
    }),
    deleteQuoteVariant: async ({ params, organizationId }) => {
      await deleteVariant(sql, organizationId, params.variantId);
      return { data: { id: params.variantId }, message: "Quote variant deleted" };
    },
  };
}

import type { stockOperations } from "@printshop/shared/contracts/catalogue";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { adjustStock, listAdjustments } from "../store/stock.ts";

/** `/v1/garment-variants/{id}/stock-adjustments`: the stock ledger, the one way stock changes. */
export function stockRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof stockOperations> {
  return {
    createStockAdjustment: async ({ params, body, auth }) => ({
      status: 201,
      data: await adjustStock(sql, auth, params.garmentVariantId, body),
      message: "Stock adjusted",
    }),
    listStockAdjustments: async ({ params, query, organizationId }) => ({
      data: await listAdjustments(
        sql,
        organizationId,
        params.garmentVariantId,
        query,
        config.PAGE_SIZE_MAX,
      ),
    }),
  };
}

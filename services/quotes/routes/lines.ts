import type { lineOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createLine, deleteLine, updateLine } from "../store/lines.ts";

export function lineRoutes({ sql }: ServiceDeps<Config>): Handlers<typeof lineOperations> {
  return {
    createQuoteLine: async ({ params, body, organizationId, costs }) => ({
      status: 201,
      data: await createLine(sql, organizationId, params.groupId, body, costs),
      message: "Quote line created",
    }),
    updateQuoteLine: async ({ params, body, organizationId, costs }) => ({
      data: await updateLine(sql, organizationId, params.lineId, body, costs),
      message: "Quote line updated",
    }),
    deleteQuoteLine: async ({ params, organizationId }) => {
      await deleteLine(sql, organizationId, params.lineId);
      return { data: { id: params.lineId }, message: "Quote line deleted" };
    },
  };
}

import type { groupOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createGroup, deleteGroup, reorderGroup, updateGroup } from "../store/groups.ts";

export function groupRoutes({ sql }: ServiceDeps<Config>): Handlers<typeof groupOperations> {
  return {
    createQuoteGroup: async ({ params, body, organizationId, costs }) => ({
      status: 201,
      data: await createGroup(sql, organizationId, params.quoteId, body, costs),
      message: "Quote group created",
    }),
    updateQuoteGroup: async ({ params, body, organizationId, costs }) => ({
      data: await updateGroup(sql, organizationId, params.groupId, body, costs),
      message: "Quote group updated",
    }),
    deleteQuoteGroup: async ({ params, organizationId }) => {
      await deleteGroup(sql, organizationId, params.groupId);
      return { data: { id: params.groupId }, message: "Quote group deleted" };
    },
    reorderQuoteGroup: async ({ params, body, organizationId, costs }) => ({
      data: await reorderGroup(sql, organizationId, params.groupId, body, costs),
      message: "Quote group reordered",
    }),
  };
}

import type { markupGroupOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createMarkupGroup,
  deleteMarkupGroup,
  findMarkupGroup,
  listMarkupGroups,
  updateMarkupGroup,
} from "../store/markup_groups.ts";

/** `/v1/markup-groups`: CRUD of the organisation's markup groups. */
export function markupGroupRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof markupGroupOperations> {
  return {
    createMarkupGroup: async ({ body, organizationId }) => ({
      status: 201,
      data: await createMarkupGroup(sql, organizationId, body),
      message: "Markup group created",
    }),
    listMarkupGroups: async ({ query, organizationId }) => ({
      data: await listMarkupGroups(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getMarkupGroup: async ({ params, organizationId }) => ({
      data: await findMarkupGroup(sql, organizationId, params.markupGroupId),
    }),
    updateMarkupGroup: async ({ params, body, organizationId }) => ({
      data: await updateMarkupGroup(sql, organizationId, params.markupGroupId, body),
      message: "Markup group updated",
    }),
    deleteMarkupGroup: async ({ params, organizationId }) => {
      const group = await deleteMarkupGroup(sql, organizationId, params.markupGroupId);
      return { data: { id: group.id }, message: "Markup group deleted" };
    },
  };
}

import type { markupGroupOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import { visibleTo } from "@printshop/shared/costs";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createMarkupGroup,
  deleteMarkupGroup,
  findMarkupGroup,
  listMarkupGroups,
  updateMarkupGroup,
} from "../store/markup_groups.ts";

/**
 * `/v1/markup-groups`: CRUD of the organisation's markup groups. Bands are margins: a caller
 * without costs.read sees a group's id, name and lane but not its bands (and cannot write them).
 */
export function markupGroupRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof markupGroupOperations> {
  return {
    createMarkupGroup: async ({ body, organizationId, costs }) => ({
      status: 201,
      data: visibleTo(await createMarkupGroup(sql, organizationId, body), costs),
      message: "Markup group created",
    }),
    listMarkupGroups: async ({ query, organizationId, costs }) => {
      const page = await listMarkupGroups(sql, organizationId, query, config.PAGE_SIZE_MAX);
      return { data: { ...page, items: page.items.map((group) => visibleTo(group, costs)) } };
    },
    getMarkupGroup: async ({ params, organizationId, costs }) => ({
      data: visibleTo(await findMarkupGroup(sql, organizationId, params.markupGroupId), costs),
    }),
    updateMarkupGroup: async ({ params, body, organizationId, costs }) => ({
      data: visibleTo(
        await updateMarkupGroup(sql, organizationId, params.markupGroupId, body),
        costs,
      ),
      message: "Markup group updated",
    }),
    deleteMarkupGroup: async ({ params, organizationId }) => {
      const group = await deleteMarkupGroup(sql, organizationId, params.markupGroupId);
      return { data: { id: group.id }, message: "Markup group deleted" };
    },
  };
}

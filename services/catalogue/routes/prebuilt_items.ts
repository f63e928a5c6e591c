import type { prebuiltItemOperations } from "@printshop/shared/contracts/catalogue";
import { visibleTo } from "@printshop/shared/costs";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  bulkDeletePrebuiltItems,
  bulkSetPrebuiltItemStatus,
  createPrebuiltItem,
  deletePrebuiltItem,
  findPrebuiltItem,
  listPrebuiltItems,
  putPrebuiltItem,
} from "../store/prebuilt_items.ts";

/**
 * `/v1/prebuilt-items`: the organisation's pre-built items, one by one and in bulk. Their
 * decorations' costs follow costs.read (hidden at any depth, refused when written without it).
 */
export function prebuiltItemRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof prebuiltItemOperations> {
  return {
    listPrebuiltItems: async ({ query, organizationId, costs }) => {
      const page = await listPrebuiltItems(sql, organizationId, query, config.PAGE_SIZE_MAX);
      return { data: { ...page, items: page.items.map((item) => visibleTo(item, costs)) } };
    },
    createPrebuiltItem: async ({ body, organizationId, costs }) => ({
      status: 201,
      data: visibleTo(await createPrebuiltItem(sql, organizationId, body), costs),
      message: "Pre-built item created",
    }),
    getPrebuiltItem: async ({ params, organizationId, costs }) => ({
      data: visibleTo(await findPrebuiltItem(sql, organizationId, params.prebuiltItemId), costs),
    }),
    putPrebuiltItem: async ({ params, body, organizationId, costs }) => {
      const { item, created } = await putPrebuiltItem(
        sql,
        organizationId,
        params.prebuiltItemId,
        body,
        costs,
      );
      return created
        ? { status: 201, data: visibleTo(item, costs), message: "Pre-built item created" }
        : { status: 200, data: visibleTo(item, costs), message: "Pre-built item replaced" };
    },
    deletePrebuiltItem: async ({ params, organizationId }) => {
      const item = await deletePrebuiltItem(sql, organizationId, params.prebuiltItemId);
      return { data: { id: item.id }, message: "Pre-built item deleted" };
    },
    bulkDeletePrebuiltItems: async ({ body, organizationId }) => ({
      data: await bulkDeletePrebuiltItems(sql, organizationId, body.target, config.BULK_MAX_ROWS),
      message: "Bulk delete done",
    }),
    bulkSetPrebuiltItemStatus: async ({ body, organizationId }) => ({
      data: await bulkSetPrebuiltItemStatus(
        sql,
        organizationId,
        body.target,
        body.status,
        config.BULK_MAX_ROWS,
      ),
      message: "Bulk status change done",
    }),
  };
}

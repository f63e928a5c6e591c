import type { catalogueItemOperations } from "@printshop/shared/contracts/catalogue";
import { visibleTo } from "@printshop/shared/costs";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createItem, deleteItem, findItem, listItems, updateItem } from "../store/items.ts";

/** `/v1/catalogue`: the organisation's garment styles; `buyPrice` follows costs.read. */
export function catalogueItemRoutes(
  { sql, config, contextKey }: ServiceDeps<Config>,
): Handlers<typeof catalogueItemOperations> {
  return {
    createCatalogueItem: async ({ body, organizationId, costs }) => ({
      status: 201,
      data: visibleTo(await createItem(sql, organizationId, body), costs),
      message: "Catalogue item created",
    }),
    listCatalogueItems: async ({ query, organizationId, costs }) => {
      const scope = { key: contextKey, list: "listCatalogueItems", organizationId };
      const page = await listItems(sql, scope, query, config.PAGE_SIZE_MAX);
      return { data: { ...page, items: page.items.map((item) => visibleTo(item, costs)) } };
    },
    getCatalogueItem: async ({ params, organizationId, costs }) => ({
      data: visibleTo(await findItem(sql, organizationId, params.catalogueItemId), costs),
    }),
    updateCatalogueItem: async ({ params, body, organizationId, costs }) => ({
      data: visibleTo(
        await updateItem(sql, organizationId, params.catalogueItemId, body),
        costs,
      ),
      message: "Catalogue item updated",
    }),
    deleteCatalogueItem: async ({ params, query, organizationId }) => {
      const item = await deleteItem(
        sql,
        organizationId,
        params.catalogueItemId,
        query.cascade ?? false,
      );
      return { data: { id: item.id }, message: "Catalogue item deleted" };
    },
  };
}

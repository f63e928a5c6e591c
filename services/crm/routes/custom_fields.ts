import type { customFieldOperations } from "@printshop/shared/contracts/crm";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createDefinition,
  deleteDefinition,
  listDefinitions,
  updateDefinition,
} from "../store/custom_fields.ts";

/** `/v1/custom-fields`: the fields a shop adds to its customers, vendors and tasks. */
export function customFieldRoutes(
  { sql }: ServiceDeps<Config>,
): Handlers<typeof customFieldOperations> {
  return {
    listCustomFields: async ({ query, organizationId }) => ({
      data: await listDefinitions(sql, organizationId, query.entity),
    }),
    createCustomField: async ({ body, organizationId }) => ({
      status: 201,
      data: await createDefinition(sql, organizationId, body),
      message: "Custom field created",
    }),
    updateCustomField: async ({ params, body, organizationId }) => ({
      data: await updateDefinition(sql, organizationId, params.fieldId, body),
      message: "Custom field updated",
    }),
    deleteCustomField: async ({ params, query, organizationId }) => {
      const definition = await deleteDefinition(
        sql,
        organizationId,
        params.fieldId,
        query.force ?? false,
      );
      return { data: { id: definition.id }, message: "Custom field deleted" };
    },
  };
}

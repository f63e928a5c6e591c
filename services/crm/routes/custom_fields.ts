import type { customFieldOperations } from "@printshop/shared/contracts/crm";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { createDefinition, listDefinitions, updateDefinition } from "../store/custom_fields.ts";
import { deleteDefinition } from "../store/custom_field_removal.ts";

/** `/v1/custom-fields`: the fields a shop adds to its customers, vendors and tasks. */
export function customFieldRoutes(
  { sql, config }: ServiceDeps<Config>,
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
        // A forced delete removes values in transactions of at most this many records each.
        config.BULK_MAX_ROWS,
      );
      return { data: { id: definition.id }, message: "Custom field deleted" };
    },
  };
}

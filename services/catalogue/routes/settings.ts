import type { settingsOperations } from "@printshop/shared/contracts/catalogue";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { readSettings, updateSettings } from "../store/settings.ts";

/** `/v1/catalogue-settings`: the size order and the negative-stock rule of the organisation. */
export function settingsRoutes({ sql }: ServiceDeps<Config>): Handlers<typeof settingsOperations> {
  return {
    getCatalogueSettings: async ({ organizationId }) => ({
      data: await readSettings(sql, organizationId),
    }),
    updateCatalogueSettings: async ({ body, organizationId }) => ({
      data: await updateSettings(sql, organizationId, body),
      message: "Catalogue settings updated",
    }),
  };
}

import type { previewOperations } from "@printshop/shared/contracts/quotes";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { previewQuoteTree } from "../store/preview.ts";

export function previewRoutes({ sql }: ServiceDeps<Config>): Handlers<typeof previewOperations> {
  return {
    previewQuote: async ({ body, organizationId }) => ({
      data: await previewQuoteTree(sql, organizationId, body),
    }),
  };
}

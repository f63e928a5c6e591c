import type { variantOperations } from "@printshop/shared/contracts/catalogue";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  bulkCreateVariants,
  createVariant,
  deleteVariant,
  findVariant,
  listVariants,
  updateVariant,
} from "../store/variants.ts";

/** `/v1/garment-variants`: colours and sizes of catalogue items, with their stock. */
export function variantRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof variantOperations> {
  return {
    bulkCreateGarmentVariants: async ({ body, auth }) => {
      // The body's own check lets exactly one of the two through.
      const [field, rows] = body.input
        ? ["input", body.input] as const
        : ["items", body.items ?? []] as const;
      const variants = await bulkCreateVariants(sql, auth, field, rows, config.BULK_MAX_ROWS);
      return {
        status: 201,
        data: variants,
        message: `${variants.length} variant${variants.length === 1 ? "" : "s"} created`,
      };
    },
    createGarmentVariant: async ({ body, auth }) => ({
      status: 201,
      data: await createVariant(sql, auth, body),
      message: "Garment variant created",
    }),
    listGarmentVariants: async ({ query, organizationId }) => ({
      data: await listVariants(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getGarmentVariant: async ({ params, organizationId }) => ({
      data: await findVariant(sql, organizationId, params.garmentVariantId),
    }),
    updateGarmentVariant: async ({ params, body, auth }) => ({
      data: await updateVariant(sql, auth, params.garmentVariantId, body),
      message: "Garment variant updated",
    }),
    deleteGarmentVariant: async ({ params, organizationId }) => ({
      data: await deleteVariant(sql, organizationId, params.garmentVariantId),
      message: "Garment variant deleted",
    }),
  };
}

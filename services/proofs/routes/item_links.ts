import type { proofItemLinkOperations } from "@printshop/shared/contracts/proofs";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  confirmSizeSplit,
  createItemLink,
  deleteItemLink,
  updateItemLink,
} from "../store/item_links.ts";

/** A proof's items: added through the proof, then addressed by their own ids. */
export function itemLinkRoutes(
  { sql }: ServiceDeps<Config>,
): Handlers<typeof proofItemLinkOperations> {
  return {
    createProofItemLink: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createItemLink(sql, organizationId, params.proofId, body),
      message: "Item added",
    }),
    updateProofItemLink: async ({ params, body, organizationId }) => ({
      data: await updateItemLink(sql, organizationId, params.proofItemLinkId, body),
      message: "Item updated",
    }),
    deleteProofItemLink: async ({ params, organizationId }) => ({
      data: await deleteItemLink(sql, organizationId, params.proofItemLinkId),
      message: "Item removed",
    }),
    confirmProofItemSizeSplit: async ({ params, body, organizationId, auth }) => ({
      data: await confirmSizeSplit(sql, organizationId, params.proofItemLinkId, body, auth),
      message: "Size split confirmed",
    }),
  };
}

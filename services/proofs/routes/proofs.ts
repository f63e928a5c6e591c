import type { proofOperations } from "@printshop/shared/contracts/proofs";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createProof,
  deleteProof,
  listProofs,
  setProofStatus,
  updateProof,
} from "../store/proofs.ts";
import { findProof } from "../store/proof_reads.ts";
import { reviseProof } from "../store/revisions.ts";
import { proofHistory } from "../store/history.ts";
import { recordClientDecision } from "../store/decisions.ts";
import { mayAimLinks } from "../domain/deciding_links.ts";

/** `/v1/proofs`: proofs, their revisions, history, direct status and client decisions. */
export function proofRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof proofOperations> {
  return {
    createProof: async ({ body, organizationId, auth }) => ({
      status: 201,
      data: await createProof(sql, organizationId, body, {
        confirmsRecipient: mayAimLinks(auth.scopes),
      }),
      message: "Proof created",
    }),
    listProofs: async ({ query, organizationId }) => ({
      data: await listProofs(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getProof: async ({ params, organizationId }) => ({
      data: await findProof(sql, organizationId, params.proofId),
    }),
    updateProof: async ({ params, body, organizationId, auth }) => ({
      data: await updateProof(sql, organizationId, params.proofId, body, {
        confirmsRecipient: mayAimLinks(auth.scopes),
      }),
      message: "Proof updated",
    }),
    deleteProof: async ({ params, organizationId }) => {
      const proof = await deleteProof(sql, organizationId, params.proofId);
      return { data: { id: proof.id }, message: "Proof deleted" };
    },
    getProofHistory: async ({ params, organizationId }) => ({
      data: await proofHistory(sql, organizationId, params.proofId),
    }),
    reviseProof: async ({ params, body, organizationId, auth }) => {
      const proof = await reviseProof(sql, organizationId, params.proofId, body, auth);
      return { status: 201, data: proof, message: `Revision ${proof.revision.number} opened` };
    },
    setProofStatus: async ({ params, body, organizationId, auth }) => {
      const { proof, changed } = await setProofStatus(
        sql,
        organizationId,
        params.proofId,
        body,
        auth,
      );
      return {
        data: proof,
        message: changed
          ? `Status set to "${proof.status}"`
          : `Status was already "${proof.status}"`,
      };
    },
    recordClientDecision: async ({ params, body, organizationId, auth }) => ({
      status: 201,
      data: await recordClientDecision(sql, organizationId, params.proofId, body, {
        channel: "api",
        caller: auth,
      }),
      message: "Decision recorded",
    }),
  };
}

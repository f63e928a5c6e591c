/**
 * Proof item links: the lines of a quote a proof is about, with the quantities per size the
 * shop proposes, and the split it confirms (spec 4.9, `/v1/proof-item-links/{id}/size-split`).
 * A link is addressed by its own id; adding one goes through its proof.
 */
import { z } from "zod";
import { CREDENTIAL_KINDS, DateTime, described, setExamples, Text, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { SizeQuantities } from "./values.ts";

const LINK_DESCRIPTIONS = {
  id: "The item link's id",
  proofId: "The proof it belongs to",
  quoteLineId: "The quote line it stands for (an id in the quotes service; kept as given, not " +
    "checked); null for an item of a job without a quote",
  description: "What the item is, as the customer reads it (`Gildan 5000 Black, front print`)",
  sizes: "The quantities per size the shop proposes, in the order shown; each size once",
  confirmedSizes: "The quantities per size confirmed by `size-split`; null until confirmed, " +
    "and cleared when `sizes` changes afterwards",
  confirmedAt: "When the split was confirmed; null until then",
  confirmedByCredentialKind: "How whoever confirmed it authenticated: `tenant_key` or " +
    "`partner`; null until confirmed",
  confirmedByCredentialId: "The API key or partner app that confirmed it (`credential.id` of " +
    "GET /v1/me); null until confirmed",
  createdAt: "When it was added",
  updatedAt: "When it last changed",
};

export const ProofItemLink = z.object(described({
  id: Uuid,
  proofId: Uuid,
  quoteLineId: Uuid.nullable(),
  description: z.string(),
  sizes: SizeQuantities,
  confirmedSizes: SizeQuantities.nullable(),
  confirmedAt: DateTime.nullable(),
  confirmedByCredentialKind: z.enum(CREDENTIAL_KINDS).nullable(),
  confirmedByCredentialId: z.string().nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, LINK_DESCRIPTIONS)).meta({
  id: "ProofItemLink",
  description: "A quote line a proof is about, with its proposed and confirmed size quantities",
});
export type ProofItemLink = z.infer<typeof ProofItemLink>;

export const PROOF_ID_EXAMPLE = "0193b1a0-3e4f-7a50-8b61-7c8d9eafb0c1";

export const PROOF_ITEM_LINK_EXAMPLE: ProofItemLink = {
  id: "0193b1a0-4f50-7b61-8c72-8d9eafb0c1d2",
  proofId: PROOF_ID_EXAMPLE,
  quoteLineId: "0193a3e0-3d4e-7f50-8162-738495061728",
  description: "Gildan 5000 Black, front print",
  sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 40 }, { size: "L", quantity: 30 }],
  confirmedSizes: null,
  confirmedAt: null,
  confirmedByCredentialKind: null,
  confirmedByCredentialId: null,
  createdAt: "2026-11-20T23:25:40.117Z",
  updatedAt: "2026-11-20T23:25:40.117Z",
};
setExamples(ProofItemLink, PROOF_ITEM_LINK_EXAMPLE);

const itemFields = described({
  quoteLineId: Uuid.nullable(),
  description: Text(500),
  sizes: SizeQuantities,
}, LINK_DESCRIPTIONS);

export const CreateProofItemLinkBody = z.strictObject({
  ...itemFields,
  quoteLineId: itemFields.quoteLineId.optional(),
  sizes: itemFields.sizes.optional(),
}).meta({
  id: "CreateProofItemLinkBody",
  description: "A quote line to add to a proof, with its proposed quantities per size (none " +
    "when omitted)",
});
setExamples(CreateProofItemLinkBody, {
  quoteLineId: PROOF_ITEM_LINK_EXAMPLE.quoteLineId,
  description: PROOF_ITEM_LINK_EXAMPLE.description,
  sizes: PROOF_ITEM_LINK_EXAMPLE.sizes,
});
export type CreateProofItemLinkBody = z.infer<typeof CreateProofItemLinkBody>;

export const UpdateProofItemLinkBody = z.strictObject({
  quoteLineId: itemFields.quoteLineId.optional(),
  description: itemFields.description.optional(),
  sizes: itemFields.sizes.optional(),
}).meta({
  id: "UpdateProofItemLinkBody",
  description: "The item link fields to change; those not given stay as they are (new `sizes` " +
    "clear a confirmed split)",
});
setExamples(UpdateProofItemLinkBody, {
  sizes: [{ size: "S", quantity: 12 }, { size: "M", quantity: 38 }, { size: "L", quantity: 30 }],
});
export type UpdateProofItemLinkBody = z.infer<typeof UpdateProofItemLinkBody>;

export const ConfirmSizeSplitBody = z.strictObject(described({ sizes: SizeQuantities }, {
  sizes: "The confirmed quantities per size: whole numbers ≥ 0, each size once",
})).meta({
  id: "ConfirmSizeSplitBody",
  description: "The per-size quantities to confirm for a proof item",
});
const CONFIRMED_SIZES = [
  { size: "S", quantity: 12 },
  { size: "M", quantity: 38 },
  { size: "L", quantity: 30 },
];
setExamples(ConfirmSizeSplitBody, { sizes: CONFIRMED_SIZES });
export type ConfirmSizeSplitBody = z.infer<typeof ConfirmSizeSplitBody>;

const LinkDeleted = z.object(described({ id: Uuid, proofId: Uuid }, {
  id: "The id of the removed item link",
  proofId: "The proof it belonged to",
})).meta({ id: "ProofItemLinkDeleted", description: "What an item link delete removed" });
setExamples(LinkDeleted, { id: PROOF_ITEM_LINK_EXAMPLE.id, proofId: PROOF_ID_EXAMPLE });

export const proofItemLinkEvents = defineEvents("proofs", "proofs.read", {
  "proof_item_link.size_split_confirmed": {
    summary: "The per-size quantities of a proof item were confirmed; the item carries the " +
      "split, who confirmed it and when",
    data: ProofItemLink,
  },
});

export const proofItemLinkOperations = operations("Proofs", {
  createProofItemLink: {
    method: "POST",
    path: "/v1/proofs/{proofId}/items",
    scope: "proofs.write",
    summary: "Add a quote line to a proof, with its proposed quantities per size",
    body: CreateProofItemLinkBody,
    responses: { 201: ProofItemLink },
    events: ["proof.updated"],
  },
  updateProofItemLink: {
    method: "PATCH",
    path: "/v1/proof-item-links/{proofItemLinkId}",
    scope: "proofs.write",
    summary: "Change a proof item; new `sizes` clear a split confirmed for the old ones",
    body: UpdateProofItemLinkBody,
    responses: { 200: ProofItemLink },
    events: ["proof.updated"],
    examples: {
      responses: {
        200: {
          ...PROOF_ITEM_LINK_EXAMPLE,
          sizes: CONFIRMED_SIZES,
          updatedAt: "2026-11-21T09:30:00.000Z",
        },
      },
    },
  },
  deleteProofItemLink: {
    method: "DELETE",
    path: "/v1/proof-item-links/{proofItemLinkId}",
    scope: "proofs.write",
    summary: "Remove an item from its proof",
    responses: { 200: LinkDeleted },
    events: ["proof.updated"],
  },
  confirmProofItemSizeSplit: {
    method: "POST",
    path: "/v1/proof-item-links/{proofItemLinkId}/size-split",
    scope: "proofs.approve",
    summary: "Confirm the quantities per size of a proof item, recording who confirmed them " +
      "and when",
    body: ConfirmSizeSplitBody,
    responses: { 200: ProofItemLink },
    events: ["proof_item_link.size_split_confirmed"],
    examples: {
      responses: {
        200: {
          ...PROOF_ITEM_LINK_EXAMPLE,
          confirmedSizes: CONFIRMED_SIZES,
          confirmedAt: "2026-11-22T01:12:09.554Z",
          confirmedByCredentialKind: "tenant_key",
          confirmedByCredentialId: "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f",
          updatedAt: "2026-11-22T01:12:09.554Z",
        },
      },
    },
  },
});

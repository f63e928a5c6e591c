/**
 * The customer approval page: each send gives every proof it carries a link, `/approve/{token}`
 * on the gateway, which the customer opens with no credential. The token names one link (one
 * proof revision, one recipient, one send) and is signed by the proofs service; the link expires
 * APPROVAL_LINK_DAYS after the send, is superseded when the proof is revised and revoked when
 * the proof is deleted. The page records a view on the link's first opening and takes the
 * customer's decision exactly as `POST /v1/proofs/{proofId}/client-decision` does, with the
 * evidence of what the page showed.
 */
import { z } from "zod";
import { DateTime, described, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import type { PageSpec } from "../operation.ts";
import { Proof, ProofHistoryEntry } from "./proofs.ts";

/** How long a link answers after its send. */
export const APPROVAL_LINK_DAYS = 30;

/**
 * The scope of the signed context the gateway sends with a page request. No credential can hold
 * it (keys and grants take only the scopes of `shared/scopes.ts`), so only the gateway's page
 * forwarding reaches the internal path.
 */
export const APPROVAL_PAGE_SCOPE = "platform.approval_page";

export const approvalPages = {
  approvalPage: {
    path: "/approve/{token}",
    internalPath: "/internal/approve/{token}",
    internalScope: APPROVAL_PAGE_SCOPE,
    methods: ["GET", "POST"],
    summary: "A customer's approval page for one proof revision: view it, approve it, or " +
      "request changes",
    // Changing the label invalidates every link sent.
    linkTokenLabel: "printshop proof approval links v1",
    // Views are reads after the first; a link forwarded round an office still opens. A decision
    // writes, and a customer correcting the form posts a few times at most.
    requestsPerMinutePerLink: { GET: 60, POST: 10 },
    maxBodyBytes: 16 * 1024,
    events: ["proof.viewed", "proof.client_decision_recorded", "proof.status_changed"],
  },
} as const satisfies Record<string, PageSpec>;

export const ApprovalLink = z.object(described({
  proofId: Uuid,
  revision: z.int().min(1),
  url: z.string().nullable(),
  expiresAt: DateTime,
}, {
  proofId: "The proof it decides",
  revision: "The revision it shows; a later revision supersedes it",
  url: "The page, on the gateway's public address; null unless the credential holds " +
    "`proofs.approve` (anyone holding the link can decide, so pass it only to the customer)",
  expiresAt: `When it stops answering (${APPROVAL_LINK_DAYS} days after the send)`,
})).meta({ id: "ApprovalLink", description: "A customer's link to a proof's approval page" });
export type ApprovalLink = z.infer<typeof ApprovalLink>;

export const ProofViewed = z.object(described({
  proof: Proof,
  entry: ProofHistoryEntry,
}, {
  proof: "The proof, `viewed` when it was `sent`",
  entry: "The `viewed` entry of the revision the link shows, with the visitor's address and " +
    "browser",
})).meta({ id: "ProofViewed", description: "A customer opened a proof's approval page" });
export type ProofViewed = z.infer<typeof ProofViewed>;

export const approvalEvents = defineEvents("proofs", "proofs.read", {
  "proof.viewed": {
    summary: "A customer opened an approval link for the first time",
    data: ProofViewed,
  },
});

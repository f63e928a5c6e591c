/** Value types and enums of the proofs service; each list is written here only. */
import { z } from "zod";
import { HttpsUrl } from "../quotes/values.ts";
import { described, Text } from "../common.ts";

/**
 * Where a proof stands. `draft` while the shop prepares a revision; `sent` once it went to the
 * customer; `viewed` once the customer opened it; then the customer's answer: `approved`,
 * `changes_requested` or `rejected`. Which move each trigger makes is data in
 * services/proofs/domain/status.ts.
 */
export const PROOF_STATUSES = [
  "draft",
  "sent",
  "viewed",
  "approved",
  "changes_requested",
  "rejected",
] as const;
export const ProofStatus = z.enum(PROOF_STATUSES, {
  error: `Must be one of ${PROOF_STATUSES.join(", ")}`,
});
export type ProofStatus = typeof PROOF_STATUSES[number];

/** What a customer may answer to a revision. */
export const CLIENT_DECISIONS = ["approve", "request_changes"] as const;
export const ClientDecision = z.enum(CLIENT_DECISIONS, {
  error: `Must be one of ${CLIENT_DECISIONS.join(", ")}`,
});
export type ClientDecision = typeof CLIENT_DECISIONS[number];

/**
 * The words a signer agrees to, by decision: recorded verbatim with every decision, so what was
 * agreed to can be shown later even if this text changes. The approval page shows the same text.
 */
export const DECISION_WORDING: Readonly<Record<ClientDecision, string>> = {
  approve: "I approve this proof for production exactly as shown: the artwork, its placement, " +
    "the colours, and the sizes and quantities listed. I understand that production starts " +
    "from this approval and that changes after it may be charged.",
  request_changes: "I do not approve this proof. I request the changes described in my " +
    "comment and understand that a new revision will be sent for approval.",
};

/** The longest signer's name and decision comment (the API's body and the page's form). */
export const SIGNER_NAME_MAX = 200;
export const DECISION_COMMENT_MAX = 10_000;

/** How a decision reached the service: over the API on the customer's behalf, or the page. */
export const DECISION_CHANNELS = ["api", "page"] as const;
export type DecisionChannel = typeof DECISION_CHANNELS[number];

/**
 * What a history entry records. `send_failed`: the mail server refused or could not be reached
 * for a send (the entry's `note` holds the error); the send is retried until its attempts run out.
 */
export const PROOF_ENTRY_KINDS = [
  "sent",
  "send_failed",
  "viewed",
  "decision",
  "status_changed",
] as const;
export type ProofEntryKind = typeof PROOF_ENTRY_KINDS[number];

/** Why a proof's status moved, as `proof.status_changed` tells it. */
export const STATUS_CAUSES = ["manual", "client_decision", "revised", "sent", "viewed"] as const;
export type StatusCause = typeof STATUS_CAUSES[number];

/** Most images a mock or a revision holds, most mocks a revision shows. */
export const IMAGES_MAX = 50;
/** Image addresses are https only: the approval page loads them in a customer's browser. */
export const ImageList = z.array(HttpsUrl).max(IMAGES_MAX, `At most ${IMAGES_MAX} images`);

/** Most sizes one item splits into; most items one proof carries. */
export const SIZES_MAX = 100;
export const PROOF_ITEMS_MAX = 200;
/** The largest quantity of one size. */
export const QUANTITY_MAX = 1_000_000;

export const SizeQuantity = z.strictObject(described({
  size: Text(100),
  quantity: z.int().min(0, "Must not be negative").max(
    QUANTITY_MAX,
    `Must be at most ${QUANTITY_MAX}`,
  ),
}, {
  size: "The size label as the shop spells it (`S`, `2XL`, `YM`); each size once per item",
  quantity: "How many of that size, a whole number ≥ 0",
})).meta({ id: "SizeQuantity", description: "A quantity of one size" });
export type SizeQuantity = z.infer<typeof SizeQuantity>;

/** Sizes with their quantities; that each size appears once is checked by the service. */
export const SizeQuantities = z.array(SizeQuantity).max(SIZES_MAX, `At most ${SIZES_MAX} sizes`)
  .describe(
    "Quantities by size, in the order given; each size once (compared without regard " +
      "to case)",
  );

/**
 * How a proof's status moves, as data. Each trigger maps the status a proof is in to the status
 * it goes to; a status a trigger does not list refuses it (409). `POST …/status` is outside this
 * table on purpose: it sets any status directly (spec 3).
 */
import type { ClientDecision, ProofStatus } from "@printshop/shared/contracts/proofs";

/** What moves a proof, other than a direct set. */
export type ProofTrigger = "send" | "view" | "approve" | "request_changes" | "revise";

const UNDECIDED = ["draft", "sent", "viewed"] as const;

/**
 * - `send`: a draft goes out (`sent`); sending again while the customer has not decided keeps
 *   the status (a reminder); a decided proof is revised before it is sent again.
 * - `view`: the customer opening a sent proof makes it `viewed`; any other view is recorded
 *   without a move (a decided proof opened again, a draft's superseded link).
 * - `approve` / `request_changes`: only an undecided proof takes a decision.
 * - `revise`: from anywhere back to `draft`, with the new revision.
 */
export const MOVES: Readonly<
  Record<ProofTrigger, Readonly<Partial<Record<ProofStatus, ProofStatus>>>>
> = {
  send: { draft: "sent", sent: "sent", viewed: "viewed" },
  view: {
    draft: "draft",
    sent: "viewed",
    viewed: "viewed",
    approved: "approved",
    changes_requested: "changes_requested",
    rejected: "rejected",
  },
  approve: Object.fromEntries(UNDECIDED.map((s) => [s, "approved"])),
  request_changes: Object.fromEntries(UNDECIDED.map((s) => [s, "changes_requested"])),
  revise: {
    draft: "draft",
    sent: "draft",
    viewed: "draft",
    approved: "draft",
    changes_requested: "draft",
    rejected: "draft",
  },
};

const REFUSALS: Readonly<Record<ProofTrigger, string>> = {
  send: "open a new revision (POST …/revise) before sending it again",
  view: "",
  approve: "open a new revision for a new decision, or set the status directly",
  request_changes: "open a new revision for a new decision, or set the status directly",
  revise: "",
};

/** The status a trigger moves `from` to, or why it cannot (a message for a 409). */
export function move(
  trigger: ProofTrigger,
  from: ProofStatus,
): { to: ProofStatus } | { refused: string } {
  const to = MOVES[trigger][from];
  if (to !== undefined) return { to };
  return {
    refused: `A proof in status "${from}" cannot be ${VERBS[trigger]}; ${REFUSALS[trigger]}`,
  };
}

const VERBS: Readonly<Record<ProofTrigger, string>> = {
  send: "sent",
  view: "viewed",
  approve: "approved by a client decision",
  request_changes: "given a change request",
  revise: "revised",
};

/** The trigger of a client decision. */
export function decisionTrigger(decision: ClientDecision): ProofTrigger {
  return decision;
}

/**
 * A customer's decision on the current revision, over the API on their behalf or on the approval
 * page: recorded as evidence (exactly what the revision showed, its digest, the signer, the
 * words agreed to and the channel) with the status it moves to.
 */
import { jsonParam, type Queryable, type Sql, transaction } from "@printshop/shared/db";
import {
  type ClientDecisionBody,
  type ClientDecisionResult,
  DECISION_WORDING,
} from "@printshop/shared/contracts/proofs";
import { conflict, invalid } from "@printshop/shared/http";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { decidedRevision, decisionProblems } from "../domain/rules.ts";
import { shownDigest } from "../domain/evidence.ts";
import { PROOFS } from "./proof_rows.ts";
import { findProof } from "./proof_reads.ts";
import { moved } from "./proof_changes.ts";
import { currentShowing, lockShownMocks } from "./revisions.ts";
import { recordStep } from "./history.ts";

/** How a decision reached the service, with what each channel knows of who made it. */
export type DecisionSource =
  | { channel: "api"; caller: Caller }
  | {
    channel: "page";
    ipAddress: string | null;
    userAgent: string | null;
    /** The digest of what the page showed: a decision counts only for that content (409). */
    digest: string;
  };

/**
 * Records a customer's decision on the current revision and moves the status (`approved`,
 * `changes_requested`). Kept as evidence: the revision, exactly what it showed and its digest,
 * the signer, the time, the words agreed to and the channel. Naming a superseded revision is a
 * 409; a proof already decided is a 409 too (revise it, or set the status directly). The
 * approval page records its decisions with `decide`, in the transaction that holds its link.
 */
export async function recordClientDecision(
  sql: Sql,
  organizationId: string,
  id: string,
  input: ClientDecisionBody,
  source: DecisionSource,
): Promise<ClientDecisionResult> {
  assertDecision(input);
  return await transaction(sql, (tx) => decide(tx, organizationId, id, input, source));
}

/** A decision's own problems (a change request says what to change): 400 naming them. */
export function assertDecision(input: Pick<ClientDecisionBody, "decision" | "comment">): void {
  const problems = decisionProblems(input.decision, input.comment);
  if (problems.length > 0) throw invalid("decision", problems);
}

/**
 * `recordClientDecision` inside the caller's transaction (the approval page's, which holds the
 * link and the proof already): it locks the proof, then the mocks the revision shows, and only
 * then reads what it shows, so the digest taken is of what the proof shows at commit.
 */
export async function decide(
  tx: Queryable,
  organizationId: string,
  id: string,
  input: ClientDecisionBody,
  source: DecisionSource,
): Promise<ClientDecisionResult> {
  const row = await PROOFS.lock(tx, organizationId, id);
  const decided = decidedRevision(input.revision, row.current_revision);
  if ("superseded" in decided) throw conflict(decided.superseded);
  if ("problem" in decided) throw invalid("decision", [decided.problem]);
  const to = moved(input.decision, row.status);
  const before = await findProof(tx, organizationId, id);
  await lockShownMocks(tx, before.revision.id);
  const shown = await currentShowing(tx, before);
  const digest = shownDigest(shown);
  if (source.channel === "page" && source.digest !== digest) {
    throw conflict(
      "The proof changed after the page showed it; the decision was not recorded. Review " +
        "it again",
    );
  }
  const page = source.channel === "page" ? source : null;
  const result = await recordStep(tx, organizationId, row, {
    kind: "decision",
    revisionId: before.revision.id,
    to,
    cause: "client_decision",
    caller: source.channel === "api" ? source.caller : null,
    details: {
      ip_address: page?.ipAddress ?? null,
      user_agent: page?.userAgent ?? null,
      decision: input.decision,
      comment: input.comment ?? null,
      signer_name: input.signerName,
      signer_email: input.signerEmail ?? null,
      channel: source.channel,
      wording: DECISION_WORDING[input.decision],
      digest,
      shown: jsonParam(tx, shown),
    },
  });
  await writeEvent(tx, {
    organizationId,
    type: "proof.client_decision_recorded",
    aggregateId: id,
    payload: result,
  });
  return result;
}

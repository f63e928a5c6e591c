/**
 * How a change to a proof is announced, once for every module that changes one: its creation, a
 * change of its own fields or items, a new revision (`proof.created`, `proof.updated`,
 * `proof.revised`, with the whole proof) or a move of its status (`proof.status_changed`), in
 * the transaction that makes the change.
 */
import type { Queryable } from "@printshop/shared/db";
import type { Proof, ProofStatus, StatusCause } from "@printshop/shared/contracts/proofs";
import { conflict } from "@printshop/shared/http";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { move, type ProofTrigger } from "../domain/status.ts";
import { findProof } from "./proof_reads.ts";

/** The proof as it now is, announced as `type` with the whole proof as its payload. */
export async function announceProof(
  tx: Queryable,
  organizationId: string,
  id: string,
  type: "proof.created" | "proof.updated" | "proof.revised",
): Promise<Proof> {
  const proof = await findProof(tx, organizationId, id);
  await writeEvent(tx, { organizationId, type, aggregateId: id, payload: proof });
  return proof;
}

/** Records a change of a proof's own fields or items: `proof.updated` with the whole proof. */
export async function touchProof(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<Proof> {
  await tx`UPDATE proofs SET updated_at = now() WHERE id = ${id}`;
  return await announceProof(tx, organizationId, id, "proof.updated");
}

export interface StatusMove {
  from: ProofStatus;
  to: ProofStatus;
  cause: StatusCause;
  caller: Caller | null;
}

/**
 * Sets the status (when it moves) and writes `proof.status_changed`; answers the proof as it
 * now is either way.
 */
export async function applyStatus(
  tx: Queryable,
  organizationId: string,
  id: string,
  { from, to, cause, caller }: StatusMove,
): Promise<Proof> {
  if (from === to) return await findProof(tx, organizationId, id);
  await tx`UPDATE proofs SET status = ${to}, updated_at = now() WHERE id = ${id}`;
  const proof = await findProof(tx, organizationId, id);
  await writeEvent(tx, {
    organizationId,
    type: "proof.status_changed",
    aggregateId: id,
    payload: {
      proof,
      fromStatus: from,
      toStatus: to,
      cause,
      revision: proof.revision.number,
      credentialKind: caller?.credentialKind ?? null,
      credentialId: caller?.credentialId ?? null,
    },
  });
  return proof;
}

/** The status a trigger moves a proof to, or 409 saying why not. */
export function moved(trigger: ProofTrigger, from: ProofStatus): ProofStatus {
  const result = move(trigger, from);
  if ("refused" in result) throw conflict(result.refused);
  return result.to;
}

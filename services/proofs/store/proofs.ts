/**
 * Proofs: created with their first revision and items, changed, listed, deleted, and set to a
 * status directly. Every change locks the proof first, so changes to one proof run one after
 * another, and writes its events in the same transaction. Revisions (revisions.ts), items
 * (item_links.ts), the history (history.ts) and decisions (decisions.ts) have their own modules.
 */
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateProofBody,
  ListProofsQuery,
  type Proof,
  PROOF_OWNER_FIELDS,
  type PROOF_SORT_FIELDS,
  type SetProofStatusBody,
  type UpdateProofBody,
} from "@printshop/shared/contracts/proofs";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { conflict, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { ownerProblems, sizeProblems } from "../domain/rules.ts";
import { type ProofRow, PROOFS } from "./proof_rows.ts";
import { findProof, renderProofs } from "./proof_reads.ts";
import { announceProof, touchProof } from "./proof_changes.ts";
import { assertShownMayChange, insertRevision, revisionId } from "./revisions.ts";
import { insertItem } from "./item_links.ts";
import { decisionCount, recordStep } from "./history.ts";

/** The fields of which a proof names at least one. */

/** The proofs' fields: what `filters` may name, and what `sortField` orders on. */
export const PROOF_FIELDS = PROOFS.fields() satisfies FieldTable<
  typeof PROOF_SORT_FIELDS[number]
>;

const PROOF_LIST = listSpec(ListProofsQuery, {
  from: "proofs",
  select: PROOFS.select,
  fields: PROOF_FIELDS,
  search: "proofs_matching",
  order: { field: "createdAt", direction: "desc" },
});

export async function listProofs(
  sql: Queryable,
  organizationId: string,
  query: ListProofsQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<Proof>> {
  return await offsetPage(
    sql,
    PROOF_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: ProofRow[]) => renderProofs(sql, rows),
  );
}

/**
 * Creates a proof in `draft` with revision 1 and its items. `confirmsRecipient`: the caller holds
 * `proofs.approve`, so the recipient it gives is one deciding links may go to
 * (domain/deciding_links.ts).
 */
export async function createProof(
  sql: Sql,
  organizationId: string,
  input: CreateProofBody,
  options: { confirmsRecipient: boolean },
): Promise<Proof> {
  const problems = ownerProblems(input, PROOF_OWNER_FIELDS, "A proof");
  (input.items ?? []).forEach((item, i) =>
    problems.push(...sizeProblems(item.sizes ?? [], `items.${i}.sizes`))
  );
  if (problems.length > 0) throw invalid("proof", problems);
  return await transaction(sql, async (tx) => {
    const id = uuidv7();
    await tx`
      INSERT INTO proofs ${
      tx({
        id,
        organization_id: organizationId,
        ...changedColumns(input, ["mockIds", "imageUrls", "notes", "items"]),
        recipient_confirmed_email: options.confirmsRecipient ? input.recipientEmail : null,
      })
    }`;
    await insertRevision(tx, organizationId, id, 1, input);
    for (const item of input.items ?? []) await insertItem(tx, organizationId, id, item);
    return await announceProof(tx, organizationId, id, "proof.created");
  });
}

/**
 * Changes a proof's own fields. The title is part of what its revision shows: once that revision
 * is fixed (sent, decided, approved) a different title is 409, and a new revision takes it.
 * `confirmsRecipient`: the caller holds `proofs.approve`, so a `recipientEmail` it gives (the
 * same one too) is confirmed as the address deciding links may go to.
 */
export async function updateProof(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateProofBody,
  options: { confirmsRecipient: boolean },
): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    const current = await PROOFS.lock(tx, organizationId, id);
    const merged = { quoteId: current.quote_id, jobId: current.job_id, ...input };
    const problems = ownerProblems(merged, PROOF_OWNER_FIELDS, "A proof");
    if (problems.length > 0) throw invalid("proof", problems);
    if (input.title !== undefined && input.title !== current.title) {
      await assertShownMayChange(tx, current, "its title");
    }
    const changes: Record<string, unknown> = changedColumns(input);
    if (Object.keys(changes).length === 0) return await findProof(tx, organizationId, id);
    if (input.recipientEmail !== undefined && options.confirmsRecipient) {
      changes.recipient_confirmed_email = input.recipientEmail;
    }
    await tx`UPDATE proofs SET ${tx(changes)} WHERE id = ${id}`;
    return await touchProof(tx, organizationId, id);
  });
}

/**
 * Confirms each proof's recipient as the address deciding links may go to: a send by a credential
 * holding `proofs.approve` chose it (domain/deciding_links.ts). The proofs are locked by the
 * send; no field the API shows changes, and the send's own events announce it.
 */
export async function confirmRecipients(tx: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx`
    UPDATE proofs SET recipient_confirmed_email = recipient_email
    WHERE id = ANY(${[...ids]}::uuid[])`;
}

/**
 * Deletes a proof with its revisions, items and history. A proof a customer has decided on is
 * kept (409): its history is the evidence of what they agreed to.
 */
export async function deleteProof(sql: Sql, organizationId: string, id: string): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    await PROOFS.lock(tx, organizationId, id);
    const decided = await decisionCount(tx, id);
    if (decided > 0) {
      throw conflict(
        `Proof "${id}" holds ${decided} recorded customer decision` +
          `${decided === 1 ? "" : "s"}, kept as evidence; it cannot be deleted`,
      );
    }
    const proof = await findProof(tx, organizationId, id);
    await tx`DELETE FROM proofs WHERE id = ${id}`;
    await writeEvent(tx, {
      organizationId,
      type: "proof.deleted",
      aggregateId: id,
      payload: proof,
    });
    return proof;
  });
}

/**
 * Sets any status directly (spec 3), recorded in the current revision's history as a manual
 * change with the credential that made it. Setting the status the proof is in changes nothing.
 */
export async function setProofStatus(
  sql: Sql,
  organizationId: string,
  id: string,
  input: SetProofStatusBody,
  caller: Caller,
): Promise<{ proof: Proof; changed: boolean }> {
  return await transaction(sql, async (tx) => {
    const row = await PROOFS.lock(tx, organizationId, id);
    if (row.status === input.status) {
      return { proof: await findProof(tx, organizationId, id), changed: false };
    }
    const { proof } = await recordStep(tx, organizationId, row, {
      kind: "status_changed",
      revisionId: await revisionId(tx, id, row.current_revision),
      to: input.status,
      cause: "manual",
      caller,
      details: { note: input.note ?? null },
    });
    return { proof, changed: true };
  });
}

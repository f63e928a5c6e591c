/**
 * A proof's numbered revisions, each with the mocks and images it shows. Opening the next one
 * returns the proof to `draft`; what the current one shows is what a decision is evidence of.
 */
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import type {
  Proof,
  ProofRevision,
  ReviseProofBody,
  ShownContent,
} from "@printshop/shared/contracts/proofs";
import { conflict, type ErrorDetail, invalid, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller } from "@printshop/shared/internal-context";
import { repeatedMockProblems, revisionContentProblems } from "../domain/rules.ts";
import { type RevisionFixity, shownChangeRefusal, shownContent } from "../domain/evidence.ts";
import {
  type ProofRow,
  PROOFS,
  REVISION_SELECT,
  type RevisionRow,
  REVISIONS,
  toRevision,
} from "./proof_rows.ts";
import { announceProof, applyStatus, moved } from "./proof_changes.ts";

/**
 * Refuses (400, naming each `mockIds.N`) a mock the organisation does not have: an unknown id
 * and another organisation's look the same. The mocks found are key-share locked, so they
 * cannot be deleted before this transaction links them.
 */
async function assertMocks(
  tx: Queryable,
  organizationId: string,
  mockIds: readonly string[],
): Promise<void> {
  const problems: ErrorDetail[] = repeatedMockProblems(mockIds);
  if (mockIds.length > 0) {
    const found = await tx<{ id: string }[]>`
      SELECT id FROM mocks WHERE organization_id = ${organizationId}
        AND id = ANY(${[...mockIds]}::uuid[])
      FOR KEY SHARE`;
    const known = new Set(found.map((r) => r.id));
    mockIds.forEach((id, i) => {
      if (!known.has(id)) {
        problems.push({
          path: `mockIds.${i}`,
          message: `Mock "${id}" was not found in this organisation; give one of its mocks`,
        });
      }
    });
  }
  if (problems.length > 0) throw invalid("proof revision", problems);
}

/** Opens revision `number` of a proof with what it shows; checked before anything is written. */
export async function insertRevision(
  tx: Queryable,
  organizationId: string,
  proofId: string,
  number: number,
  input: ReviseProofBody,
): Promise<void> {
  const mockIds = input.mockIds ?? [];
  const imageUrls = input.imageUrls ?? [];
  const empty = revisionContentProblems(mockIds, imageUrls);
  if (empty.length > 0) throw invalid("proof revision", empty);
  await assertMocks(tx, organizationId, mockIds);
  const id = uuidv7();
  await tx`
    INSERT INTO proof_revisions ${
    tx({
      id,
      organization_id: organizationId,
      proof_id: proofId,
      number,
      image_urls: imageUrls,
      notes: input.notes ?? null,
    })
  }`;
  if (mockIds.length > 0) {
    await tx`
      INSERT INTO proof_revision_mocks ${
      tx(mockIds.map((mockId, i) => ({
        organization_id: organizationId,
        revision_id: id,
        mock_id: mockId,
        position: i + 1,
      })))
    }`;
  }
}

/** Opens the next revision; the proof returns to `draft`. */
export async function reviseProof(
  sql: Sql,
  organizationId: string,
  id: string,
  input: ReviseProofBody,
  caller: Caller,
): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    const row = await PROOFS.lock(tx, organizationId, id);
    const number = row.current_revision + 1;
    await insertRevision(tx, organizationId, id, number, input);
    await tx`UPDATE proofs SET current_revision = ${number}, updated_at = now() WHERE id = ${id}`;
    await announceProof(tx, organizationId, id, "proof.revised");
    const to = moved("revise", row.status);
    return await applyStatus(tx, organizationId, id, {
      from: row.status,
      to,
      cause: "revised",
      caller,
    });
  });
}

/** The id of a proof's revision `number`; 404 for a number the proof does not have. */
export async function revisionId(tx: Queryable, proofId: string, number: number): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    SELECT id FROM proof_revisions WHERE proof_id = ${proofId} AND number = ${number}`;
  if (!row) throw notFound(REVISIONS.noun, `${proofId}#${number}`);
  return row.id;
}

/** Every revision of a proof, first to current. */
export async function revisionsOf(sql: Queryable, proofId: string): Promise<ProofRevision[]> {
  const rows = await sql<RevisionRow[]>`
    SELECT ${sql.unsafe(REVISION_SELECT)} FROM proof_revisions r
    WHERE r.proof_id = ${proofId} ORDER BY r.number`;
  return rows.map(toRevision);
}

/** What `proof`'s current revision shows: the content a decision's digest is taken of. */
export async function currentShowing(tx: Queryable, proof: Proof): Promise<ShownContent> {
  const mocks = await tx<{ images: string[] }[]>`
    SELECT k.images FROM proof_revision_mocks m JOIN mocks k ON k.id = m.mock_id
    WHERE m.revision_id = ${proof.revision.id} ORDER BY m.position`;
  return shownContent({
    proofId: proof.id,
    revision: proof.revision.number,
    title: proof.title,
    notes: proof.revision.notes,
    mockImages: mocks.map((m) => m.images),
    imageUrls: proof.revision.imageUrls,
    items: proof.items,
  });
}

/**
 * Whether what each revision shows is fixed, from the facts that fix it: a `sent` or `decision`
 * entry in its history, or its approval: being an approved proof's current revision, or a move
 * to `approved` in its history (set by hand, then set back: what was approved stays as it was
 * approved). FROM must name the revision `r` and its proof `p`.
 */
const FIXITY_SELECT = `r.proof_id AS "proofId", r.number AS revision,
  EXISTS (SELECT 1 FROM proof_history h WHERE h.revision_id = r.id AND h.kind = 'sent') AS sent,
  EXISTS (SELECT 1 FROM proof_history h WHERE h.revision_id = r.id AND h.kind = 'decision')
    AS decided,
  (p.status = 'approved' AND p.current_revision = r.number) OR EXISTS (SELECT 1 FROM
    proof_history h WHERE h.revision_id = r.id AND h.to_status = 'approved') AS approved`;

/**
 * Refuses (409 naming the revision) a change to `what` (part of what the current revision
 * shows) once that revision is fixed. The caller holds the proof's lock, which every send,
 * decision and status change takes too, so the revision cannot become fixed before the change
 * commits.
 */
export async function assertShownMayChange(
  tx: Queryable,
  row: ProofRow,
  what: string,
): Promise<void> {
  const [fixity] = await tx<RevisionFixity[]>`
    SELECT ${tx.unsafe(FIXITY_SELECT)} FROM proof_revisions r JOIN proofs p ON p.id = r.proof_id
    WHERE r.proof_id = ${row.id} AND r.number = ${row.current_revision}`;
  const refusal = fixity ? shownChangeRefusal(fixity, what) : null;
  if (refusal !== null) throw conflict(refusal);
}

/**
 * Every revision that shows mock `mockId`, with whether it is fixed, first proof and revision
 * first. The caller holds the mock's lock, for which a step that fixes a revision waits
 * (lockShownMocks), so none becomes fixed before the caller commits.
 */
export async function revisionsShowingMock(
  tx: Queryable,
  mockId: string,
): Promise<RevisionFixity[]> {
  return await tx<RevisionFixity[]>`
    SELECT ${tx.unsafe(FIXITY_SELECT)} FROM proof_revision_mocks m
    JOIN proof_revisions r ON r.id = m.revision_id JOIN proofs p ON p.id = r.proof_id
    WHERE m.mock_id = ${mockId} ORDER BY r.proof_id, r.number`;
}

/**
 * Holds the mocks a revision shows (FOR SHARE) until commit, before what it shows is read and
 * fixed (a send, a decision, an approval): a change to a mock's images then either committed
 * before (and is what is read) or waits and finds the revision fixed (409). Without it, a mock
 * changed between the read and the commit left a decision's digest, or what the customer was
 * sent, other than what the proof shows.
 */
export async function lockShownMocks(tx: Queryable, revisionId: string): Promise<void> {
  await tx`
    SELECT k.id FROM mocks k
    WHERE k.id IN (SELECT m.mock_id FROM proof_revision_mocks m WHERE m.revision_id = ${revisionId})
    ORDER BY k.id FOR SHARE`;
}

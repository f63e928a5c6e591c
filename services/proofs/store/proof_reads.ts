/**
 * A proof as the API answers it: its own fields with its current revision and its items. Every
 * module that answers or announces a proof reads it here, and no other module reads the proofs
 * table for what only it knows (the recipients of a send, a link's current revision).
 */
import type { Queryable } from "@printshop/shared/db";
import type { Proof, ProofItemLink, ProofRevision } from "@printshop/shared/contracts/proofs";
import {
  type ItemRow,
  ITEMS,
  type ProofRow,
  PROOFS,
  REVISION_SELECT,
  type RevisionRow,
  toRevision,
} from "./proof_rows.ts";

function toProof(row: ProofRow, revision: ProofRevision, items: ProofItemLink[]): Proof {
  // The revision and items stand between the status and the times, as the contract shows them.
  const { currentRevision: _, createdAt, updatedAt, ...fields } = PROOFS.read(row);
  return { ...fields, revision, items, createdAt, updatedAt };
}

/** Proofs with their current revision and items: three statements whatever the count. */
export async function renderProofs(sql: Queryable, rows: readonly ProofRow[]): Promise<Proof[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [revisions, items] = await Promise.all([
    sql<RevisionRow[]>`
      SELECT ${sql.unsafe(REVISION_SELECT)} FROM proof_revisions r
      JOIN proofs p ON p.id = r.proof_id AND r.number = p.current_revision
      WHERE r.proof_id = ANY(${ids}::uuid[])`,
    sql<ItemRow[]>`
      SELECT ${sql.unsafe(ITEMS.select)} FROM proof_item_links
      WHERE proof_id = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
  ]);
  const revisionOf = new Map(revisions.map((r) => [r.proof_id, toRevision(r)]));
  const itemsOf = new Map<string, ProofItemLink[]>();
  for (const item of items) {
    const list = itemsOf.get(item.proof_id) ?? [];
    list.push(ITEMS.read(item));
    itemsOf.set(item.proof_id, list);
  }
  return rows.map((row) => toProof(row, revisionOf.get(row.id)!, itemsOf.get(row.id) ?? []));
}

/** The proof as answered, or 404 when the organisation has none. */
export async function findProof(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Proof> {
  const row = await PROOFS.get(sql, organizationId, id);
  return (await renderProofs(sql, [row]))[0]!;
}

/** The proof's current revision number, or null when the organisation has no such proof. */
export async function currentRevisionOf(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<number | null> {
  return (await PROOFS.find(sql, organizationId, id))?.current_revision ?? null;
}

/** Each of `ids` the organisation has, with where it is sent; ids it lacks are left out. */
export async function proofRecipients(
  sql: Queryable,
  organizationId: string,
  ids: readonly string[],
): Promise<{ id: string; recipientEmail: string }[]> {
  const rows = await sql<Pick<ProofRow, "id" | "recipient_email">[]>`
    SELECT id, recipient_email FROM proofs
    WHERE organization_id = ${organizationId} AND id = ANY(${[...ids]}::uuid[])`;
  return rows.map((row) => ({ id: row.id, recipientEmail: row.recipient_email }));
}

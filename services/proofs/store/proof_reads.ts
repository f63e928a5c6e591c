/**
 * A proof as the API answers it: its own fields with its current revision and its items. Every
 * module that answers or announces a proof reads it here, and no other module reads the proofs
 * table for what only it knows (the recipients of a send, a link's current revision).
 */
import { type Queryable, read } from "@printshop/shared/db";
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
import type { SendTarget } from "../domain/deciding_links.ts";

function toProof(row: ProofRow, revision: ProofRevision, items: ProofItemLink[]): Proof {
  // The revision and items stand between the status and the times, as the contract shows them.
  const { currentRevision: _, createdAt, updatedAt, ...fields } = PROOFS.read(row);
  return { ...fields, revision, items, createdAt, updatedAt };
}

/**
 * Proofs with their current revision and items: three statements whatever the count. Given the
 * pool, it reads for the current organisation (`read`), on the connection of an enclosing read
 * (a list's page) when there is one.
 */
export async function renderProofs(sql: Queryable, rows: readonly ProofRow[]): Promise<Proof[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [revisions, items] = await read(sql, (q) =>
    Promise.all([
      q<RevisionRow[]>`
        SELECT ${q.unsafe(REVISION_SELECT)} FROM proof_revisions r
        JOIN proofs p ON p.id = r.proof_id AND r.number = p.current_revision
        WHERE r.proof_id = ANY(${ids}::uuid[])`,
      q<ItemRow[]>`
        SELECT ${q.unsafe(ITEMS.select)} FROM proof_item_links
        WHERE proof_id = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
    ]));
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
  return await read(sql, async (q) => {
    const row = await PROOFS.get(q, organizationId, id);
    return (await renderProofs(q, [row]))[0]!;
  });
}

/**
 * The proof's current revision number, or null when the organisation has no such proof. `lock`
 * holds the proof's row until commit (`share`: no change to it meanwhile; `update`: this
 * transaction will change it), so what is decided on the number stays true while it is acted on.
 */
export async function currentRevisionOf(
  sql: Queryable,
  organizationId: string,
  id: string,
  lock: "share" | "update" | null = null,
): Promise<number | null> {
  if (lock === null) return (await PROOFS.find(sql, organizationId, id))?.current_revision ?? null;
  const [row] = await sql<Pick<ProofRow, "current_revision">[]>`
    SELECT current_revision FROM proofs WHERE organization_id = ${organizationId} AND id = ${id}
    ${lock === "share" ? sql`FOR SHARE` : sql`FOR UPDATE`}`;
  return row?.current_revision ?? null;
}

/**
 * Each of `ids` the organisation has, locked in id order (so two sends of overlapping proofs
 * cannot deadlock), with where it is addressed and the recipient confirmed for it; ids it lacks
 * are left out. Locked before they are read: a recipient changed meanwhile is waited for and
 * seen, so a send checks, and goes to, the address it records.
 */
export async function lockSendTargets(
  sql: Queryable,
  organizationId: string,
  ids: readonly string[],
): Promise<SendTarget[]> {
  const rows = await sql<
    (Pick<ProofRow, "id" | "recipient_email"> & { recipient_confirmed_email: string | null })[]
  >`
    SELECT id, recipient_email, recipient_confirmed_email FROM proofs
    WHERE organization_id = ${organizationId} AND id = ANY(${[...ids]}::uuid[])
    ORDER BY id FOR UPDATE`;
  return rows.map((row) => ({
    id: row.id,
    recipientEmail: row.recipient_email,
    confirmedRecipient: row.recipient_confirmed_email,
  }));
}

/**
 * A proof's items: links to quote lines with their quantities per size, each addressed by its
 * own id. A change to an item is a change to its proof (`proof.updated` with the whole proof);
 * confirming a size split has its own event, carrying the split. Every change locks the proof.
 */
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type ConfirmSizeSplitBody,
  type CreateProofItemLinkBody,
  PROOF_ITEMS_MAX,
  type ProofItemLink,
  type UpdateProofItemLinkBody,
} from "@printshop/shared/contracts/proofs";
import { conflict, notFound } from "@printshop/shared/http";
import { writeEvent } from "@printshop/shared/outbox";
import {
  assertSizes,
  type Caller,
  insertItem,
  ITEM_COLUMNS,
  type ItemRow,
  lockProof,
  toItem,
  touchProof,
} from "./proofs.ts";

/** The item and its proof (both locked), or 404 when the organisation has no such item. */
async function lockItem(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<ItemRow> {
  const [link] = await tx<{ proof_id: string }[]>`
    SELECT proof_id FROM proof_item_links
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!link) throw notFound("Proof item link", id);
  await lockProof(tx, organizationId, link.proof_id);
  const [row] = await tx<ItemRow[]>`
    SELECT ${tx.unsafe(ITEM_COLUMNS)} FROM proof_item_links WHERE id = ${id} FOR UPDATE`;
  // Deleted between the two reads: as missing as it would have been a moment later.
  if (!row) throw notFound("Proof item link", id);
  return row;
}

export async function createItemLink(
  sql: Sql,
  organizationId: string,
  proofId: string,
  input: CreateProofItemLinkBody,
): Promise<ProofItemLink> {
  return await transaction(sql, async (tx) => {
    await lockProof(tx, organizationId, proofId);
    assertSizes(input.sizes, "sizes");
    const [held] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM proof_item_links WHERE proof_id = ${proofId}`;
    if (held!.count >= PROOF_ITEMS_MAX) {
      throw conflict(
        `Proof "${proofId}" already has ${PROOF_ITEMS_MAX} items, the most one proof holds`,
      );
    }
    const row = await insertItem(tx, organizationId, proofId, input);
    await touchProof(tx, organizationId, proofId);
    return toItem(row);
  });
}

/** Changes an item; new `sizes` clear a split confirmed for the old ones. */
export async function updateItemLink(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateProofItemLinkBody,
): Promise<ProofItemLink> {
  return await transaction(sql, async (tx) => {
    const current = await lockItem(tx, organizationId, id);
    assertSizes(input.sizes, "sizes");
    const changes: Record<string, unknown> = {};
    if (input.quoteLineId !== undefined) changes.quote_line_id = input.quoteLineId;
    if (input.description !== undefined) changes.description = input.description;
    if (input.sizes !== undefined) {
      changes.sizes = jsonParam(tx, input.sizes);
      Object.assign(changes, {
        confirmed_sizes: null,
        confirmed_at: null,
        confirmed_by_credential_kind: null,
        confirmed_by_credential_id: null,
      });
    }
    if (Object.keys(changes).length === 0) return toItem(current);
    const [row] = await tx<ItemRow[]>`
      UPDATE proof_item_links SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
      RETURNING ${tx.unsafe(ITEM_COLUMNS)}`;
    await touchProof(tx, organizationId, current.proof_id);
    return toItem(row!);
  });
}

export async function deleteItemLink(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<{ id: string; proofId: string }> {
  return await transaction(sql, async (tx) => {
    const current = await lockItem(tx, organizationId, id);
    await tx`DELETE FROM proof_item_links WHERE id = ${id}`;
    await touchProof(tx, organizationId, current.proof_id);
    return { id, proofId: current.proof_id };
  });
}

/**
 * Confirms an item's quantities per size (each size once; whole numbers ≥ 0), recording who
 * confirmed them and when, and writes `proof_item_link.size_split_confirmed` carrying the split.
 */
export async function confirmSizeSplit(
  sql: Sql,
  organizationId: string,
  id: string,
  input: ConfirmSizeSplitBody,
  caller: Caller,
): Promise<ProofItemLink> {
  return await transaction(sql, async (tx) => {
    await lockItem(tx, organizationId, id);
    assertSizes(input.sizes, "sizes");
    const [row] = await tx<ItemRow[]>`
      UPDATE proof_item_links SET
        confirmed_sizes = ${jsonParam(tx, input.sizes)},
        confirmed_at = now(),
        confirmed_by_credential_kind = ${caller.credentialKind},
        confirmed_by_credential_id = ${caller.credentialId},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(ITEM_COLUMNS)}`;
    const item = toItem(row!);
    await writeEvent(tx, {
      organizationId,
      type: "proof_item_link.size_split_confirmed",
      aggregateId: id,
      payload: item,
    });
    return item;
  });
}

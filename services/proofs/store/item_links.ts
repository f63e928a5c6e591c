/**
 * A proof's items: links to quote lines with their quantities per size, each addressed by its
 * own id. A change to an item is a change to its proof (`proof.updated` with the whole proof);
 * confirming a size split has its own event, carrying the split. Every change locks the proof.
 * The items are part of what the current revision shows: once it is fixed (sent, decided,
 * approved), adding, changing or removing one is 409 until a new revision; a size split is not
 * shown to the customer and goes on.
 */
import { jsonParam, type Queryable, type Sql, transaction } from "@printshop/shared/db";
import {
  type ConfirmSizeSplitBody,
  type CreateProofItemLinkBody,
  PROOF_ITEMS_MAX,
  type ProofItemLink,
  type SizeQuantity,
  type UpdateProofItemLinkBody,
} from "@printshop/shared/contracts/proofs";
import { changedColumns } from "@printshop/shared/db/fields";
import { conflict, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { sizeProblems } from "../domain/rules.ts";
import { canonicalJson } from "../domain/evidence.ts";
import { type ItemRow, ITEMS, type ProofRow, PROOFS } from "./proof_rows.ts";
import { assertShownMayChange } from "./revisions.ts";
import { touchProof } from "./proof_changes.ts";

/** Checks an item's sizes (400 naming `<path>.N.size`). */
function assertSizes(sizes: readonly SizeQuantity[] | undefined, path: string): void {
  const problems = sizeProblems(sizes ?? [], path);
  if (problems.length > 0) throw invalid("proof item", problems);
}

/** Adds an item to a proof (checked by the caller, which holds the proof's lock). */
export async function insertItem(
  tx: Queryable,
  organizationId: string,
  proofId: string,
  input: CreateProofItemLinkBody,
): Promise<ProofItemLink> {
  const [row] = await tx<ItemRow[]>`
    INSERT INTO proof_item_links ${
    tx({
      id: uuidv7(),
      organization_id: organizationId,
      proof_id: proofId,
      quote_line_id: input.quoteLineId ?? null,
      description: input.description,
      sizes: jsonParam(tx, input.sizes ?? []),
    })
  }
    RETURNING ${tx.unsafe(ITEMS.select)}`;
  return ITEMS.read(row!);
}

/** The item and its proof (both locked), or 404 when the organisation has no such item. */
async function lockItem(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<{ item: ItemRow; proof: ProofRow }> {
  const link = await ITEMS.get(tx, organizationId, id);
  // The proof first, as every change to it does, so changes to one proof run one at a time.
  const proof = await PROOFS.lock(tx, organizationId, link.proof_id);
  // Deleted between the two reads: as missing (404) as it would have been a moment later.
  return { item: await ITEMS.lock(tx, organizationId, id), proof };
}

/** Whether `input` changes anything the customer is shown of `item`. */
function changesShown(item: ItemRow, input: UpdateProofItemLinkBody): boolean {
  return (input.description !== undefined && input.description !== item.description) ||
    (input.quoteLineId !== undefined && input.quoteLineId !== item.quote_line_id) ||
    (input.sizes !== undefined && canonicalJson(input.sizes) !== canonicalJson(item.sizes));
}

export async function createItemLink(
  sql: Sql,
  organizationId: string,
  proofId: string,
  input: CreateProofItemLinkBody,
): Promise<ProofItemLink> {
  return await transaction(sql, async (tx) => {
    const proof = await PROOFS.lock(tx, organizationId, proofId);
    assertSizes(input.sizes, "sizes");
    await assertShownMayChange(tx, proof, "its items");
    const [held] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM proof_item_links WHERE proof_id = ${proofId}`;
    if (held!.count >= PROOF_ITEMS_MAX) {
      throw conflict(
        `Proof "${proofId}" already has ${PROOF_ITEMS_MAX} items, the most one proof holds`,
      );
    }
    const item = await insertItem(tx, organizationId, proofId, input);
    await touchProof(tx, organizationId, proofId);
    return item;
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
    const { item: current, proof } = await lockItem(tx, organizationId, id);
    assertSizes(input.sizes, "sizes");
    if (changesShown(current, input)) await assertShownMayChange(tx, proof, "its items");
    const changes = changedColumns(input, ["sizes"]);
    if (input.sizes !== undefined) {
      changes.sizes = jsonParam(tx, input.sizes);
      Object.assign(changes, {
        confirmed_sizes: null,
        confirmed_at: null,
        confirmed_by_credential_kind: null,
        confirmed_by_credential_id: null,
      });
    }
    if (Object.keys(changes).length === 0) return ITEMS.read(current);
    const [row] = await tx<ItemRow[]>`
      UPDATE proof_item_links SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
      RETURNING ${tx.unsafe(ITEMS.select)}`;
    await touchProof(tx, organizationId, current.proof_id);
    return ITEMS.read(row!);
  });
}

export async function deleteItemLink(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<{ id: string; proofId: string }> {
  return await transaction(sql, async (tx) => {
    const { item: current, proof } = await lockItem(tx, organizationId, id);
    await assertShownMayChange(tx, proof, "its items");
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
      RETURNING ${tx.unsafe(ITEMS.select)}`;
    const item = ITEMS.read(row!);
    await writeEvent(tx, {
      organizationId,
      type: "proof_item_link.size_split_confirmed",
      aggregateId: id,
      payload: item,
    });
    return item;
  });
}

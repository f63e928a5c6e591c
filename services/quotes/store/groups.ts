import { type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import type {
  CreateQuoteGroupBody,
  QuoteGroup,
  ReorderBody,
  UpdateQuoteGroupBody,
} from "@printshop/shared/contracts/quotes";
import { ApiError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { changedColumns, type EveryFieldHasAColumn } from "@printshop/shared/db/fields";
import type { GroupRow } from "./rows.ts";
import { renumber } from "../domain/reorder.ts";
import { recomputeQuote } from "./aggregate.ts";
import { lockGroup, lockQuoteForEdit } from "./quote_locks.ts";
import { groupWithItems } from "./read_model.ts";
import { GROUP_ROWS, QUOTE_GROUPS } from "./sequences.ts";

/** The group as the caller sees it, and as a costs.read subscriber does (the event's payload). */
async function readGroup(
  tx: TransactionSql,
  quoteId: string,
  groupId: string,
  costs: boolean,
): Promise<{ group: QuoteGroup; payload: QuoteGroup }> {
  const payload = (await groupWithItems(tx, quoteId, groupId, true))!;
  const group = costs ? payload : (await groupWithItems(tx, quoteId, groupId, false))!;
  return { group, payload };
}

/** Adds a group to a draft quote of this organisation. */
export async function createGroup(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: CreateQuoteGroupBody,
  costs: boolean,
): Promise<QuoteGroup> {
  return await transaction(sql, async (tx) => {
    await lockQuoteForEdit(tx, organizationId, quoteId);
    const id = uuidv7();
    await tx`
      INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
      VALUES (${id}, ${organizationId}, ${quoteId}, ${input.name},
        ${QUOTE_GROUPS.numberForInsert(tx, quoteId, input.sortOrder)})`;
    await QUOTE_GROUPS.placeIfGiven(tx, quoteId, { id, kind: "group" }, input.sortOrder);
    await tx`UPDATE quotes SET updated_at = now() WHERE id = ${quoteId}`;
    const { group, payload } = await readGroup(tx, quoteId, id, costs);
    await writeEvent(tx, { organizationId, type: "quote_group.created", aggregateId: id, payload });
    return group;
  });
}

// Each field a PATCH may change is written to the column of its name.
const _columns: EveryFieldHasAColumn<UpdateQuoteGroupBody, GroupRow, "sortOrder"> = true;

export async function updateGroup(
  sql: Sql,
  organizationId: string,
  groupId: string,
  input: UpdateQuoteGroupBody,
  costs: boolean,
): Promise<QuoteGroup> {
  return await transaction(sql, async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    const changes = changedColumns(input, ["sortOrder"]);
    // A move alone changes the group too (its sortOrder): its updatedAt moves either way, and
    // so does its quote's, as with any change to what the quote shows.
    if (Object.keys(changes).length > 0) {
      await tx`UPDATE quote_groups SET ${tx(changes)}, updated_at = now() WHERE id = ${groupId}`;
    } else {
      await tx`UPDATE quote_groups SET updated_at = now() WHERE id = ${groupId}`;
    }
    await tx`UPDATE quotes SET updated_at = now() WHERE id = ${quote.id}`;
    if (input.sortOrder !== undefined) {
      await QUOTE_GROUPS.place(tx, quote.id, { id: groupId, kind: "group" }, input.sortOrder);
    }
    const { group, payload } = await readGroup(tx, quote.id, groupId, costs);
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.updated",
      aggregateId: groupId,
      payload,
    });
    return group;
  });
}

export async function deleteGroup(
  sql: Sql,
  organizationId: string,
  groupId: string,
): Promise<void> {
  await transaction(sql, async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    await tx`DELETE FROM quote_groups WHERE id = ${groupId}`;
    await QUOTE_GROUPS.compact(tx, quote.id);
    await recomputeQuote(tx, organizationId, quote);
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.deleted",
      aggregateId: groupId,
      payload: { id: groupId, quoteId: quote.id },
    });
  });
}

/**
 * Renumbers a group's lines and decorations 1..n in the order given. The list must name every
 * row of the group exactly once; anything else is a 400 listing each problem.
 */
export async function reorderGroup(
  sql: Sql,
  organizationId: string,
  groupId: string,
  input: ReorderBody,
  costs: boolean,
): Promise<QuoteGroup> {
  return await transaction(sql, async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    const result = renumber(await GROUP_ROWS.read(tx, groupId), input.items);
    if (!result.ok) {
      throw new ApiError(
        "validation_error",
        `Cannot reorder group "${groupId}": ${result.problems[0]!.message}`,
        result.problems.map((p) => ({
          path: `items.${input.items.findIndex((i) => i.id === p.item.id)}`.replace(
            "items.-1",
            "items",
          ),
          message: p.message,
        })),
      );
    }
    await GROUP_ROWS.write(tx, groupId, result.assignments);
    await tx`UPDATE quote_groups SET updated_at = now() WHERE id = ${groupId}`;
    // The quote shows its rows in their order: reordering them changes it.
    await tx`UPDATE quotes SET updated_at = now() WHERE id = ${quote.id}`;
    const { group, payload } = await readGroup(tx, quote.id, groupId, costs);
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.reordered",
      aggregateId: groupId,
      payload,
    });
    return group;
  });
}

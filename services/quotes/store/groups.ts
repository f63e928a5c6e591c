import type { Queryable, Sql } from "@printshop/shared/db";
import type {
  CreateQuoteGroupBody,
  QuoteGroup,
  ReorderBody,
  UpdateQuoteGroupBody,
} from "@printshop/shared/contracts";
import { ApiError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { renumber } from "../domain/reorder.ts";
import { lockQuoteForEdit, recomputeQuote } from "./aggregate.ts";
import { lockGroup } from "./lines.ts";
import { groupWithItems } from "./read_model.ts";
import { rowsOfGroup, writeOrder } from "./row_order.ts";

/**
 * Groups of a quote keep a 1..n order of their own; this writes it after a change. `groupId`
 * is the group being placed, or null to close the gap a deleted group left.
 */
async function placeGroup(
  tx: Queryable,
  quoteId: string,
  groupId: string | null,
  position: number | undefined,
): Promise<void> {
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM quote_groups
    WHERE quote_id = ${quoteId} ${groupId === null ? tx`` : tx`AND id <> ${groupId}`}
    ORDER BY sort_order, id`;
  const others = rows.map((r) => r.id);
  const index = position === undefined
    ? others.length
    : Math.min(Math.max(position, 1), others.length + 1) - 1;
  const ordered = groupId === null ? others : [
    ...others.slice(0, index),
    groupId,
    ...others.slice(index),
  ];
  if (ordered.length === 0) return;
  await tx`
    UPDATE quote_groups AS g SET sort_order = u.sort_order
    FROM unnest(${ordered}::uuid[], ${ordered.map((_, i) => i + 1)}::int[]) AS u(id, sort_order)
    WHERE g.id = u.id AND g.sort_order <> u.sort_order`;
}

/** Adds a group to a draft quote of this organisation. */
export async function createGroup(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: CreateQuoteGroupBody,
  costs: boolean,
): Promise<QuoteGroup> {
  return await sql.begin(async (tx) => {
    await lockQuoteForEdit(tx, organizationId, quoteId);
    const id = uuidv7();
    await tx`
      INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
      VALUES (${id}, ${organizationId}, ${quoteId}, ${input.name}, 100000)`;
    await placeGroup(tx, quoteId, id, input.sortOrder);
    await tx`UPDATE quotes SET updated_at = now() WHERE id = ${quoteId}`;
    const group = (await groupWithItems(tx, quoteId, id, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.created",
      aggregateId: id,
      payload: await groupWithItems(tx, quoteId, id, true),
    });
    return group;
  });
}

export async function updateGroup(
  sql: Sql,
  organizationId: string,
  groupId: string,
  input: UpdateQuoteGroupBody,
  costs: boolean,
): Promise<QuoteGroup> {
  return await sql.begin(async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    const changes: Record<string, unknown> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.rollUpDecoration !== undefined) changes.roll_up_decoration = input.rollUpDecoration;
    if (input.rollUpSetup !== undefined) changes.roll_up_setup = input.rollUpSetup;
    if (Object.keys(changes).length > 0) {
      await tx`UPDATE quote_groups SET ${tx(changes)}, updated_at = now() WHERE id = ${groupId}`;
    }
    if (input.sortOrder !== undefined) await placeGroup(tx, quote.id, groupId, input.sortOrder);
    const group = (await groupWithItems(tx, quote.id, groupId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.updated",
      aggregateId: groupId,
      payload: await groupWithItems(tx, quote.id, groupId, true),
    });
    return group;
  });
}

export async function deleteGroup(
  sql: Sql,
  organizationId: string,
  groupId: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    await tx`DELETE FROM quote_groups WHERE id = ${groupId}`;
    await placeGroup(tx, quote.id, null, undefined);
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
  return await sql.begin(async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    const result = renumber(await rowsOfGroup(tx, groupId), input.items);
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
    await writeOrder(tx, result.assignments);
    await tx`UPDATE quote_groups SET updated_at = now() WHERE id = ${groupId}`;
    const group = (await groupWithItems(tx, quote.id, groupId, costs))!;
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.reordered",
      aggregateId: groupId,
      payload: await groupWithItems(tx, quote.id, groupId, true),
    });
    return group;
  });
}

import type { Sql } from "@printshop/shared/db";
import type { CreateQuoteGroupBody, QuoteGroup } from "@printshop/shared/contracts";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { insertPosition } from "../domain/ordering.ts";
import { GROUP_COLUMNS, type GroupRow, toGroup } from "./rows.ts";

/**
 * Adds a group to a quote of this organisation; null when there is no such quote. The quote row
 * is locked so concurrent inserts into the same quote renumber one after the other.
 */
export async function createGroup(
  sql: Sql,
  organizationId: string,
  quoteId: string,
  input: CreateQuoteGroupBody,
): Promise<QuoteGroup | null> {
  return await sql.begin(async (tx) => {
    const [quote] = await tx`
      SELECT id FROM quotes WHERE organization_id = ${organizationId} AND id = ${quoteId}
      FOR UPDATE`;
    if (!quote) return null;
    const [counted] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM quote_groups WHERE quote_id = ${quoteId}`;
    const position = insertPosition(counted!.count, input.sortOrder);
    await tx`
      UPDATE quote_groups SET sort_order = sort_order + 1, updated_at = now()
      WHERE quote_id = ${quoteId} AND sort_order >= ${position}`;
    const [row] = await tx<GroupRow[]>`
      INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
      VALUES (${uuidv7()}, ${organizationId}, ${quoteId}, ${input.name}, ${position})
      RETURNING ${tx.unsafe(GROUP_COLUMNS)}`;
    await tx`UPDATE quotes SET updated_at = now() WHERE id = ${quoteId}`;
    const group = toGroup(row!);
    await writeEvent(tx, {
      organizationId,
      type: "quote_group.created",
      aggregateId: group.id,
      payload: group,
    });
    return group;
  });
}

import {
  behind,
  sendBeforeCommit,
  type Sql,
  transaction,
  type TransactionSql,
} from "@printshop/shared/db";
import {
  type CreateQuoteLineBody,
  isAdjustment,
  type QuoteLine,
  type UpdateQuoteLineBody,
} from "@printshop/shared/contracts/quotes";
import { assertNoProblem, conflict } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { changedColumns, type EveryFieldHasAColumn } from "@printshop/shared/db/fields";
import { lineShapeProblem } from "../domain/rows.ts";
import { addsNothing } from "../domain/pricing.ts";
import { newLine } from "../domain/new_rows.ts";
import { recomputeQuote } from "./aggregate.ts";
import { lockGroup, lockQuoteRow } from "./quote_locks.ts";
import { type LineRow, LINES, toLine, type VariantRow, VARIANTS } from "./item_rows.ts";
import { GROUP_ROWS } from "./sequences.ts";

/** A line (known to exist) with its variants, as the caller may see it, and whole for its event. */
async function readLine(
  sql: TransactionSql,
  organizationId: string,
  lineId: string,
  costs: boolean,
): Promise<{ shown: QuoteLine; payload: QuoteLine }> {
  const [line, variants] = await Promise.all([
    LINES.find(sql, organizationId, lineId),
    sql<VariantRow[]>`
      SELECT ${sql.unsafe(VARIANTS.select)} FROM quote_variants WHERE quote_line_id = ${lineId}
      ORDER BY sort_order, id`,
  ]);
  return {
    shown: toLine(line!, [...variants], costs),
    payload: toLine(line!, [...variants], true),
  };
}

export async function createLine(
  sql: Sql,
  organizationId: string,
  groupId: string,
  input: CreateQuoteLineBody,
  costs: boolean,
): Promise<QuoteLine> {
  return await transaction(sql, async (tx) => {
    const quote = await lockGroup(tx, organizationId, groupId);
    const { shape, pricing } = newLine(input);
    assertNoProblem(lineShapeProblem(shape));
    const id = uuidv7();
    const inserting = tx<LineRow[]>`
      INSERT INTO quote_lines (
        id, organization_id, quote_id, quote_group_id, line_type, garment_catalogue_item_id,
        product_name, product_sku, title, description, quantity, unit_price_ex_gst, value_type,
        percentage, discount_value_type, discount_percentage, custom_image_url, sort_order
      ) VALUES (
        ${id}, ${organizationId}, ${quote.id}, ${groupId}, ${input.lineType},
        ${input.garmentCatalogueItemId ?? null}, ${input.productName}, ${input.productSku ?? null},
        ${input.title ?? null}, ${input.description ?? null}, ${input.quantity ?? 0},
        ${input.unitPriceExGst ?? 0}, ${shape.valueType}, ${shape.percentage},
        ${shape.discountValueType}, ${shape.discountPercentage}, ${input.customImageUrl ?? null},
        ${GROUP_ROWS.numberForInsert(tx, groupId, input.sortOrder)}
      )
      RETURNING ${tx.unsafe(LINES.select)}`;
    let line: { shown: QuoteLine; payload: QuoteLine } | undefined;
    // The INSERT travels with what follows it (a placing, or the recomputation's reads); the
    // event goes with the recomputation's writes. A new line has no variants, so the
    // recomputation derives nothing of it: the row the INSERT returned is the line as written,
    // unless placing it moved its neighbours (then it is read again).
    const announce = async (): Promise<void> => {
      const row = input.sortOrder !== undefined
        ? await LINES.find(tx, organizationId, id)
        : (await inserting)[0];
      line = { shown: toLine(row!, [], costs), payload: toLine(row!, [], true) };
      await writeEvent(tx, {
        organizationId,
        type: "quote_line.created",
        aggregateId: id,
        payload: line.payload,
      });
    };
    // A line that adds nothing (the usual new line: its variants come next) moves no total and
    // no price, so the quote is only marked changed; any other is priced with the whole quote.
    const nothing = addsNothing(pricing);
    await behind(inserting, async () => {
      await GROUP_ROWS.placeIfGiven(tx, groupId, { id, kind: "line" }, input.sortOrder);
      if (nothing) {
        await Promise.all([
          sendBeforeCommit(tx, tx`UPDATE quotes SET updated_at = now() WHERE id = ${quote.id}`),
          announce(),
        ]);
      } else {
        await recomputeQuote(tx, organizationId, quote, {}, { alongside: announce });
      }
    });
    return line!.shown;
  });
}

// Each field a PATCH may change is written to the column of its name.
const _columns: EveryFieldHasAColumn<UpdateQuoteLineBody, LineRow, "sortOrder"> = true;

export async function updateLine(
  sql: Sql,
  organizationId: string,
  lineId: string,
  input: UpdateQuoteLineBody,
  costs: boolean,
): Promise<QuoteLine> {
  return await transaction(sql, async (tx) => {
    const { row: line, quote } = await lockQuoteRow(tx, organizationId, LINES, lineId);
    const [counted] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM quote_variants WHERE quote_line_id = ${lineId}`;
    const count = counted!.count;
    if (count > 0 && (input.quantity !== undefined || input.unitPriceExGst !== undefined)) {
      throw conflict(
        `Line "${lineId}" has variants: its quantity and unitPriceExGst are derived from them`,
      );
    }
    const next = {
      lineType: input.lineType ?? line.line_type,
      valueType: input.valueType !== undefined ? input.valueType : line.value_type,
      percentage: input.percentage !== undefined
        ? input.percentage
        : line.percentage === null
        ? null
        : Number(line.percentage),
      discountValueType: input.discountValueType !== undefined
        ? input.discountValueType
        : line.discount_value_type,
      discountPercentage: input.discountPercentage !== undefined
        ? input.discountPercentage
        : line.discount_percentage === null
        ? null
        : Number(line.discount_percentage),
    };
    if (isAdjustment(next.lineType) && next.valueType === null) next.valueType = "Flat";
    if (isAdjustment(next.lineType) && count > 0) {
      throw conflict(`Line "${lineId}" has variants; it cannot become ${next.lineType}`);
    }
    assertNoProblem(lineShapeProblem(next));
    const changes = changedColumns(input, ["sortOrder"]);
    if (next.valueType !== line.value_type) changes.value_type = next.valueType;
    // A move alone changes the line too (its sortOrder): its updatedAt moves either way.
    if (Object.keys(changes).length > 0) {
      await tx`UPDATE quote_lines SET ${tx(changes)}, updated_at = now() WHERE id = ${lineId}`;
    } else {
      await tx`UPDATE quote_lines SET updated_at = now() WHERE id = ${lineId}`;
    }
    if (input.sortOrder !== undefined) {
      await GROUP_ROWS.place(
        tx,
        line.quote_group_id,
        { id: lineId, kind: "line" },
        input.sortOrder,
      );
    }
    await recomputeQuote(tx, organizationId, quote);
    const updated = await readLine(tx, organizationId, lineId, costs);
    await writeEvent(tx, {
      organizationId,
      type: "quote_line.updated",
      aggregateId: lineId,
      payload: updated.payload,
    });
    return updated.shown;
  });
}

export async function deleteLine(sql: Sql, organizationId: string, lineId: string): Promise<void> {
  await transaction(sql, async (tx) => {
    const { row: line, quote } = await lockQuoteRow(tx, organizationId, LINES, lineId);
    // The DELETE and the compaction go in one round trip, the event with the recomputation's
    // writes.
    await behind(
      tx`DELETE FROM quote_lines WHERE id = ${lineId}`,
      () => GROUP_ROWS.compact(tx, line.quote_group_id),
    );
    await recomputeQuote(tx, organizationId, quote, {}, {
      alongside: () =>
        writeEvent(tx, {
          organizationId,
          type: "quote_line.deleted",
          aggregateId: lineId,
          payload: { id: lineId, quoteGroupId: line.quote_group_id },
        }),
    });
  });
}

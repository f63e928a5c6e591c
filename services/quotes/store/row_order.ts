import type { Queryable } from "@printshop/shared/db";
import type { RowKind, RowRef } from "../domain/reorder.ts";

/**
 * The shared sortOrder sequence of a group's lines and decorations. Changes are made by
 * computing the new order in memory and writing 1..n back, so the sequence never has a gap or a
 * duplicate, whatever happened before.
 */
export async function rowsOfGroup(sql: Queryable, groupId: string): Promise<RowRef[]> {
  const rows = await sql<{ id: string; kind: RowKind }[]>`
    SELECT id, kind FROM (
      SELECT id, 'line' AS kind, sort_order FROM quote_lines WHERE quote_group_id = ${groupId}
      UNION ALL
      SELECT id, 'decoration' AS kind, sort_order FROM quote_decorations
      WHERE quote_group_id = ${groupId}
    ) rows ORDER BY sort_order, kind DESC, id`;
  return rows.map((r) => ({ id: r.id, kind: r.kind }));
}

/** Writes sortOrder 1..n in the given order to both tables. */
export async function writeOrder(sql: Queryable, ordered: readonly RowRef[]): Promise<void> {
  const lines = ordered.flatMap((r, i) => (r.kind === "line" ? [[r.id, i + 1] as const] : []));
  const decorations = ordered.flatMap((r, i) =>
    r.kind === "decoration" ? [[r.id, i + 1] as const] : []
  );
  await Promise.all([
    lines.length === 0 ? Promise.resolve() : sql`
      UPDATE quote_lines AS l SET sort_order = u.sort_order
      FROM unnest(${lines.map((l) => l[0])}::uuid[], ${lines.map((l) => l[1])}::int[])
        AS u(id, sort_order)
      WHERE l.id = u.id AND l.sort_order <> u.sort_order`,
    decorations.length === 0 ? Promise.resolve() : sql`
      UPDATE quote_decorations AS d SET sort_order = u.sort_order
      FROM unnest(${decorations.map((d) => d[0])}::uuid[], ${decorations.map((d) => d[1])}::int[])
        AS u(id, sort_order)
      WHERE d.id = u.id AND d.sort_order <> u.sort_order`,
  ]);
}

/**
 * Puts `row` (already inserted, or being moved) at `position` (1-based, clamped; appended when
 * undefined) and renumbers the group.
 */
export async function placeRow(
  sql: Queryable,
  groupId: string,
  row: RowRef,
  position: number | undefined,
): Promise<void> {
  const others = (await rowsOfGroup(sql, groupId)).filter((r) =>
    !(r.id === row.id && r.kind === row.kind)
  );
  const index = position === undefined
    ? others.length
    : Math.min(Math.max(position, 1), others.length + 1) - 1;
  await writeOrder(sql, [...others.slice(0, index), row, ...others.slice(index)]);
}

/** Closes the gap a deleted row left. */
export async function compactGroup(sql: Queryable, groupId: string): Promise<void> {
  await writeOrder(sql, await rowsOfGroup(sql, groupId));
}

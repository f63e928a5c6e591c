/**
 * A group's lines and decorations share ONE `sortOrder` sequence 1..n (spec 2.3; docs "Quote
 * pricing rules", Row order). Rows are identified by kind and id together.
 */
import type { RowRef as Row } from "@printshop/shared/ordering";
import type { ROW_KINDS } from "@printshop/shared/contracts/quotes";

export type RowKind = typeof ROW_KINDS[number];
export type RowRef = Row<RowKind>;

export interface SortAssignment extends RowRef {
  sortOrder: number;
}

/** Why a reorder request is refused (a 400); each names the offending item. */
export type RenumberProblem =
  | { code: "duplicate"; item: RowRef; message: string }
  | { code: "unknown"; item: RowRef; message: string }
  | { code: "missing"; item: RowRef; message: string };

export type RenumberResult =
  | { ok: true; assignments: SortAssignment[] }
  | { ok: false; problems: RenumberProblem[] };

function keyOf(item: RowRef): string {
  return `${item.kind}:${item.id}`;
}

function describe(item: RowRef): string {
  return `${item.kind} ${item.id}`;
}

/**
 * Renumbers the group's rows 1..n in the requested order. `requested` must list every row of
 * `rows` exactly once; otherwise the result is a refusal listing every item listed twice
 * (once per item), every unknown item and every missing item, in that order.
 */
export function renumber(
  rows: readonly RowRef[],
  requested: readonly RowRef[],
): RenumberResult {
  const known = new Set(rows.map(keyOf));
  const listed = new Set<string>();
  const reported = new Set<string>();
  const problems: RenumberProblem[] = [];
  const unknown: RenumberProblem[] = [];

  for (const item of requested) {
    const key = keyOf(item);
    const ref = { id: item.id, kind: item.kind };
    if (listed.has(key)) {
      if (!reported.has(key)) {
        reported.add(key);
        problems.push({
          code: "duplicate",
          item: ref,
          message: `${describe(ref)} is listed twice`,
        });
      }
      continue;
    }
    listed.add(key);
    if (!known.has(key)) {
      unknown.push({
        code: "unknown",
        item: ref,
        message: `${describe(ref)} is not in this group`,
      });
    }
  }
  problems.push(...unknown);

  const missing = new Set<string>();
  for (const row of rows) {
    const key = keyOf(row);
    if (listed.has(key) || missing.has(key)) continue;
    missing.add(key);
    const ref = { id: row.id, kind: row.kind };
    problems.push({ code: "missing", item: ref, message: `${describe(ref)} is not listed` });
  }

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    assignments: requested.map((item, i) => ({ id: item.id, kind: item.kind, sortOrder: i + 1 })),
  };
}

/**
 * A group's lines and decorations share ONE `sortOrder` sequence 1..n (spec 2.3; docs "Quote
 * pricing rules", Row order). Rows are identified by kind and id together.
 */
import { insertPosition } from "./ordering.ts";

export type RowKind = "line" | "decoration";

export interface RowRef {
  id: string;
  kind: RowKind;
}

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

export interface Insertion {
  /** The new row's sortOrder. */
  sortOrder: number;
  /**
   * Existing rows that move: every sortOrder at or after the insertion point, shifted by one,
   * highest first (so applying them in order never collides on a unique sortOrder).
   */
  shifts: { from: number; to: number }[];
}

/**
 * Where a new row goes among `existing` sortOrders (lines and decorations together): appended
 * (max + 1) when no position is asked for, otherwise at the asked position — clamped to 1..max+1
 * as `insertPosition` does — with the rows at or after it shifted by one.
 */
export function insertAt(existing: readonly number[], requested?: number): Insertion {
  const max = existing.reduce((a, b) => Math.max(a, b), 0);
  const sortOrder = insertPosition(max, requested);
  const shifts = existing
    .filter((order) => order >= sortOrder)
    .sort((a, b) => b - a)
    .map((order) => ({ from: order, to: order + 1 }));
  return { sortOrder, shifts };
}

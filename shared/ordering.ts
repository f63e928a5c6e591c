/**
 * A 1..n order that rows share (a group's lines and decorations, a quote's groups, a line's
 * variants, a task's checklist): pure rules, no I/O. A row is known by its kind and id together.
 */

export interface RowRef<K extends string = string> {
  id: string;
  kind: K;
}

const sameRow = (a: RowRef, b: RowRef): boolean => a.id === b.id && a.kind === b.kind;

/**
 * The sequence with `row` at `position` (1-based, clamped to 1..n; appended when no position is
 * asked for). `row` is taken out of wherever it was first, so this both inserts and moves.
 */
export function placeAt<R extends RowRef>(
  sequence: readonly R[],
  row: R,
  position: number | undefined,
): R[] {
  const others = sequence.filter((r) => !sameRow(r, row));
  const index = position === undefined
    ? others.length
    : Math.min(Math.max(position, 1), others.length + 1) - 1;
  return [...others.slice(0, index), row, ...others.slice(index)];
}

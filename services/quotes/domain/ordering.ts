/**
 * Where a new row goes in a 1..n sequence: appended when no position is asked for, otherwise at
 * the asked position, clamped so the sequence never gets a gap.
 */
export function insertPosition(existingCount: number, requested: number | undefined): number {
  const end = existingCount + 1;
  if (requested === undefined) return end;
  return Math.min(Math.max(requested, 1), end);
}

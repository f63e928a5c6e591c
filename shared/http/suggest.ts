import type { z } from "zod";
import { defOf, schemaAt, unwrap } from "./schema_at.ts";

/**
 * Edit distance between two words, case-insensitive: insertions, deletions, substitutions and
 * swaps of neighbouring letters ("nmae" is one edit from "name").
 */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d = Array.from(
    { length: x.length + 1 },
    (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
      }
    }
  }
  return d[x.length]![y.length]!;
}

/**
 * The known name a mistyped one most likely meant: the closest by edit distance, when it is
 * within a third of the name's length (at least one edit), else null.
 */
export function closestName(given: string, known: readonly string[]): string | null {
  if (given.length > 64) return null;
  const limit = Math.max(1, Math.floor(given.length / 3));
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const d = distance(given, name);
    if (d <= limit && (best === null || d < best.distance)) best = { name, distance: d };
  }
  return best?.name ?? null;
}

/** The field names the object schema at `path` within `schema` takes, when there is one there. */
export function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const def = defOf(unwrap(schemaAt(schema, path)).schema);
  return def?.type === "object" ? Object.keys(def.shape as Record<string, unknown>) : [];
}

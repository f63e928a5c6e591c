import type { z } from "zod";

/** A zod schema's definition, read structurally: zod 4 keeps it at `_zod.def`. */
export type Def = { type: string } & Record<string, unknown>;

export const defOf = (schema: unknown): Def | null =>
  (schema as { _zod?: { def?: Def } } | null)?._zod?.def ?? null;

const WRAPPERS = ["optional", "nullable", "default", "prefault", "readonly", "catch"];

/**
 * The schema wrapped by optional, nullable, default, pipe and the like (itself otherwise), and
 * whether one of the wrappers lets null through.
 */
export function unwrap(schema: unknown): { schema: unknown; nullable: boolean } {
  let nullable = false;
  for (let depth = 0; depth < 20; depth++) {
    const def = defOf(schema);
    if (def === null) break;
    if (WRAPPERS.includes(def.type)) {
      nullable ||= def.type === "nullable";
      schema = def.innerType;
    } else if (def.type === "pipe") {
      schema = def.in;
    } else {
      break;
    }
  }
  return { schema, nullable };
}

/**
 * The schema that checks the value at `path` within `schema`, through objects, arrays and
 * records, still wrapped; null where no single schema says (a union, an unknown field).
 */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): unknown {
  let at: unknown = schema;
  for (const segment of path) {
    const def = defOf(unwrap(at).schema);
    if (def?.type === "object") {
      const shape = def.shape as Record<string, unknown>;
      // hasOwn: a field named "constructor" must not find Object's.
      at = Object.hasOwn(shape, String(segment)) ? shape[String(segment)] : null;
    } else if (def?.type === "array") {
      at = def.element;
    } else if (def?.type === "record") {
      at = def.valueType;
    } else {
      return null;
    }
  }
  return at;
}

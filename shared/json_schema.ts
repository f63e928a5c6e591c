import { z } from "zod";

/** A JSON Schema object as emitted into an OpenAPI or AsyncAPI document. */
export type JsonSchema = { [keyword: string]: unknown };

/** Where both documents keep shared schemas. */
export const SCHEMA_REF = "#/components/schemas/";

export interface Emitted {
  /** JSON Schema of each root, in the order added; refs point into `components/schemas`. */
  roots: JsonSchema[];
  /** Every schema with a `.meta({ id })` reachable from the roots, by id. */
  components: Record<string, JsonSchema>;
}

export interface SchemaSetOptions {
  io: "input" | "output";
  /** JSON Schema dialect: OpenAPI 3.1 uses 2020-12 (zod's default), AsyncAPI draft-07. */
  target?: "draft-07";
  /** Names the document in errors. */
  document: "OpenAPI" | "AsyncAPI";
}

/**
 * Roots converted together through one zod registry, so a schema with an id is emitted once as a
 * component and referenced everywhere else. The OpenAPI and AsyncAPI documents both use it.
 */
export class SchemaSet {
  readonly #roots: z.ZodType[] = [];
  constructor(readonly options: SchemaSetOptions) {}

  /** Returns the root's index into `Emitted.roots`. */
  add(schema: z.ZodType): number {
    return this.#roots.push(schema) - 1;
  }

  /** `rename` gives a component a different name than its id, or null to keep it. */
  emit(rename: (id: string) => string | null = () => null): Emitted {
    const { io, target, document } = this.options;
    const registry = z.registry<{ id: string }>();
    for (const [id, schema] of this.#discoverIds()) registry.add(schema, { id });
    // Each root is wrapped in a fresh object that nothing else contains, so a root without an
    // id is never turned into a reference, even if it also appears inside another root.
    const wrapperIds = this.#roots.map((schema, i) => {
      const id = `__root${i}`;
      registry.add(z.object({ root: schema }), { id });
      return id;
    });
    const { schemas } = z.toJSONSchema(registry, {
      io,
      ...(target ? { target } : {}),
      uri: (id) => `${SCHEMA_REF}${rename(id) ?? id}`,
    });
    if ("__shared" in schemas) {
      // zod puts an id-less schema it must reference (a recursive one) in a shared file that has
      // no place in either document.
      const shared = schemas.__shared["$defs"] ?? schemas.__shared["definitions"];
      throw new Error(
        `${document}: give these schemas an id with .meta({ id }): ${
          Object.keys(asRecord(shared)).join(", ")
        }`,
      );
    }
    const roots = wrapperIds.map((id) => asRecord(asRecord(schemas[id]?.properties).root));
    const components: Record<string, JsonSchema> = {};
    for (const [id, schema] of Object.entries(schemas)) {
      if (wrapperIds.includes(id)) continue;
      const { $schema: _dialect, $id: _id, ...rest } = schema;
      components[id] = rest;
    }
    return { roots, components };
  }

  /** Schemas reachable from the roots that carry an id in zod's global registry. */
  #discoverIds(): Map<string, z.core.$ZodType> {
    const { io, target, document } = this.options;
    const found = new Map<string, z.core.$ZodType>();
    for (const root of this.#roots) {
      z.toJSONSchema(root, {
        io,
        ...(target ? { target } : {}),
        override: ({ zodSchema }) => {
          const id = z.globalRegistry.get(zodSchema)?.id;
          if (typeof id !== "string") return;
          const known = found.get(id);
          if (known !== undefined && known !== zodSchema) {
            throw new Error(`${document}: two different schemas share the id "${id}"`);
          }
          found.set(id, zodSchema);
        },
      });
    }
    return found;
  }
}

/** The value as a schema object, or an empty one when it is not an object. */
export function asRecord(value: unknown): JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as JsonSchema
    : {};
}

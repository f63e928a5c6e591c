/**
 * Validating values against the published document's schemas, as a client's validator would,
 * only stricter: every object schema that lists its properties refuses others, so a misspelt
 * field in an example or a payload fails.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenApiDocument } from "../openapi.ts";

/** Where the components live for the validator; refs into the document are rewritten to it. */
export const SCHEMAS_BASE = "https://printshop.invalid/openapi.json";

/** A copy whose refs point at the registered components and whose objects refuse other fields. */
export function closedSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closedSchema);
  if (typeof node !== "object" || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      copy.$ref = value.replace("#/components/schemas/", `${SCHEMAS_BASE}#/$defs/`);
    } else if (key === "examples" || key === "example") {
      copy[key] = value; // data, not schema: left as written
    } else {
      copy[key] = closedSchema(value);
    }
  }
  // Objects only: a rule's fragment (`if`, `then`, a branch of `anyOf`) that names properties
  // constrains those and leaves the rest to the object it applies to.
  if (
    copy.type === "object" && typeof copy.properties === "object" &&
    copy.additionalProperties === undefined
  ) {
    copy.additionalProperties = false;
  }
  return copy;
}

/** An ajv 2020-12 validator holding the document's components (closed) under SCHEMAS_BASE. */
export function documentValidator(document: OpenApiDocument): Ajv2020 {
  return validatorOf(closedSchema(document.components.schemas) as object);
}

/** The same over components given as they are (a test's own). */
export function validatorOf(components: object): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  // ajv-formats is CommonJS: its function is the module's `default`.
  addFormats.default(ajv);
  ajv.addSchema({ $id: SCHEMAS_BASE, $defs: components });
  return ajv;
}

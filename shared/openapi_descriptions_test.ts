/**
 * The document's words: every operation says who may call it, and every field, parameter,
 * schema, response and tag has a one-line description, all derived from the declarations.
 */
import assert from "node:assert/strict";
import { COSTS_READ_FIELDS } from "./costs.ts";
import {
  buildOpenApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiParameter,
  type OpenApiReference,
} from "./openapi.ts";

const doc: OpenApiDocument = JSON.parse(JSON.stringify(buildOpenApiDocument()));
const SCHEMA_REF = "#/components/schemas/";
const NESTED = ["items", "prefixItems", "anyOf", "oneOf", "allOf", "additionalProperties"];

function isOneLine(text: unknown): boolean {
  return typeof text === "string" && text.trim().length > 0 && !text.includes("\n");
}

/** A property is described by itself, or by the component it only refers to. */
function describedProperty(document: OpenApiDocument, property: JsonSchema): boolean {
  if (isOneLine(property.description)) return true;
  const ref = property.$ref;
  return typeof ref === "string" &&
    isOneLine(document.components.schemas[ref.slice(SCHEMA_REF.length)]?.description);
}

/** The path of every property under `schema`, at any depth, that has no description. */
function undescribedIn(
  document: OpenApiDocument,
  schema: JsonSchema,
  where: string,
  found: string[],
): void {
  for (const [name, value] of Object.entries(schema.properties ?? {})) {
    const property = value as JsonSchema;
    if (!describedProperty(document, property)) found.push(`${where}.${name}`);
    undescribedIn(document, property, `${where}.${name}`, found);
  }
  for (const keyword of NESTED) {
    const value = schema[keyword];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === "object" && item !== null) {
        undescribedIn(document, item as JsonSchema, `${where}/${keyword}`, found);
      }
    }
  }
}

/** Every property of the document, in components and in operations, without a description. */
function undescribed(document: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    undescribedIn(document, schema, name, found);
  }
  for (const [where, schema] of operationSchemas(document)) {
    undescribedIn(document, schema, where, found);
  }
  return found;
}

/** Every schema an operation shows: its parameters', its body's and its answers'. */
function operationSchemas(document: OpenApiDocument): [string, JsonSchema][] {
  const schemas: [string, JsonSchema][] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        schemas.push([`${at} body`, media.schema]);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values(("content" in response && response.content) || {})) {
          schemas.push([`${at} ${status}`, media.schema]);
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (!("$ref" in parameter)) schemas.push([`${at} ${parameter.name}`, parameter.schema]);
      }
    }
  }
  return schemas;
}

Deno.test("every property in the document has a one-line description", () => {
  const missing = undescribed(doc);
  assert.deepEqual(missing, [], `no description:\n${missing.join("\n")}`);
});

Deno.test("the description check above finds a field without one, however deep", () => {
  const broken = structuredClone(doc);
  const colours = broken.components.schemas.QuoteGroupDecoration!.properties as Record<
    string,
    JsonSchema
  >;
  const colour = (colours.colours!.items as JsonSchema).properties as Record<string, JsonSchema>;
  delete colour.name!.description;
  assert.deepEqual(undescribed(broken), ["QuoteGroupDecoration.colours/items.name"]);
});

Deno.test("every schema component, parameter, response and tag has a one-line description", () => {
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    assert.ok(isOneLine(schema.description), `schema ${name}`);
  }
  for (const [name, response] of Object.entries(doc.components.responses)) {
    assert.ok(isOneLine(response.description), `response ${name}`);
  }
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const reference of operation.parameters ?? []) {
        const parameter = "$ref" in reference
          ? doc.components.parameters[(reference as OpenApiReference).$ref.split("/").pop()!]!
          : reference as OpenApiParameter;
        assert.ok(isOneLine(parameter.description), `${method} ${path} ${parameter.name}`);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!("$ref" in response)) {
          assert.ok(isOneLine(response.description), `${method} ${path} ${status}`);
        }
      }
    }
  }
  for (const tag of doc.tags) assert.ok(isOneLine(tag.description), `tag ${tag.name}`);
});

Deno.test("every operation has an operationId, a summary and its scope in words", () => {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method} ${path}`;
      assert.match(operation.operationId, /^[a-z][A-Za-z]+$/, at);
      assert.ok(isOneLine(operation.summary), at);
      const scope = operation["x-required-scope"];
      if (scope === undefined) {
        assert.match(operation.description, /no scope is needed/, at);
      } else {
        assert.ok(operation.description.startsWith(`Requires scope \`${scope}\`.`), at);
      }
    }
  }
});

Deno.test("every cost or margin field says it needs costs.read, and so do its operations", () => {
  const restricted = new Set<string>(COSTS_READ_FIELDS);
  let seen = 0;
  const visit = (schema: JsonSchema, where: string): void => {
    for (const [name, value] of Object.entries(schema.properties ?? {})) {
      const property = value as JsonSchema;
      if (restricted.has(name)) {
        seen++;
        assert.match(String(property.description), /needs scope `costs\.read`/, where + name);
      } else {
        visit(property, `${where}.${name}`);
      }
    }
    for (const keyword of NESTED) {
      const value = schema[keyword];
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === "object" && item !== null) visit(item as JsonSchema, where);
      }
    }
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) visit(schema, name);
  assert.ok(seen >= COSTS_READ_FIELDS.length, `only ${seen} cost or margin fields found`);
  const variant = doc.paths["/v1/quote-variants/{variantId}"]!.patch!;
  assert.match(variant.description, /`buyPrice`.*only with `costs\.read`/);
  assert.doesNotMatch(doc.paths["/v1/me"]!.get!.description, /costs\.read/);
});

/**
 * Every list says how it pages, in one machine-readable shape (`x-pagination`), and that shape is
 * true of the document: the parameters it names are the operation's, and its answer holds the rows
 * and the total or next cursor where it says. A list without it, or one whose answer moved, fails.
 */
import assert from "node:assert/strict";
import {
  buildOpenApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiMethod,
  type OpenApiParameter,
  type OpenApiReference,
  type OpenApiResponse,
} from "./openapi.ts";

const doc: OpenApiDocument = JSON.parse(JSON.stringify(buildOpenApiDocument()));

function deref<T>(value: T | OpenApiReference): T {
  if (typeof value !== "object" || value === null || !("$ref" in value)) return value as T;
  const [, , kind, name] = value.$ref.split("/");
  const target = (doc.components as unknown as Record<string, Record<string, unknown>>)[kind!]?.[
    name!
  ];
  assert.ok(target, `dangling ${value.$ref}`);
  return deref(target as T | OpenApiReference);
}

/** The schema at a dotted path of a success answer (`data.items`), or undefined. */
function schemaAt(schema: JsonSchema, path: string): JsonSchema | undefined {
  let current: JsonSchema | undefined = schema;
  for (const key of path.split(".")) {
    current = current && deref(current as JsonSchema | OpenApiReference);
    current = (current?.properties as Record<string, JsonSchema> | undefined)?.[key];
  }
  return current && deref(current as JsonSchema | OpenApiReference);
}

Deno.test("every list declares how it pages, and the document bears it out", () => {
  let lists = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation) continue;
      const where = `${method.toUpperCase() as Uppercase<OpenApiMethod>} ${path}`;
      const ok = deref(operation.responses["200"] as OpenApiResponse | OpenApiReference);
      const answer = ok?.content?.["application/json"]?.schema as JsonSchema | undefined;
      // A page: rows, and the count of every match or where the next page starts (a proof's
      // own `items` are no page).
      const isPage = answer !== undefined && schemaAt(answer, "data.items")?.type === "array" &&
        ["data.totalCount", "data.nextCursor", "data.hasMore"].some((at) =>
          schemaAt(answer, at) !== undefined
        );
      const pagination = operation["x-pagination"];
      if (!isPage) {
        assert.equal(pagination, undefined, `${where} pages nothing`);
        continue;
      }
      assert.ok(pagination, `${where} answers a list without x-pagination`);
      lists++;
      const names = (operation.parameters ?? []).map((p) =>
        deref(p as OpenApiParameter | OpenApiReference).name
      );
      const moving = pagination.style === "offset"
        ? pagination.offsetParameter
        : pagination.cursorParameter;
      for (const parameter of [pagination.limitParameter, moving]) {
        assert.ok(names.includes(parameter), `${where} has no ${parameter} parameter`);
      }
      const after = pagination.style === "offset"
        ? [pagination.total]
        : [pagination.next, ...(pagination.hasMore ? [pagination.hasMore] : [])];
      for (const at of after) {
        assert.ok(schemaAt(answer!, at), `${where}: its answer has no ${at}`);
      }
    }
  }
  // Every list of the route table today (13 offset or cursor lists and the event log).
  assert.ok(lists >= 14, `only ${lists} lists found`);
});

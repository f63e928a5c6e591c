/**
 * The document's examples: every operation shows a request and an answer, and every example
 * (of a schema, a body, an answer or a parameter) is valid against its own JSON Schema in the
 * document, with no field the schema does not declare.
 */
import assert from "node:assert/strict";
import { closedSchema, documentValidator, SCHEMAS_BASE } from "./testing/document_validator.ts";
import { QUOTE_EXAMPLE } from "./contracts/quotes/mod.ts";
import {
  buildOpenApiDocument,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiMediaType,
  type OpenApiMethod,
  type OpenApiParameter,
  type OpenApiReference,
  type OpenApiResponse,
} from "./openapi.ts";
import { ROUTES } from "./routes.ts";

// The JSON text clients receive, not the in-memory object.
const doc: OpenApiDocument = JSON.parse(JSON.stringify(buildOpenApiDocument()));

const SCHEMA_KEYWORDS = ["items", "prefixItems", "anyOf", "oneOf", "allOf", "not"] as const;

interface Sample {
  where: string;
  schema: JsonSchema;
  value: unknown;
}

/** Every schema node under `schema`, itself first, with its JSON pointer. */
function* schemaNodes(schema: JsonSchema, where: string): Generator<[JsonSchema, string]> {
  yield [schema, where];
  for (const [name, value] of Object.entries(schema.properties ?? {})) {
    yield* schemaNodes(value as JsonSchema, `${where}/properties/${name}`);
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    const value = schema[keyword];
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        yield* schemaNodes(item as JsonSchema, `${where}/${keyword}/${i}`);
      }
    } else if (typeof value === "object" && value !== null) {
      yield* schemaNodes(value as JsonSchema, `${where}/${keyword}`);
    }
  }
  if (typeof schema.additionalProperties === "object") {
    yield* schemaNodes(schema.additionalProperties as JsonSchema, `${where}/additionalProperties`);
  }
}

function deref<T>(document: OpenApiDocument, value: T | OpenApiReference): T {
  if (typeof value !== "object" || value === null || !("$ref" in value)) return value;
  const [, , kind, name] = value.$ref.split("/");
  const components = document.components as unknown as Record<string, Record<string, T>>;
  const target = components[kind!]?.[name!];
  assert.ok(target, `dangling ${value.$ref}`);
  return target;
}

/** Every example in the document, each with the schema it illustrates. */
function samplesOf(document: OpenApiDocument): Sample[] {
  const samples: Sample[] = [];
  const fromSchema = (schema: JsonSchema, where: string): void => {
    for (const [node, at] of schemaNodes(schema, where)) {
      for (const [i, value] of ((node.examples as unknown[] | undefined) ?? []).entries()) {
        samples.push({ where: `${at}/examples/${i}`, schema: node, value });
      }
    }
  };
  const fromMedia = (media: OpenApiMediaType, where: string): void => {
    fromSchema(media.schema, `${where}/schema`);
    if (media.example !== undefined) {
      samples.push({ where: `${where}/example`, schema: media.schema, value: media.example });
    }
  };
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    fromSchema(schema, `#/components/schemas/${name}`);
  }
  for (const [name, response] of Object.entries(document.components.responses)) {
    for (const [type, media] of Object.entries(response.content ?? {})) {
      fromMedia(media, `#/components/responses/${name}/content/${type}`);
    }
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `#/paths/${path.replaceAll("/", "~1")}/${method}`;
      for (const [i, reference] of (operation.parameters ?? []).entries()) {
        const parameter = deref<OpenApiParameter>(document, reference);
        fromSchema(parameter.schema, `${at}/parameters/${i}/schema`);
        if (parameter.example !== undefined) {
          samples.push({
            where: `${at}/parameters/${i}/example`,
            schema: parameter.schema,
            value: parameter.example,
          });
        }
      }
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        fromMedia(media, `${at}/requestBody/content/${type}`);
      }
      for (const [status, reference] of Object.entries(operation.responses)) {
        if ("$ref" in reference) continue; // a component, checked above
        for (const [type, media] of Object.entries(reference.content ?? {})) {
          fromMedia(media, `${at}/responses/${status}/content/${type}`);
        }
      }
    }
  }
  return samples;
}

/** Each example that does not match its schema, with why. */
function invalidSamples(document: OpenApiDocument): string[] {
  const ajv = documentValidator(document);
  return samplesOf(document).flatMap(({ where, schema, value }) => {
    const validate = ajv.compile(closedSchema(schema) as object);
    if (validate(value)) return [];
    return [`${where}: ${ajv.errorsText(validate.errors, { separator: "; " })}`];
  });
}

Deno.test("every example in the document matches its own schema, with no undeclared field", () => {
  const samples = samplesOf(doc);
  assert.ok(samples.length > 100, `only ${samples.length} examples found`);
  const invalid = invalidSamples(doc);
  assert.deepEqual(invalid, [], `\n${invalid.join("\n")}`);
});

Deno.test("the example check above refuses a misspelt field and a value out of range", () => {
  const broken = structuredClone(doc);
  const variant = broken.components.schemas.QuoteVariant!;
  variant.examples = [{ ...(variant.examples as object[])[0], colr: "Black" }];
  const body = broken.paths["/v1/quote-lines/{lineId}/variants"]!.post!.requestBody!;
  body.content["application/json"]!.example = { quantity: -1 };
  const invalid = invalidSamples(broken);
  assert.ok(invalid.some((p) => p.includes("QuoteVariant/examples/0")), invalid.join("\n"));
  assert.ok(invalid.some((p) => p.includes("requestBody")), invalid.join("\n"));
});

Deno.test("every operation shows an example request and answer", () => {
  for (const route of ROUTES) {
    const operation = doc.paths[route.path]![route.method.toLowerCase() as OpenApiMethod]!;
    const name = route.operationId;
    if (route.body) {
      assert.notEqual(operation.requestBody?.content["application/json"]?.example, undefined, name);
    }
    for (const status of Object.keys(route.responses)) {
      const response = operation.responses[status] as OpenApiResponse;
      if (status === "204") continue;
      const example = response.content?.["application/json"]?.example;
      assert.notEqual(example, undefined, `${name} ${status}`);
    }
    const query = (operation.parameters ?? []).map((p) => deref<OpenApiParameter>(doc, p))
      .filter((p) => p.in === "query");
    if (route.query) assert.ok(query.some((p) => p.example !== undefined), `${name}: a query`);
    for (const key of Object.keys(route.examples?.query ?? {})) {
      assert.ok(query.some((p) => p.name === key), `${name}: example of undeclared "${key}"`);
    }
  }
  for (const [name, response] of Object.entries(doc.components.responses)) {
    assert.notEqual(response.content?.["application/json"]?.example, undefined, name);
  }
});

Deno.test("the error examples use the codes of their own status", () => {
  for (const [name, response] of Object.entries(doc.components.responses)) {
    const example = response.content?.["application/json"]?.example as { error: string };
    assert.ok(response.description.includes(`\`${example.error}\``), `${name}: ${example.error}`);
  }
});

Deno.test("the Riverside Bakery quote example adds up as the pricing rules say", () => {
  const round = (value: number, decimals: number): number => Number(value.toFixed(decimals));
  const markedUp = (cost: number, type: string | null | undefined, value: number): number =>
    round(type === "percentage" ? cost + cost * value / 100 : cost + value, 4);
  let subtotal = 0;
  for (const group of QUOTE_EXAMPLE.groups) {
    let groupTotal = 0;
    let garments = 0;
    for (const line of group.lines) {
      let quantity = 0;
      let lineTotal = 0;
      for (const v of line.variants) {
        const cost = (v.buyPrice ?? 0) + (v.extraCost ?? 0);
        assert.equal(v.unitPriceExGst, markedUp(cost, v.markupType, v.markupValue ?? 0), v.id);
        if (!v.isCustomLine) quantity += v.quantity;
        lineTotal += v.quantity * v.unitPriceExGst;
      }
      assert.equal(line.quantity, quantity, "a line's quantity is its variants'");
      assert.equal(line.unitPriceExGst, round(lineTotal / quantity, 4));
      if (line.lineType === "Garment") garments += quantity;
      groupTotal += lineTotal;
    }
    for (const d of group.decorations) {
      assert.equal(d.baseUnitCost, markedUp(d.unitCost ?? 0, d.markupType, d.markupValue ?? 0));
      assert.equal(
        d.baseSetupCost,
        markedUp(d.setupCost ?? 0, d.setupMarkupType, d.setupMarkupValue ?? 0),
      );
      groupTotal += d.quantity * d.baseUnitCost + (d.includeSetupCost ? d.baseSetupCost : 0);
    }
    assert.equal(group.totalQuantity, garments);
    subtotal += groupTotal;
  }
  assert.equal(QUOTE_EXAMPLE.subtotalExGst, round(subtotal, 2));
  const gst = round(QUOTE_EXAMPLE.subtotalExGst * QUOTE_EXAMPLE.taxRatePct / 100, 2);
  assert.equal(QUOTE_EXAMPLE.gstAmount, gst);
  assert.equal(QUOTE_EXAMPLE.totalIncGst, round(QUOTE_EXAMPLE.subtotalExGst + gst, 2));
});

Deno.test("the document says what the server enforces across fields: a proof's and a mock's owner and what a revision shows", () => {
  const ajv = documentValidator(doc);
  const check = (component: string, value: unknown): boolean =>
    ajv.validate({ $ref: `${SCHEMAS_BASE}#/$defs/${component}` }, value) as boolean;
  const image = "https://files.example.com/front.png";
  const who = { recipientName: "Sam", recipientEmail: "sam@example.com" };
  const owner = "0193a0f1-22b4-7c88-9d10-4e5f60718293";
  assert.equal(check("ReviseProofBody", { imageUrls: [image] }), true);
  assert.equal(check("ReviseProofBody", { mockIds: [owner], notes: "v2" }), true);
  assert.equal(check("ReviseProofBody", { notes: "nothing shown" }), false);
  assert.equal(check("ReviseProofBody", { mockIds: [], imageUrls: [] }), false);
  assert.equal(check("CreateProofBody", { ...who, jobId: owner, imageUrls: [image] }), true);
  assert.equal(check("CreateProofBody", { ...who, imageUrls: [image] }), false, "no owner");
  assert.equal(
    check("CreateProofBody", { ...who, quoteId: null, imageUrls: [image] }),
    false,
    "a null owner",
  );
  assert.equal(check("CreateProofBody", { ...who, quoteId: owner }), false, "shows nothing");
  assert.equal(check("CreateMockBody", { name: "Front", quoteGroupId: owner }), true);
  assert.equal(check("CreateMockBody", { name: "Front" }), false, "a mock with no owner");
  assert.equal(check("CreateMockBody", { name: "Front", jobId: null }), false, "a null owner");
});

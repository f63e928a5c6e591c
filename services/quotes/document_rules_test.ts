/**
 * The document says what the quotes service refuses across the fields of a new variant or line:
 * every combination of the fields those rules read is judged by the published schema exactly as
 * the service judges it (its schema, then its shape and pricing rules).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { buildOpenApiDocument, type OpenApiDocument } from "@printshop/shared/openapi";
import { CreateQuoteLineBody, CreateQuoteVariantBody } from "@printshop/shared/contracts/quotes";
import { documentValidator, SCHEMAS_BASE } from "@printshop/shared/testing/document-validator";
import { lineShapeProblem, variantPricingProblem, variantShapeProblem } from "./domain/rows.ts";
import { newLine } from "./domain/new_rows.ts";

const doc: OpenApiDocument = JSON.parse(JSON.stringify(buildOpenApiDocument()));
const ajv = documentValidator(doc);
const documentAccepts = (component: string, body: unknown): boolean =>
  ajv.validate({ $ref: `${SCHEMAS_BASE}#/$defs/${component}` }, body) as boolean;

/** Every body made of the given fields, each absent or one of its values. */
function combinations(fields: Record<string, unknown[]>): Record<string, unknown>[] {
  return Object.entries(fields).reduce<Record<string, unknown>[]>(
    (bodies, [field, values]) =>
      bodies.flatMap((body) => [body, ...values.map((value) => ({ ...body, [field]: value }))]),
    [{}],
  );
}

Deno.test("a new variant: the document refuses what the service refuses, and only that", () => {
  const bodies = combinations({
    unitPriceExGst: [5],
    markupType: ["percentage", null],
    markupValue: [10, null],
    isCustomLine: [true, false],
    size: ["M", null],
    colour: ["Black", null],
  }).map((body) => ({ quantity: 1, ...body }));
  const disagree = bodies.filter((body) => {
    const parsed = CreateQuoteVariantBody.safeParse(body);
    const serverAccepts = parsed.success &&
      variantShapeProblem(
          parsed.data.isCustomLine ?? false,
          parsed.data.size ?? null,
          parsed.data.colour ?? null,
        ) === null &&
      variantPricingProblem(parsed.data) === null;
    return serverAccepts !== documentAccepts("CreateQuoteVariantBody", body);
  });
  assertEquals(disagree, []);
});

Deno.test("a new line: the document refuses what the service refuses, and only that", () => {
  const bodies = combinations({
    valueType: ["Flat", "Percentage", null],
    percentage: [10, null],
    discountValueType: ["Flat", null],
    discountPercentage: [5, null],
  }).flatMap((body) =>
    ["Garment", "Service", "Discount", "Surcharge"].map((lineType) => ({
      lineType,
      productName: "Tee",
      ...body,
    }))
  );
  const disagree = bodies.filter((body) => {
    const parsed = CreateQuoteLineBody.safeParse(body);
    const serverAccepts = parsed.success && lineShapeProblem(newLine(parsed.data).shape) === null;
    return serverAccepts !== documentAccepts("CreateQuoteLineBody", body);
  });
  assertEquals(disagree, []);
});

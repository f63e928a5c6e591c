import assert from "node:assert/strict";
import { buildOpenApiDocument } from "@printshop/shared/openapi";
import { ROUTES } from "@printshop/shared/routes";
import { createResponseChecker } from "./response_checks.ts";

const checker = createResponseChecker();
const route = (id: string) => ROUTES.find((r) => r.operationId === id)!;
const group = {
  id: "0190a6f0-0000-7000-8000-000000000001",
  name: "Garments",
  lane: "garment",
  decorationMethod: null,
  isDefault: true,
  appliesToSetupCost: false,
  bands: [{ from: 1, markupType: "percentage", markupValue: 40 }],
  createdAt: "2026-11-24T09:00:00.000Z",
  updatedAt: "2026-11-24T09:00:00.000Z",
};
const ok = (data: unknown): string => JSON.stringify({ status: true, message: "OK", data });
const JSON_TYPE = "application/json";

Deno.test("createResponseChecker() passes an answer that matches /openapi.json", () => {
  assert.equal(checker.check(route("getMarkupGroup"), 200, ok(group), JSON_TYPE), null);
  const notFound = JSON.stringify({ error: "not_found", message: "No such group", status: false });
  assert.equal(checker.check(route("getMarkupGroup"), 404, notFound, JSON_TYPE), null);
  assert.equal(checker.check(route("getMarkupGroup"), 200, "", JSON_TYPE), null, "HEAD");
});

Deno.test("createResponseChecker() names the operation, status and JSON path of a mismatch", () => {
  const problem = checker.check(
    route("getMarkupGroup"),
    200,
    ok({ ...group, lane: 7 }),
    JSON_TYPE,
  );
  assert.match(problem ?? "", /getMarkupGroup answered 200/);
  assert.match(problem ?? "", /\/data\/lane/);
  const extra = checker.check(
    route("getMarkupGroup"),
    200,
    ok({ ...group, secret: 1 }),
    JSON_TYPE,
  );
  assert.match(extra ?? "", /additional|secret/, "a field the document does not publish");
  const missing = checker.check(
    route("getMarkupGroup"),
    200,
    ok({ ...group, name: undefined }),
    JSON_TYPE,
  );
  assert.match(missing ?? "", /name/);
});

Deno.test("createResponseChecker() refuses a status the operation does not document", () => {
  const problem = checker.check(route("getMarkupGroup"), 418, "{}", JSON_TYPE);
  assert.match(problem ?? "", /418, a status \/openapi.json does not document/);
  const text = checker.check(route("getMarkupGroup"), 200, ok(group), "text/plain");
  assert.match(text ?? "", /Content-Type text\/plain/);
});

Deno.test("createResponseChecker() holds an error's code to those its status lists", () => {
  const error = (code: string): string =>
    JSON.stringify({ error: code, message: "x", status: false });
  assert.equal(checker.check(route("listQuotes"), 414, error("uri_too_long"), JSON_TYPE), null);
  assert.equal(checker.check(route("listQuotes"), 404, error("route_not_found"), JSON_TYPE), null);
  const listed = checker.check(route("listQuotes"), 404, error("not_found"), JSON_TYPE);
  assert.match(listed ?? "", /listQuotes answered 404 with error "not_found", not one/);
  const elsewhere = checker.check(route("getQuote"), 400, error("uri_too_long"), JSON_TYPE);
  assert.match(elsewhere ?? "", /error "uri_too_long", not one \/openapi.json lists/);
});

Deno.test("createResponseChecker() checks against the document it is given", () => {
  const document = buildOpenApiDocument();
  delete document.paths["/v1/quotes"]!.get!.responses["414"];
  const older = createResponseChecker(document);
  const tooLong = JSON.stringify({ error: "uri_too_long", message: "x", status: false });
  assert.match(
    older.check(route("listQuotes"), 414, tooLong, JSON_TYPE) ?? "",
    /414, a status \/openapi.json does not document/,
  );
});

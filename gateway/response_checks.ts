/**
 * Under contract checks (the test command turns them on), every answer of a public operation is
 * held to what `/openapi.json` publishes for that operation and status: the status must be
 * documented, a JSON body must validate against the published schema, and an error's code must
 * be one the document lists for that status (`x-error-codes`). A mismatch replaces
 * the answer with a 500 naming the operation, the status and the JSON path, so the test that
 * made the request fails where it made it, whichever client it used. Production never loads this
 * module (it costs a validation per response). The route sweep holds the answers it receives to
 * the served document with the same checker.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { buildOpenApiDocument } from "@printshop/shared/openapi";
import type { RouteDef } from "@printshop/shared/routes";

const DOC_ID = "https://printshop.invalid/openapi.json";

type Json = Record<string, unknown>;

/** Escapes one JSON Pointer token (RFC 6901). */
const token = (key: string): string => key.replaceAll("~", "~0").replaceAll("/", "~1");

export interface ResponseChecker {
  /** Null when the answer matches the document; otherwise what is wrong, in one line. */
  check(route: RouteDef, status: number, body: string, contentType: string | null): string | null;
}

/** A checker over the document exactly as `/openapi.json` serves it, or over `document`. */
export function createResponseChecker(document: unknown = buildOpenApiDocument()): ResponseChecker {
  // The served text, parsed back: what a client reads, not the in-memory object.
  const doc = JSON.parse(JSON.stringify(document)) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const validators = new Map<string, ValidateFunction | null>();

  /** Follows `$ref`s between response objects to the pointer of the one that holds content. */
  const responsePointer = (route: RouteDef, status: number): string | null => {
    const operation = paths[route.path]?.[route.method.toLowerCase()];
    const responses = operation?.responses as Record<string, Json> | undefined;
    const key = responses?.[String(status)]
      ? String(status)
      : responses?.default
      ? "default"
      : null;
    if (!responses || key === null) return null;
    let pointer = `#/paths/${token(route.path)}/${route.method.toLowerCase()}/responses/${key}`;
    let response = responses[key]!;
    while (typeof response.$ref === "string") {
      pointer = response.$ref;
      response = resolve(doc, pointer) as Json;
    }
    return pointer;
  };

  /** The codes the response at `pointer` lists, when it lists them. */
  const codesAt = (pointer: string): unknown[] | null => {
    const codes = (resolve(doc, pointer) as Json)["x-error-codes"];
    return Array.isArray(codes) ? codes : null;
  };

  const validatorFor = (pointer: string): ValidateFunction | null => {
    if (!validators.has(pointer)) {
      const response = resolve(doc, pointer) as Json;
      const content = response.content as Record<string, Json> | undefined;
      validators.set(
        pointer,
        content?.["application/json"]
          ? ajv.compile({ $ref: `${DOC_ID}${pointer}/content/application~1json/schema` })
          : null,
      );
    }
    return validators.get(pointer)!;
  };

  return {
    check(route, status, body, contentType) {
      const what = `${route.operationId} answered ${status}`;
      const pointer = responsePointer(route, status);
      if (pointer === null) return `${what}, a status /openapi.json does not document for it`;
      const validate = validatorFor(pointer);
      if (validate === null) {
        return body === "" ? null : `${what} with a body where the document promises none`;
      }
      if (body === "") return null; // HEAD, or a 304
      if (!contentType?.startsWith("application/json")) {
        return `${what} with Content-Type ${contentType ?? "(none)"}, not application/json`;
      }
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        return `${what} with a body that is not JSON`;
      }
      if (validate(value)) {
        const code = (value as Json).error;
        const codes = codesAt(pointer);
        if (codes === null || codes.includes(code)) return null;
        return `${what} with error ${JSON.stringify(code)}, not one /openapi.json lists for ` +
          `that status (${codes.join(", ")})`;
      }
      const problems = (validate.errors ?? []).slice(0, 5).map((e) =>
        `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}` +
        (e.keyword === "additionalProperties"
          ? ` (${(e.params as { additionalProperty: string }).additionalProperty})`
          : "")
      );
      return `${what} with a body that does not match /openapi.json: ${problems.join("; ")}`;
    },
  };
}

function resolve(doc: Json, pointer: string): unknown {
  let at: unknown = doc;
  for (const raw of pointer.replace(/^#\//, "").split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    at = (at as Json)[key];
  }
  return at;
}

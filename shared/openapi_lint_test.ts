/**
 * The published document against a well-kept OpenAPI linter: Redocly's recommended rules, as
 * `redocly.yaml` at the repository root configures them. Any problem the linter reports, error or
 * warning, fails the test with the rule and the place it names.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type Config, lintFromString, loadConfig } from "@redocly/openapi-core";
import { isMap, isScalar, parseDocument } from "yaml";
import { buildOpenApiDocument, type OpenApiDocument } from "./openapi.ts";

const CONFIG_PATH = fileURLToPath(new URL("../redocly.yaml", import.meta.url));

let config: Config | undefined;

async function lintConfig(): Promise<Config> {
  config ??= await loadConfig({ configPath: CONFIG_PATH });
  return config;
}

/** Each problem as one line: severity, rule, message and where. */
async function problemsOf(document: OpenApiDocument): Promise<string[]> {
  const problems = await lintFromString({
    // The JSON text clients receive, not the in-memory object.
    source: JSON.stringify(document),
    absoluteRef: "/openapi.json",
    config: await lintConfig(),
  });
  return problems.map((p) =>
    `${p.severity} ${p.ruleId}: ${p.message} at ${
      p.location.map((l) => l.pointer ?? "?").join(", ")
    }`
  );
}

Deno.test("buildOpenApiDocument() passes Redocly's recommended rules with no error or warning", async () => {
  const problems = await problemsOf(buildOpenApiDocument());
  assert.deepEqual(problems, [], `\n${problems.join("\n")}`);
});

Deno.test("the Redocly lint above does flag a document that breaks a recommended rule", async () => {
  const broken = structuredClone(buildOpenApiDocument());
  const getQuote = broken.paths["/v1/quotes/{quoteId}"]!.get!;
  getQuote.summary = "";
  const quote = broken.components.schemas.Quote!;
  quote.examples = [{ ...(quote.examples as object[])[0], status: "shredded" }];
  const problems = await problemsOf(broken);
  assert.ok(problems.some((p) => p.includes("operation-summary")), problems.join("\n"));
  assert.ok(problems.some((p) => p.includes("no-invalid-schema-examples")), problems.join("\n"));
});

Deno.test("redocly.yaml extends the recommended rules and says why for every rule it turns off", () => {
  const document = parseDocument(Deno.readTextFileSync(CONFIG_PATH));
  assert.deepEqual(document.toJS().extends, ["recommended"]);
  const rules = document.get("rules");
  assert.ok(isMap(rules), "rules is a map");
  for (const [index, item] of rules.items.entries()) {
    const name = isScalar(item.key) ? String(item.key.value) : "?";
    const setting = isScalar(item.value) ? item.value.value : item.value;
    if (setting !== "off") continue;
    // The parser gives a comment above a map's first entry to the map itself.
    const comment = index === 0
      ? rules.commentBefore
      : isScalar(item.key)
      ? item.key.commentBefore
      : undefined;
    const reason = comment?.trim() ?? "";
    assert.ok(reason.length > 20, `${name} is turned off without a reason on the line above it`);
    assert.ok(!reason.includes("\n"), `${name}: the reason is one line`);
  }
});

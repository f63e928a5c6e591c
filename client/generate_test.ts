/**
 * The committed generated file is what the generator makes of today's document: an operation
 * or field added to a contract without regenerating fails here, naming the command to run.
 */
import assert from "node:assert/strict";
import { generateClientSources } from "./generate.ts";

Deno.test("client/src/schema.ts matches the document (else: deno task client:generate)", async () => {
  for (const file of await generateClientSources()) {
    const committed = await Deno.readTextFile(new URL(file.path, import.meta.url))
      .catch(() => null);
    if (committed === file.text) continue;
    const at = committed === null ? -1 : firstDifference(committed, file.text);
    assert.fail(
      committed === null
        ? `client/${file.path} is missing: run deno task client:generate`
        : `client/${file.path} differs from the document (first at line ${at}): run deno task ` +
          "client:generate and commit the result",
    );
  }
});

Deno.test("the generated output is the same on every run", async () => {
  const [first, second] = [await generateClientSources(), await generateClientSources()];
  assert.deepStrictEqual(first, second);
});

function firstDifference(a: string, b: string): number {
  const left = a.split("\n");
  const right = b.split("\n");
  const index = left.findIndex((line, i) => line !== right[i]);
  return (index === -1 ? left.length : index) + 1;
}

/**
 * Holds the list of what may cross organisations to the code: every module outside tests (and
 * shared/testing, which only tests import) that calls `platformTransaction`, `platformRead` or
 * `platformStatement` is listed in the README's "Database roles" table (with why), and every
 * module listed there calls one. A new caller is a README change, so a reviewer sees it.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const USE = /\bplatform(Transaction|Read|Statement)\b/;

/** The module's code without its imports and comments: a use is a call or a reference. */
function code(text: string): string {
  return text
    .replace(/^import[^;]*;/gms, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "");
}

async function* sources(dir: URL, prefix = ""): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (entry.isDirectory) yield* sources(new URL(`${entry.name}/`, dir), `${path}/`);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
  }
}

/** The modules the README's table names (its first column), in order. */
async function listed(): Promise<string[]> {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const start = readme.indexOf("**What may cross organisations.**");
  const section = readme.slice(start, readme.indexOf("\n\n**", start + 1));
  return [...new Set([...section.matchAll(/^\|\s*`([^`]+\.ts)`\s*\|/gm)].map((m) => m[1]!))].sort();
}

Deno.test("the platform functions are called only where the README says why", async () => {
  const callers: string[] = [];
  for await (const path of sources(ROOT)) {
    if (path === "shared/db/mod.ts") continue; // where they are defined
    // Test support (the plan checks EXPLAIN a platform statement as it runs): never served.
    if (path.startsWith("shared/testing/")) continue;
    if (USE.test(code(await Deno.readTextFile(new URL(path, ROOT))))) callers.push(path);
  }
  const named = await listed();
  assertEquals(named.length > 0, true, "the README's table was not found");
  assertEquals(callers.sort(), named);
});

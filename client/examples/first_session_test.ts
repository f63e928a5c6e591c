/**
 * The README's TypeScript first session runs as a new user would run it, against a real stack,
 * and prints the same totals for the preview and the stored quote and a verified delivery; the
 * README shows this very file.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack } from "@printshop/shared/testing";
import { freePort } from "@printshop/shared/net";

const EXAMPLE = new URL("./first_session.ts", import.meta.url);
const ROOT = new URL("../../", import.meta.url);

Deno.test("the TypeScript first session previews, stores and verifies, as the README says", async () => {
  await using stack = await startTestStack();
  const tenant = await stack.tenant([
    "quotes.read",
    "quotes.write",
    "costs.read",
    "webhooks.read",
    "webhooks.write",
  ]);
  const port = freePort();
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", EXAMPLE.pathname],
    cwd: ROOT.pathname,
    env: { API: stack.gatewayUrl, KEY: tenant.apiKey, RECEIVER_PORT: String(port) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(run.stdout);
  assert(run.success, `${out}\n${new TextDecoder().decode(run.stderr)}`);
  const lines = out.trim().split("\n");
  assert(/^sent again: 409 Already taken by quote [0-9a-f-]{36}$/.test(lines[3] ?? ""), out);
  assertEquals(lines.slice(1), [
    "previewed: 158.4",
    "stored: 158.4",
    lines[3],
    "found by externalId: true",
    "verified: quote.created",
  ]);
});

Deno.test("the README shows the TypeScript first session as it is in client/examples", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const example = await Deno.readTextFile(EXAMPLE);
  // The file after its header comment, as the README's block shows it.
  const body = example.slice(example.indexOf("import {"));
  assert(
    readme.includes("```ts\n" + body + "```"),
    "README's TypeScript session differs from the file",
  );
});

/**
 * How `deno task admin` answers its command line before it reaches any API: the usage on request
 * (exit 0), and every mistake (no command, an unknown option, an option without its value, an
 * argument nothing takes) as the usage on stderr with exit 2, never a stack trace.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";

async function admin(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./admin.ts", import.meta.url).pathname, ...args],
    env: { DATA_DIR: "/nonexistent" },
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, out: text(output.stdout), err: text(output.stderr) };
}

Deno.test("the admin CLI answers --help with its usage, and every mistake with the usage and exit 2", async () => {
  const help = await admin("--help");
  assertEquals(help.code, 0);
  assert.match(help.out, /list-mail/);
  for (
    const args of [
      [],
      ["show-org", "--org"],
      ["show-org", "--orgg", "x"],
      ["set-limits", "--org", "x", "--rpm", "-5"],
      ["list-orgs", "extra"],
      ["frobnicate"],
    ]
  ) {
    const answer = await admin(...args);
    assertEquals(answer.code, 2, `${args.join(" ")}: ${answer.err}`);
    assert.match(answer.err, /Usage: deno task admin/, args.join(" "));
    assert.doesNotMatch(answer.err, /\n\s+at /, `${args.join(" ")}: a stack trace`);
  }
});

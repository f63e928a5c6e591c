import assert from "node:assert/strict";
import { SERVICES } from "./routes.ts";
import { RUN_FLAGS, V8_FLAGS } from "./launcher.ts";

const ROOT = new URL("../", import.meta.url);
const V8_FLAGS_ARG = `--v8-flags=${V8_FLAGS.join(",")}`;

/** Runs `code` from the repository root with `flags`, and answers what it printed. */
async function runWith(flags: readonly string[], code: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...flags, code],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  return new TextDecoder().decode(out.stdout).trim();
}

const COMPACT = `import { compactHeap } from "./shared/heap_compaction.ts";
console.log(JSON.stringify({ gc: typeof globalThis.gc, compacted: compactHeap() }));`;

Deno.test("the launcher runs every process with its V8 flags, which V8 accepts", async () => {
  assert.ok(RUN_FLAGS.includes(V8_FLAGS_ARG), `RUN_FLAGS must pass ${V8_FLAGS_ARG}`);
  // V8 refuses a flag it does not know, and the process then exits before running anything.
  assert.deepEqual(JSON.parse(await runWith(RUN_FLAGS, COMPACT)), {
    gc: "function",
    compacted: true,
  });
});

Deno.test("compactHeap does nothing in a process started without the launcher's flags", async () => {
  const flags = RUN_FLAGS.filter((flag) => flag !== V8_FLAGS_ARG);
  assert.deepEqual(JSON.parse(await runWith(flags, COMPACT)), {
    gc: "undefined",
    compacted: false,
  });
});

Deno.test("the Dockerfile runs every process with the launcher's V8 flags", async () => {
  const dockerfile = await Deno.readTextFile(new URL("Dockerfile", ROOT));
  // The long-running processes; the one-shot db-roles stage runs a script and exits.
  const commands = [...dockerfile.matchAll(/^CMD (\[.*\])$/gm)].map((m) =>
    JSON.parse(m[1]!) as string[]
  ).filter((command) => command.at(-1)?.endsWith("/main.ts"));
  assert.equal(commands.length, SERVICES.length + 1, "one CMD per service and the gateway");
  for (const command of commands) {
    assert.ok(command.includes(V8_FLAGS_ARG), `${command.at(-1)}: CMD must pass ${V8_FLAGS_ARG}`);
  }
});

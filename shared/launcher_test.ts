import assert from "node:assert/strict";
import { SERVICES } from "./routes.ts";
import { cLibraryPath, RUN_FLAGS, trimGrant, V8_FLAGS } from "./launcher.ts";
import { MALLOC_TRIM_LIBRARY_ENV } from "./heap_compaction.ts";
import { runModuleJson } from "./testing/module_process.ts";

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

/** Runs a module that trims, with `flags` and `env`, and answers whether it trimmed. */
function trimsWith(flags: readonly string[], env: Record<string, string>): Promise<boolean> {
  const heap = new URL("heap_compaction.ts", import.meta.url).href;
  return runModuleJson<boolean>(
    `import { trimMalloc } from "${heap}";\nconsole.log(JSON.stringify(trimMalloc()));\n` +
      // Once the library is open, the grant is given up: no second library, nor the same.
      `if (trimMalloc()) try { Deno.dlopen(Deno.env.get("${MALLOC_TRIM_LIBRARY_ENV}"), {}); ` +
      `throw new Error("opened again"); } catch (e) { if (!(e instanceof Deno.errors.NotCapable)) throw e; }`,
    flags,
    env,
  );
}

Deno.test("a service started with the launcher's grant gives malloc's free pages back", async () => {
  const libc = await cLibraryPath();
  assert.ok(libc !== null, "this machine's C library is in /proc/self/maps");
  const grant = trimGrant(libc);
  assert.equal(await trimsWith([...RUN_FLAGS, ...grant.flags], grant.env), true);
  // Either half alone trims nothing, and nothing throws or prompts.
  assert.equal(await trimsWith(RUN_FLAGS, grant.env), false);
  assert.equal(await trimsWith([...RUN_FLAGS, ...grant.flags], {}), false);
  // The grant is that one file: another library of the machine stays closed.
  const other = libc.replace(/libc(\.so\.6|-[\d.]+\.so)$/, "libm.so.6");
  assert.equal(
    await trimsWith([...RUN_FLAGS, ...grant.flags], { [MALLOC_TRIM_LIBRARY_ENV]: other }),
    false,
  );
});

Deno.test("the Dockerfile grants the services, not the gateway, the library it names", async () => {
  const dockerfile = await Deno.readTextFile(new URL("Dockerfile", ROOT));
  const named = new RegExp(`^ENV ${MALLOC_TRIM_LIBRARY_ENV}=(\\S+)$`, "m").exec(dockerfile)?.[1];
  assert.ok(named !== undefined, `the Dockerfile sets ${MALLOC_TRIM_LIBRARY_ENV}`);
  const commands = [...dockerfile.matchAll(/^CMD (\[.*\])$/gm)].map((m) =>
    JSON.parse(m[1]!) as string[]
  ).filter((command) => command.at(-1)?.endsWith("/main.ts"));
  for (const command of commands) {
    const grants = command.filter((arg) => arg.startsWith("--allow-ffi"));
    const expected: string[] = command.at(-1) === "gateway/main.ts" ? [] : trimGrant(named).flags;
    assert.deepEqual(grants, expected, command.at(-1));
  }
});

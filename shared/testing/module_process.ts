import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/**
 * Runs `source` as a module of its own, in a new `deno run` process with exactly `flags` and with
 * `env` over this process's environment (as the launcher starts one), from the repository root,
 * and answers what it printed, parsed as JSON. Fails when the process does not exit 0.
 */
export async function runModuleJson<T>(
  source: string,
  flags: readonly string[],
  env: Record<string, string>,
): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    const module = `${dir}/module.ts`;
    await Deno.writeTextFile(module, source);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, module],
      cwd: ROOT.pathname,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Every task a new user may run first on a fresh clone installs the npm packages it needs: a
 * task running one of our scripts depends on `setup` (`deno install`). Found when
 * `deno task otel:receive`, which the README starts before `task start`, failed on a fresh clone.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";

/** Run only where the platform has installed the packages first: Deploy's pre-deploy command. */
const INSTALLED_BEFORE = new Set(["migrate"]);

Deno.test("every task that runs a script of ours installs the packages first", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
  ) as { tasks: Record<string, string | { command: string; dependencies?: string[] }> };
  const missing = Object.entries(config.tasks).flatMap(([name, task]) => {
    const { command, dependencies = [] } = typeof task === "string" ? { command: task } : task;
    const runsScript = /\bscripts\/\S+\.ts\b/.test(command);
    return runsScript && !INSTALLED_BEFORE.has(name) && !dependencies.includes("setup")
      ? [name]
      : [];
  });
  assertEquals(missing, []);
});

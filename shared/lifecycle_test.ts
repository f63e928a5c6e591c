import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";

/**
 * A process that registers `steps` (a name and how long it takes; -1 never ends) with
 * onShutdown, says "ready", and is then sent SIGTERM: its exit code and log lines.
 */
async function stopped(
  steps: [string, number][],
  deadlineMs: number,
): Promise<{ code: number; lines: { msg: string; step?: string }[] }> {
  const code = `
    import { onShutdown } from ${JSON.stringify(new URL("./lifecycle.ts", import.meta.url).href)};
    import { createLogger } from ${JSON.stringify(new URL("./log.ts", import.meta.url).href)};
    const logger = createLogger({ level: "info" });
    const steps = ${JSON.stringify(steps)}.map(([name, ms]) => ({
      name,
      run: () => new Promise((resolve) => { if (ms >= 0) setTimeout(resolve, ms); }),
    }));
    onShutdown(steps, logger, ${deadlineMs});
    // Keeps the process alive until the signal, as a server would.
    setInterval(() => {}, 60_000);
    console.log("ready");
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  child.kill("SIGTERM");
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
  const status = await child.status;
  const lines = text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return { code: status.code, lines };
}

Deno.test("onShutdown runs each step in turn and exits 0 once they are done", async () => {
  const { code, lines } = await stopped([["first", 10], ["second", 10]], 5_000);
  assertEquals(code, 0);
  assertEquals(lines.filter((l) => l.msg === "still stopping"), []);
});

Deno.test("onShutdown names a slow step, and past its deadline exits 1 saying what it waited for", async () => {
  const { code, lines } = await stopped([["quick", 10], ["stuck", -1], ["never", 10]], 1_500);
  assertEquals(code, 1);
  const said = lines.map((l) => [l.msg, l.step]);
  assert.deepEqual(said, [
    ["still stopping", "stuck"],
    ["stop deadline passed; exiting without waiting further", "stuck"],
  ]);
});

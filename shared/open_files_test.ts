import assert from "node:assert/strict";
import { readOpenFileLimit, softOpenFileLimit } from "./open_files.ts";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                524288               files
Max locked memory         8388608              8388608              bytes
`;

Deno.test("softOpenFileLimit reads the soft limit of open files from /proc/self/limits", () => {
  assert.equal(softOpenFileLimit(LIMITS), 20_000);
  assert.equal(softOpenFileLimit(LIMITS.replace("20000  ", "unlimited")), null);
  assert.equal(softOpenFileLimit("Max cpu time unlimited"), null);
});

Deno.test("readOpenFileLimit takes a given limit, else reads this process's own", async () => {
  assert.equal(await readOpenFileLimit(4096), 4096);
  // The test run has --allow-all, as the launcher does.
  const limit = await readOpenFileLimit();
  assert.ok(limit !== null && limit > 0, String(limit));
});

Deno.test("under the flags the gateway runs with, the limit cannot be read: it must be given", async () => {
  const { RUN_FLAGS } = await import("./launcher.ts");
  const probe = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    probe,
    `import { readOpenFileLimit } from "${new URL("./open_files.ts", import.meta.url)}";\n` +
      "console.log(JSON.stringify(await readOpenFileLimit()));\n",
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...RUN_FLAGS, probe],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(probe);
  assert.equal(
    new TextDecoder().decode(out.stdout).trim(),
    "null",
    new TextDecoder().decode(out.stderr),
  );
});

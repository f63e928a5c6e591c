import assert from "node:assert/strict";
import { cLibraryPath, RUN_FLAGS, trimGrant } from "./launcher.ts";
import { runModuleJson } from "./testing/module_process.ts";

/**
 * A process that, with the compaction running, fills 72 MB of buffers the C allocator serves
 * from its heap, keeps one in sixteen and drops the rest, then waits: its RSS before, at the
 * peak and two seconds after (MB). The buffers it keeps pin the freed pages between them, as the
 * small allocations of a service's burst do.
 */
const BURST = `import { startHeapCompaction } from "${
  new URL("heap_compaction.ts", import.meta.url).href
}";
const rssMb = () => Deno.memoryUsage().rss / 2 ** 20;
const compaction = startHeapCompaction();
await new Promise((resolve) => setTimeout(resolve, 300));
const before = rssMb();
const kept = [];
let all = [];
for (let i = 0; i < 3000; i++) {
  const buffer = new Uint8Array(24 * 1024);
  buffer.fill(1);
  all.push(buffer);
  if (i % 16 === 0) kept.push(buffer);
}
all = null;
const peak = rssMb();
await new Promise((resolve) => setTimeout(resolve, 2000));
console.log(JSON.stringify({ before, peak, after: rssMb(), kept: kept.length }));
compaction.stop();`;

function burst(
  flags: readonly string[],
  env: Record<string, string>,
): Promise<{ before: number; peak: number; after: number }> {
  return runModuleJson(BURST, flags, env);
}

Deno.test("after a burst, a service given the trim grant gives the freed pages back", async () => {
  const grant = trimGrant(await cLibraryPath());
  const trimmed = await burst([...RUN_FLAGS, ...grant.flags], grant.env);
  assert.ok(trimmed.peak - trimmed.before > 60, JSON.stringify(trimmed));
  assert.ok(trimmed.peak - trimmed.after > 40, `not given back: ${JSON.stringify(trimmed)}`);
  // The same burst without the grant: the garbage is collected all the same, but the pages stay.
  const kept = await burst(RUN_FLAGS, {});
  assert.ok(kept.peak - kept.after < 20, `given back without a trim: ${JSON.stringify(kept)}`);
});

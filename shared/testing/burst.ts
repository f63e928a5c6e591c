/**
 * A burst of native memory in a process of its own, as a process the launcher starts would see
 * it: for the tests of what gives freed pages back (heap_compaction_test.ts, allocator_test.ts).
 */
import { runModuleJson } from "./module_process.ts";

/**
 * A process that, with the compaction running as in every process the launcher starts, fills
 * 72 MB of buffers the C allocator serves from its heap, keeps one in sixteen and drops the rest,
 * then waits: its RSS before, at the peak and two seconds after (MB). The buffers it keeps pin
 * the freed pages between them, as the small allocations of a burst of requests do. With
 * `collect`, it also collects the garbage at once (`gc()`), for a test of what the allocator does
 * with the pages rather than of when the compaction runs.
 */
function burstSource(collect: boolean): string {
  return `import { startHeapCompaction } from "${
    new URL("../heap_compaction.ts", import.meta.url).href
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
const peak = rssMb();${collect ? "\nglobalThis.gc();" : ""}
await new Promise((resolve) => setTimeout(resolve, 2000));
console.log(JSON.stringify({ before, peak, after: rssMb(), kept: kept.length }));
compaction.stop();`;
}

/** Runs the burst with exactly `flags`, and `env` over ours: its RSS before, at the peak and after (MB). */
export function burst(
  flags: readonly string[],
  env: Record<string, string>,
  options: { collect?: boolean } = {},
): Promise<{ before: number; peak: number; after: number }> {
  return runModuleJson(burstSource(options.collect ?? false), flags, env);
}

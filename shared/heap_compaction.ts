/**
 * Giving a process's garbage back to the system when start-up or a burst of requests is over,
 * instead of waiting for V8's memory reducer (issue 15: ≤ 80 MB RSS idle). Every service and the
 * gateway start it.
 */
import { getHeapStatistics } from "node:v8";

/** The global V8 installs with `--expose-gc` (the launcher's V8_FLAGS). */
type Gc = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/**
 * Collects all garbage and gives the freed heap back to the system, as V8's memory reducer
 * does: a start-up leaves the heap at about twice what stays live (module evaluation, schemas,
 * migrations), and a burst of requests leaves the young generation grown and the old one full
 * of garbage until the next collection. Two full collections: ~50 ms of CPU for a service's
 * heap. Returns false, doing nothing, when the process runs without `--expose-gc`.
 */
export function compactHeap(): boolean {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function") return false;
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  return true;
}

/** While the heap is bigger than it should be, how often it is looked at. */
const COMPACTION_CHECK_MS = 250;
/**
 * Allocated within one check, below which the process counts as quiet: 4 MB/s, where a load
 * allocates tens of MB/s. V8 counts allocation a buffer at a time, so even an idle process
 * shows up to ~750 KB in a quarter of a second now and then.
 */
const QUIET_ALLOCATION_BYTES = 1 << 20;
/** Growth of the heap since the last compaction that is worth giving back. */
const COMPACTION_GROWTH_BYTES = 16 << 20;

/**
 * The heap's committed size, and the bytes allocated since the process started (NaN on a
 * runtime that does not tell, which is then never quiet).
 */
function heapNow(): { size: number; allocated: number } {
  // total_allocated_bytes is newer than @types/node 22 (Deno 2.9 has it).
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & {
    total_allocated_bytes?: number;
  };
  return { size: heap.total_heap_size, allocated: heap.total_allocated_bytes ?? Number.NaN };
}

/**
 * Compacts the heap now (start-up is over), and again whenever the process goes quiet after
 * its heap grew by 16 MB: V8's own memory reducer first looks 30 s after start and ~8 s after a
 * burst, so a process would keep a loaded heap's size long after the load. Never under load:
 * it waits for a quarter of a second allocating less than 4 MB/s. An idle process is not woken
 * for it: the heap is looked at only after V8 collected garbage (a timer of its own, every
 * quarter second, would cost each process ~0.1 % of a core while idle). Does nothing without
 * `--expose-gc`.
 */
export function startHeapCompaction(): { stop(): void } {
  if (!compactHeap()) return { stop() {} };
  let settled = heapNow().size;
  let allocated = Number.NaN;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const check = (): void => {
    timer = undefined;
    const now = heapNow();
    const quiet = now.allocated - allocated < QUIET_ALLOCATION_BYTES;
    allocated = now.allocated;
    // Not grown: nothing to do until garbage is collected again.
    if (stopped || now.size - settled < COMPACTION_GROWTH_BYTES) return;
    if (!quiet) {
      timer = setTimeout(check, COMPACTION_CHECK_MS);
      return;
    }
    compactHeap();
    settled = heapNow().size;
  };
  // A target nothing else refers to is collected by the next GC, even a young generation one,
  // and its callback then runs: a sign the heap is changing.
  const collections = new FinalizationRegistry<undefined>(() => {
    if (stopped) return;
    collections.register({}, undefined);
    if (timer !== undefined) return;
    allocated = heapNow().allocated;
    timer = setTimeout(check, COMPACTION_CHECK_MS);
  });
  collections.register({}, undefined);
  // A registry nothing refers to is collected itself, and its callbacks stop.
  WATCHING.add(collections);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      WATCHING.delete(collections);
    },
  };
}

const WATCHING = new Set<FinalizationRegistry<undefined>>();

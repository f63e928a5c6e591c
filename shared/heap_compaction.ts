/**
 * Giving a process's garbage back to the system when start-up or a burst of requests is over,
 * instead of waiting for V8's memory reducer (issue 15: ≤ 80 MB RSS idle). Every service and the
 * gateway start it.
 */
import { getHeapStatistics } from "node:v8";

/**
 * The C library a service may call `malloc_trim` from: its path, exactly as the process's
 * `--allow-ffi=<path>` grants it (the launcher and the Dockerfile set both; unset, nothing is
 * trimmed).
 */
export const MALLOC_TRIM_LIBRARY_ENV = "MALLOC_TRIM_LIBRARY";

/** `malloc_trim(0)` of the C library, when the process may call it; else null. */
function mallocTrimmer(): (() => void) | null {
  const path = Deno.env.get(MALLOC_TRIM_LIBRARY_ENV);
  if (path === undefined || path === "") return null;
  // Asked first: without the grant, dlopen would throw (or prompt, on a terminal).
  if (Deno.permissions.querySync({ name: "ffi", path }).state !== "granted") return null;
  try {
    const libc = Deno.dlopen(path, { malloc_trim: { parameters: ["usize"], result: "i32" } });
    return () => void libc.symbols.malloc_trim(0n);
  } catch {
    return null;
  } finally {
    // The one function is bound; nothing in the process opens a library, this one included,
    // from here on (the C library also holds `system` and `dlopen`).
    Deno.permissions.revokeSync({ name: "ffi" });
  }
}

let trimmer: (() => void) | null | undefined;

/** Whether this process may give malloc's free pages back (opens the library the first time). */
export function canTrimMalloc(): boolean {
  trimmer ??= mallocTrimmer();
  return trimmer !== null;
}

/**
 * Gives the C allocator's free pages back to the system. glibc's malloc returns memory on its
 * own only from the top of its heap: after a burst (a quote list of 200 full quotes is 7.8 MB of
 * JSON, built through many buffers), the freed pages in the middle stay resident for good,
 * pinned by whatever small allocation sits above them. On the quotes service after the scale
 * bench's loads that was 70 MB of a 172 MB RSS; `malloc_trim(0)` brought it to 99 MB. No other
 * setting of glibc's does it: a fixed mmap threshold of 16 KB or no fast bins left 113–170 MB
 * and doubled the CPU of the 200-quote page. Returns whether it trimmed.
 */
export function trimMalloc(): boolean {
  trimmer ??= mallocTrimmer();
  if (trimmer === null) return false;
  trimmer();
  return true;
}

/** The global V8 installs with `--expose-gc` (the launcher's V8_FLAGS). */
type Gc = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/**
 * Collects all garbage and gives the freed heap back to the system, as V8's memory reducer
 * does: a start-up leaves the heap at about twice what stays live (module evaluation, schemas,
 * migrations), and a burst of requests leaves the young generation grown and the old one full
 * of garbage until the next collection. Two full collections: ~50 ms of CPU for a service's
 * heap; then `trimMalloc`, where the process may. Returns false, doing nothing, when the process runs without `--expose-gc`.
 */
export function compactHeap(): boolean {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (typeof gc !== "function") return false;
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  // The collection freed the buffers the garbage held; their pages go back too.
  trimMalloc();
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
 * Growth of the resident memory since the last compaction that is worth a trim: at most this
 * much of malloc's freed memory stays resident after a burst (the goal is 120 MB a
 * process, of which ~47 MB is the executable's pages).
 */
const TRIM_GROWTH_BYTES = 8 << 20;

/**
 * The heap's committed size, the process's resident memory (0 unless `withRss`), and the bytes
 * allocated since the process started (NaN on a runtime that does not tell, which is then never
 * quiet).
 */
function heapNow(withRss: boolean): { size: number; rss: number; allocated: number } {
  // total_allocated_bytes is newer than @types/node 22 (Deno 2.9 has it).
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & {
    total_allocated_bytes?: number;
  };
  return {
    size: heap.total_heap_size,
    // Read only where it is compared (a process that trims), never on every collection.
    rss: withRss ? Deno.memoryUsage().rss : 0,
    allocated: heap.total_allocated_bytes ?? Number.NaN,
  };
}

/**
 * Compacts the heap now (start-up is over), and again whenever the process goes quiet after
 * its heap grew by 16 MB, or its resident memory by 8 MB where malloc can be trimmed: V8's own
 * memory reducer first looks 30 s after start and ~8 s after a burst, so a process would keep a
 * loaded heap's size long after the load. Never under load:
 * it waits for a quarter of a second allocating less than 4 MB/s. An idle process is not woken
 * for it: the heap is looked at only after V8 collected garbage (a timer of its own, every
 * quarter second, would cost each process ~0.1 % of a core while idle). Does nothing without
 * `--expose-gc`.
 */
export function startHeapCompaction(): { stop(): void } {
  if (!compactHeap()) return { stop() {} };
  const trims = canTrimMalloc();
  let settled = heapNow(trims);
  let allocated = Number.NaN;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const check = (): void => {
    timer = undefined;
    const now = heapNow(trims);
    const quiet = now.allocated - allocated < QUIET_ALLOCATION_BYTES;
    allocated = now.allocated;
    // Not grown: nothing to do until garbage is collected again.
    // Where malloc's free pages can be given back, the resident memory counts too: a burst of
    // large answers grows malloc's heap (buffers outside V8's) more than V8's own. Elsewhere a
    // collection could not lower it, and would only stall the process (the gateway in a flood).
    const grown = now.size - settled.size >= COMPACTION_GROWTH_BYTES ||
      (trims && now.rss - settled.rss >= TRIM_GROWTH_BYTES);
    if (stopped || !grown) return;
    if (!quiet) {
      timer = setTimeout(check, COMPACTION_CHECK_MS);
      return;
    }
    compactHeap();
    settled = heapNow(trims);
  };
  // A target nothing else refers to is collected by the next GC, even a young generation one,
  // and its callback then runs: a sign the heap is changing.
  const collections = new FinalizationRegistry<undefined>(() => {
    if (stopped) return;
    collections.register({}, undefined);
    if (timer !== undefined) return;
    allocated = heapNow(false).allocated;
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

/**
 * The gateway's memory allocator. It holds every connection a flood opens, and glibc's malloc
 * gives the freed pages back only from the top of its heaps: 10 s after a flood of 11,000
 * connections the gateway was still 1.2–1.3× its size before (`deno run -A scripts/bench_edge.ts`).
 * glibc returns the pages in between only when `malloc_trim` is called, which needs
 * `--allow-ffi`, and the gateway parses whatever the internet sends, so it gets no FFI (README
 * "Memory"). jemalloc, preloaded, gives them back by itself: 0.87–0.95× in the same bench, with
 * no new permission. The services keep glibc and trim (heap_compaction.ts).
 */

/**
 * jemalloc's settings: a background thread returns pages unused for a second to the kernel
 * outright. By default it waits 10 s, and purges only when something else is allocated.
 */
export const GATEWAY_MALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";

/** Where Debian's package libjemalloc2 puts the library (`deno task test` installs it as root). */
export const DEBIAN_JEMALLOC_PATH = `/usr/lib/${Deno.build.arch}-linux-gnu/libjemalloc.so.2`;

/** What a test that needs jemalloc says when it is not installed. */
export function jemallocMissingMessage(): string {
  return `jemalloc is not installed (${DEBIAN_JEMALLOC_PATH}): run "apt-get update && apt-get install -y libjemalloc2" as root (deno task test does it by itself when run as root)`;
}

/** Where distributions put the library: Debian's multiarch folder first. */
const CANDIDATES = [
  DEBIAN_JEMALLOC_PATH,
  "/usr/lib64/libjemalloc.so.2",
  "/usr/lib/libjemalloc.so.2",
  "/usr/local/lib/libjemalloc.so.2",
];

/**
 * Whether a file may be preloaded into the gateway: a regular file that root owns and nobody
 * else may write. Anyone who could replace it would run code in the process that holds the
 * gateway's secrets.
 */
export function preloadable(info: Pick<Deno.FileInfo, "isFile" | "uid" | "mode">): boolean {
  return info.isFile && info.uid === 0 && info.mode !== null && (info.mode & 0o022) === 0;
}

/** Where jemalloc is installed on this machine, or null (not installed, or not Linux). */
export async function jemallocPath(): Promise<string | null> {
  if (Deno.build.os !== "linux") return null;
  for (const path of CANDIDATES) {
    try {
      if (preloadable(await Deno.stat(path))) return path;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The variables that run the gateway on jemalloc at `library` (none when it is null), given
 * the environment it would otherwise inherit. A preload the operator set is kept as it is, and
 * so are jemalloc settings of their own: theirs win.
 */
export function gatewayAllocatorEnv(
  library: string | null,
  inherited: Record<string, string | undefined>,
): Record<string, string> {
  if (library === null || inherited.LD_PRELOAD) return {};
  return {
    LD_PRELOAD: library,
    ...(inherited.MALLOC_CONF ? {} : { MALLOC_CONF: GATEWAY_MALLOC_CONF }),
  };
}

/** What the launcher says at start about the gateway's allocator. */
export function allocatorLine(
  library: string | null,
  inherited: Record<string, string | undefined>,
  os: string = Deno.build.os,
): string {
  if (inherited.LD_PRELOAD) {
    return `the gateway runs with the LD_PRELOAD it was given (${inherited.LD_PRELOAD})`;
  }
  if (library !== null) return `the gateway runs on jemalloc (${library})`;
  if (os !== "linux") return "the gateway runs on the system's allocator";
  return "libjemalloc2 is not installed: the gateway runs on the C library's malloc, which keeps " +
    "much of what a connection flood took (install libjemalloc2 to have it given back)";
}

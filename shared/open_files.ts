/**
 * The process's descriptor limit ("Max open files"), which the gateway sizes its connection cap
 * by. Deno raises the soft limit to the hard one at start, and children inherit it; but Deno lets
 * a process read /proc/self/limits only with --allow-all (--allow-read is not enough), so the
 * launcher, which runs with it, reads the limit and hands it to the gateway as OPEN_FILE_LIMIT,
 * as the container's entrypoint does from `ulimit -n`.
 */

/** The variable the limit travels in. */
export const OPEN_FILE_LIMIT_ENV = "OPEN_FILE_LIMIT";

/** The soft "Max open files" from the text of /proc/self/limits; null if absent or unlimited. */
export function softOpenFileLimit(procLimits: string): number | null {
  const match = procLimits.match(/^Max open files\s+(\S+)/m);
  if (!match) return null;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

/**
 * This process's limit: `given` (OPEN_FILE_LIMIT) when the process that started this one read
 * it, else /proc/self/limits if this process may read it; null when neither works.
 */
export async function readOpenFileLimit(given?: number): Promise<number | null> {
  if (given !== undefined) return given;
  try {
    return softOpenFileLimit(await Deno.readTextFile("/proc/self/limits"));
  } catch {
    return null;
  }
}

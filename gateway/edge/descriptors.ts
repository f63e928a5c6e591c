/**
 * How many client connections the process can hold without running out of file descriptors,
 * which is what killed it: Deno's server stops for good at the first failed accept.
 */

/**
 * Descriptors one client connection may hold at once: its socket, the edge's socket to the app,
 * the app server's end of that, and the connection the app may open to a service to answer it.
 */
export const DESCRIPTORS_PER_CONNECTION = 4;
/**
 * Kept for everything else: the database pool, the event bus, listeners, logs, the runtime's own
 * and the pool of idle connections to services.
 */
export const RESERVED_DESCRIPTORS = 256;
/** Connections over the cap held at once while they are told 503; beyond it they are closed. */
export const SHED_SLOTS = 64;
/** Linux's usual soft limit, assumed when /proc/self/limits cannot be read. */
export const ASSUMED_OPEN_FILE_LIMIT = 1024;

/** The soft "Max open files" from the text of /proc/self/limits; null if absent or unlimited. */
export function softOpenFileLimit(procLimits: string): number | null {
  const match = procLimits.match(/^Max open files\s+(\S+)/m);
  if (!match) return null;
  const value = Number(match[1]);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** Client connections that fit in `openFileLimit` descriptors, keeping the reserve. */
export function connectionCap(openFileLimit: number): number {
  const usable = openFileLimit - RESERVED_DESCRIPTORS - SHED_SLOTS;
  return Math.max(1, Math.floor(usable / DESCRIPTORS_PER_CONNECTION));
}

/**
 * The process's soft descriptor limit, or null when it cannot be read: Deno lets a process read
 * /proc/self/limits only with --allow-all (--allow-read is not enough), so under the launcher's
 * flags this is null and MAX_CONNECTIONS should be set.
 */
export async function readOpenFileLimit(): Promise<number | null> {
  try {
    return softOpenFileLimit(await Deno.readTextFile("/proc/self/limits"));
  } catch {
    return null;
  }
}

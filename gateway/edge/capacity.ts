/**
 * How many client connections the edge holds at once: as many as fit in the process's file
 * descriptors (running out of them is what stops a server accepting anyone) and in the memory
 * set aside for them, whichever is fewer. Pure: the limit is read by shared/open_files.ts.
 *
 * A client connection costs one descriptor until it has a complete request head; only then does
 * it borrow a link to the app (edge/app_links.ts), which costs three: the edge's end, the app
 * server's end, and the connection the app may open to a service to answer it. Links are few
 * and shared, so a flood of idle or slow clients holds one descriptor each.
 */

export const DESCRIPTORS_PER_CONNECTION = 1;
export const DESCRIPTORS_PER_LINK = 3;
/**
 * Kept for everything else: the database pool, the event bus, listeners, logs, the runtime's own
 * and the pool of idle connections to services.
 */
export const RESERVED_DESCRIPTORS = 256;
/** Connections over the cap held at once while they are told 503; beyond it they are closed. */
export const SHED_SLOTS = 64;
/** Linux's usual soft limit, assumed when the limit is not known. */
export const ASSUMED_OPEN_FILE_LIMIT = 1024;
/**
 * Requests at the app at once: far more than two cores serve at a time, and a bound on what the
 * app's server holds for requests still arriving (some 300 KB each; bodies the edge holds until
 * whole never get that far).
 */
export const MAX_LINKS = 256;
/**
 * What one held connection costs the process, idle or mid-head: its socket in the runtime, its
 * pending read and 512-byte buffer, and the edge's bookkeeping. Measured on an edge in front of
 * a bare app: 10,000 idle connections from 19 addresses raised its RSS by 63 MB (~6.3 KB each,
 * 3.1 KB of them JS heap); under the bench's flood, which replaces what the edge closes, the
 * gateway's RSS rose by 12.9–13.9 KB per connection held (garbage not yet collected and the
 * allocator's slack included; scripts/bench_edge.ts prints it). The budget is the latter, rounded
 * down to what the flood's mean held, so the memory bound matches what a flood really costs.
 */
export const BYTES_PER_CONNECTION = 12 * 1024;
/**
 * The fewest connections one address may hold, whatever its share of a small cap: a browser opens
 * six to a host, and a client behind a NAT shares its address with others.
 */
export const MIN_PER_ADDRESS = 32;
/** Above this share of the cap, idle connections are given up, longest idle first. */
export const HIGH_WATER_SHARE = 0.75;

export interface CapacityInput {
  /** The process's soft descriptor limit; null when unknown. */
  openFileLimit: number | null;
  /** Memory the public connections may take (CONNECTION_MEMORY_MB). */
  memoryBytes: number;
  /** Share of the cap one address group may hold, in per cent. */
  perAddressPercent: number;
  /** MAX_CONNECTIONS, when the operator set it. */
  configured?: number;
}

export interface Capacity {
  maxConnections: number;
  maxLinks: number;
  maxPerAddress: number;
  highWater: number;
  /** What set the cap: the descriptors, the memory, or the operator. */
  boundBy: "descriptors" | "memory" | "configured";
  /** The descriptor limit the cap was derived from (the assumed one when unknown). */
  openFiles: number;
  /** Connections the descriptors alone would allow. */
  fitsDescriptors: number;
}

export function capacity(input: CapacityInput): Capacity {
  const openFiles = input.openFileLimit ?? ASSUMED_OPEN_FILE_LIMIT;
  const usable = Math.max(0, openFiles - RESERVED_DESCRIPTORS - SHED_SLOTS);
  // An eighth of the usable descriptors for links, the rest for clients.
  const maxLinks = Math.min(MAX_LINKS, Math.max(1, Math.floor(usable / 8)));
  const fitsDescriptors = Math.max(
    1,
    Math.floor((usable - maxLinks * DESCRIPTORS_PER_LINK) / DESCRIPTORS_PER_CONNECTION),
  );
  const fitsMemory = Math.max(1, Math.floor(input.memoryBytes / BYTES_PER_CONNECTION));
  const [maxConnections, boundBy]: [number, Capacity["boundBy"]] = input.configured !== undefined
    ? [input.configured, "configured"]
    : fitsMemory < fitsDescriptors
    ? [fitsMemory, "memory"]
    : [fitsDescriptors, "descriptors"];
  return {
    maxConnections,
    maxLinks,
    maxPerAddress: Math.min(
      maxConnections,
      Math.max(MIN_PER_ADDRESS, Math.floor(maxConnections * input.perAddressPercent / 100)),
    ),
    highWater: Math.max(1, Math.floor(maxConnections * HIGH_WATER_SHARE)),
    boundBy,
    openFiles,
    fitsDescriptors,
  };
}

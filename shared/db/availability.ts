/**
 * When PostgreSQL goes away (a restart, a failover, a crash): which errors say so, and what a
 * process does about it. A request that needs the database is answered 503 with a Retry-After at
 * once, not 500; the outage is logged once when it starts and once when it ends, with how long it
 * lasted; and while it lasts the database is probed every PROBE_INTERVAL_MS, so that the end is
 * noticed (and logged) as soon as it accepts connections again, whether or not a request comes.
 * Pools reconnect by themselves: postgres.js opens a new connection for the next statement.
 */
import postgres from "postgres";
import type { Logger } from "../log.ts";

/** Errors of the socket under a connection: the server is not there, or went away. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/** postgres.js's own: a connect that timed out, a connection that closed under a statement. */
const CLIENT_CODES = new Set([
  "CONNECT_TIMEOUT",
  // Ours (mod.ts): no connection of its own for a transaction within the connect timeout.
  "RESERVE_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);
/**
 * SQLSTATEs of a server that is going or not yet there: class 08 (connection exception),
 * admin_shutdown (57P01: a fast or immediate shutdown), crash_shutdown (57P02: another backend
 * crashed), cannot_connect_now (57P03: starting up, in recovery) and too_many_connections
 * (53300).
 */
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** Whether `error` means the database cannot be reached now, rather than a fault of a statement. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) {
    return SERVER_CODES.has(error.code) || error.code.startsWith("08");
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (NETWORK_CODES.has(code) || CLIENT_CODES.has(code));
}

/** How often an unavailable database is tried, to notice at once that it is back. */
export const PROBE_INTERVAL_MS = 250;
/** A probe that has not answered in this long failed (a server that hangs is not back). */
const PROBE_TIMEOUT_MS = 2_000;

/** What a 503 for an unavailable database says. */
export interface Unavailable {
  message: string;
  retryAfterSeconds: number;
}

/**
 * One process's view of its database. `failed` is told of every error that means the database
 * cannot be reached (from a request, a relay, a worker); the first starts an outage.
 */
export class DatabaseAvailability {
  #outageSince: number | null = null;
  #failures = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether an outage is going on, as far as this process knows. */
  get down(): boolean {
    return this.#outageSince !== null;
  }

  /** Records a failure that says the database is unavailable, and what to tell the client. */
  failed(error: unknown): Unavailable {
    this.#failures++;
    // A wait for a connection that began in an outage ends in its own time, which may be after
    // the outage did: it is that outage's failure, not the start of another.
    const lingering = (error as { code?: string } | null)?.code === "RESERVE_TIMEOUT";
    if (this.#outageSince === null && !this.#stopped && !lingering) {
      this.#outageSince = this.now();
      this.#failures = 1;
      this.logger.warn("database unavailable", { error: describe(error) });
      this.#schedule();
    }
    return {
      message: "The database is unavailable right now; retry shortly",
      // It is probed four times a second: a client need not wait more than a second to try.
      retryAfterSeconds: 1,
    };
  }

  /** Stops probing (the process is stopping). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    this.#timer = setTimeout(() => void this.#tryProbe(), PROBE_INTERVAL_MS);
  }

  async #tryProbe(): Promise<void> {
    if (this.#stopped || this.#outageSince === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        this.probe(),
        new Promise((_, reject) =>
          timer = setTimeout(() => reject(new Error("timeout")), PROBE_TIMEOUT_MS)
        ),
      ]);
    } catch {
      this.#schedule();
      return;
    } finally {
      clearTimeout(timer);
    }
    const outageMs = this.now() - this.#outageSince;
    this.logger.info("database available again", { outageMs, failures: this.#failures });
    this.#outageSince = null;
    for (const listener of backListeners) listener();
  }
}

/** Called when an outage ends: loops waiting out a backoff try again at once. */
const backListeners = new Set<() => void>();

/** Runs `listener` whenever this process's database comes back; answers how to stop. */
export function onDatabaseBack(listener: () => void): () => void {
  backListeners.add(listener);
  return () => backListeners.delete(listener);
}

/**
 * What a background loop (a relay, a worker, a consumer) does with a failure: the database
 * being gone is the watch's to log, once per outage; anything else is warned of as `message`.
 */
export function loopFailed(
  logger: Logger,
  message: string,
  error: unknown,
  fields: Record<string, unknown> = {},
): void {
  if (databaseUnavailable(error)) {
    logger.debug(message, { ...fields, error: describe(error) });
    return;
  }
  logger.warn(message, { ...fields, error: describe(error) });
}

/** An error as one log field: its code and message, never its query parameters. */
function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

/**
 * The availability of this process's database, once `watchDatabase` has set it up (every
 * process entry does, in openDatabase); answers for errors anywhere in the process.
 */
let processDatabase: DatabaseAvailability | null = null;

export function watchDatabase(probe: () => Promise<unknown>, logger: Logger): DatabaseAvailability {
  processDatabase?.stop();
  processDatabase = new DatabaseAvailability(probe, logger);
  return processDatabase;
}

/**
 * If `error` says the database is unavailable: records it with this process's watch (when there
 * is one) and answers what the client is told; null for any other error.
 */
export function databaseUnavailable(error: unknown): Unavailable | null {
  if (!isDatabaseUnavailable(error)) return null;
  return processDatabase?.failed(error) ??
    { message: "The database is unavailable right now; retry shortly", retryAfterSeconds: 1 };
}

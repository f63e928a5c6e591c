import { Backoff } from "./events/waker.ts";

/**
 * How a supervisor starts again a process that died on its own, and what it says: the launcher's
 * services and gateway, and the embedded PostgreSQL, the same way.
 */

/**
 * Pause before the first restart of a crashed process; it doubles while it keeps crashing. Half a
 * second: with a service's start (~0.7 s) its clients see under 2 s of 503s, while a process that
 * crashes at once is tried at most a few times a second before the pause grows.
 */
export const RESTART_DELAY_MS = 500;
export const RESTART_DELAY_MAX_MS = 30_000;
/** A process that ran this long before dying is restarted at the shortest pause again. */
export const STABLE_MS = 60_000;

export function describeExit(status: Deno.CommandStatus): string {
  return status.signal ? `code ${status.code} (${status.signal})` : `code ${status.code}`;
}

/** Restarts of one process slot: the pause before the next start, and the runs so far. */
export class Restarts {
  readonly #backoff = new Backoff(RESTART_DELAY_MS, RESTART_DELAY_MAX_MS);
  /** Runs so far, the first start included. */
  runs = 1;
  /** The restart waiting out its pause; a stop clears it. */
  timer?: ReturnType<typeof setTimeout>;

  constructor(private readonly name: string) {}

  /** After a run that began at `startedAt` died: counts the next run, answers its pause. */
  next(startedAt: number): number {
    if (Date.now() - startedAt > STABLE_MS) {
      this.#backoff.reset();
      this.runs = 1;
    }
    this.runs++;
    return this.#backoff.next();
  }

  exitedLine(status: Deno.CommandStatus, delayMs: number): string {
    return `${this.name} exited with ${describeExit(status)}; restarting in ${delayMs / 1000} s ` +
      `(attempt ${this.runs})`;
  }

  runningLine(): string {
    return `${this.name} is running again (attempt ${this.runs})`;
  }
}

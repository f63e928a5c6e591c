/**
 * A sleep that a notification can cut short: loops that poll as a safety net wait on it, and
 * LISTEN/NOTIFY callbacks wake them at once. A wake with nobody asleep is remembered, so a
 * notification that lands while the loop is busy is not lost.
 */
export class Waker {
  #pending = false;
  #resolve: ((woken: boolean) => void) | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #settling: (() => void)[] = [];

  wake(): void {
    if (this.#resolve) this.#finish(true);
    else this.#pending = true;
  }

  /**
   * Wakes the loop and resolves once it waits again with no wake pending: it has made at least
   * one full round that started after this call. What a cron tick or a kick awaits, so that an
   * instance started for it does the work before it may be stopped.
   */
  settle(): Promise<void> {
    const settled = new Promise<void>((resolve) => this.#settling.push(resolve));
    this.wake();
    return settled;
  }

  /** Lets every `settle()` go: for a loop that has stopped and will not wait again. */
  release(): void {
    for (const resolve of this.#settling.splice(0)) resolve();
  }

  /** Resolves true when woken (or a wake was pending), false when `ms` ran out. */
  sleep(ms: number): Promise<boolean> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    this.release();
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#timer = setTimeout(() => this.#finish(false), Math.max(0, ms));
    });
  }

  #finish(woken: boolean): void {
    clearTimeout(this.#timer);
    const resolve = this.#resolve;
    this.#resolve = null;
    resolve?.(woken);
  }
}

/** Exponential backoff between failed attempts, capped. */
export class Backoff {
  #current: number;

  constructor(private readonly initialMs: number, private readonly maxMs: number) {
    this.#current = initialMs;
  }

  next(): number {
    const delay = this.#current;
    this.#current = Math.min(this.#current * 2, this.maxMs);
    return delay;
  }

  reset(): void {
    this.#current = this.initialMs;
  }
}

/**
 * The safety net's interval under LISTEN/NOTIFY: `minMs` after activity, doubling with each
 * poll that finds nothing, up to `maxMs`. An idle process then looks a few times a minute
 * instead of every second, and `maxMs` bounds how long a lost notification can go unnoticed.
 */
export class IdlePoll extends Backoff {
  constructor(minMs: number, maxMs: number) {
    super(minMs, Math.max(minMs, maxMs));
  }
}

/** A pause nothing cuts short: lets more work gather before the next batch. */
export function pause(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** The loops' safety-net defaults: the first poll after activity, and the longest idle wait. */
export const POLL_INTERVAL_MS = 1_000;
/**
 * Under the pools' idle_timeout (30 s, shared/db/mod.ts), so that an idle loop's poll finds its
 * connection still open: a new connection (a backend started, its types fetched, the statement
 * prepared again) costs the server several times what the poll does.
 */
export const IDLE_POLL_MAX_MS = 25_000;
/**
 * How long a loop that just did work lets the next notifications gather into one batch. At 5 ms,
 * ~300 writes a second still made batches of one or two events; each batch costs the relay three
 * round trips and a consumer four statements whatever its size. Work after a quiet spell is taken
 * at once: only a loop that just did some waits.
 */
export const GATHER_MS = 20;

/**
 * On demand (no LISTEN), a running instance's loops poll this often after activity, backing off
 * to the second: a kick that found another instance holding a topic's or an outbox's lock reads
 * nothing, and what that holder's batch did not cover is then read within a poll, not at the
 * next kick or tick. One indexed statement a poll, only while the instance runs.
 */
export const ON_DEMAND_POLL_MS = 250;
export const ON_DEMAND_POLL_MAX_MS = 2_000;

/** How every loop (relay, consumer, delivery worker) runs on demand: no LISTEN, short polls. */
export const ON_DEMAND_LOOP = {
  listen: false,
  pollIntervalMs: ON_DEMAND_POLL_MS,
  idlePollMaxMs: ON_DEMAND_POLL_MAX_MS,
} as const;

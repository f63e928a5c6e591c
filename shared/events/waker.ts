/**
 * A sleep that a notification can cut short: loops that poll as a safety net wait on it, and
 * LISTEN/NOTIFY callbacks wake them at once. A wake with nobody asleep is remembered, so a
 * notification that lands while the loop is busy is not lost.
 */
export class Waker {
  #pending = false;
  #resolve: (() => void) | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;

  wake(): void {
    if (this.#resolve) this.#finish();
    else this.#pending = true;
  }

  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#timer = setTimeout(() => this.#finish(), Math.max(0, ms));
    });
  }

  #finish(): void {
    clearTimeout(this.#timer);
    const resolve = this.#resolve;
    this.#resolve = null;
    resolve?.();
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

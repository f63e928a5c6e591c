import type { BucketPolicy } from "./domain/token_bucket.ts";
import {
  FAILED_LOOKUP_POLICY,
  isFull,
  type LookupBudget,
  reserveLookup,
  returnLookup,
} from "./domain/failed_lookups.ts";

/**
 * Address groups remembered at once. An attacker with more addresses than this pushes the
 * oldest out (each of them then starts again with a full bucket, as a new address would), but
 * memory stays a few hundred kilobytes however many addresses take part.
 */
export const FAILED_LOOKUP_MAX_GROUPS = 10_000;

/**
 * The buckets of failed look-ups (domain/failed_lookups.ts), per address group, in this
 * process's memory: a refusal must cost no database query, and a guesser spread over replicas
 * gets each replica's allowance, which is still a bounded number of look-ups per second.
 */
export class FailedLookupLimiter {
  /** In the order of last use, so the oldest is the first to go. */
  #budgets = new Map<string, LookupBudget>();

  constructor(
    private readonly policy: BucketPolicy = FAILED_LOOKUP_POLICY,
    private readonly now: () => number = Date.now,
    private readonly maxGroups: number = FAILED_LOOKUP_MAX_GROUPS,
  ) {}

  /**
   * Takes a token for a look-up by `group`: null when it may go ahead, else the whole seconds
   * until it may (Retry-After).
   */
  take(group: string): number | null {
    const now = this.now();
    const reservation = reserveLookup(this.policy, this.#budgets.get(group), now);
    if (!reservation.admitted) return reservation.retryAfterSeconds;
    this.#keep(group, reservation.budget, now);
    return null;
  }

  /** A look-up that found a valid credential: its token goes back, it was no failure. */
  giveBack(group: string): void {
    const now = this.now();
    this.#keep(group, returnLookup(this.policy, this.#budgets.get(group), now), now);
  }

  /** How many groups are remembered (for tests of the bound). */
  get size(): number {
    return this.#budgets.size;
  }

  #keep(group: string, budget: LookupBudget, now: number): void {
    this.#budgets.delete(group);
    // A full bucket is what a group never seen has: nothing to remember.
    if (isFull(this.policy, budget, now)) return;
    if (this.#budgets.size >= this.maxGroups) {
      this.#budgets.delete(this.#budgets.keys().next().value!);
    }
    this.#budgets.set(group, budget);
  }
}

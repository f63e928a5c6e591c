/**
 * What failed credential look-ups cost a client address group: each takes a token from the
 * group's bucket, and a group whose bucket is empty is not looked up for until it refills. The
 * bucket is the rate limiter's (token_bucket.ts); only the state is kept by the caller, in
 * memory, since a refusal must cost no database query.
 *
 * A look-up takes its token before it is made, so any number of guesses sent at once is held to
 * what the bucket holds, and gives it back when it finds a valid credential: only failures count.
 */
import { type BucketPolicy, refilled, retryAfterSeconds } from "./token_bucket.ts";

/**
 * What a group may fail: 30 look-ups at once, then one every 2 s. A person mistyping, or a
 * client deployed with a revoked key, sees its 401s for as long as it takes to notice; a guesser
 * gets 43,200 guesses a day against secrets of 256 bits, and the database answers none beyond
 * that.
 */
export const FAILED_LOOKUP_POLICY: BucketPolicy = { requestsPerMinute: 30 };

/** A group's bucket: its tokens at a moment (ms since the epoch). */
export interface LookupBudget {
  readonly tokens: number;
  readonly at: number;
}

export type Reservation =
  | { readonly admitted: true; readonly budget: LookupBudget }
  | { readonly admitted: false; readonly retryAfterSeconds: number };

/** The tokens a group holds at `now`; a group never seen holds a full bucket. */
export function tokensAt(
  policy: BucketPolicy,
  budget: LookupBudget | undefined,
  now: number,
): number {
  return budget === undefined
    ? policy.requestsPerMinute
    : refilled(policy, budget.tokens, now - budget.at);
}

/**
 * Takes a token for one look-up: the group's new bucket, or the whole seconds until a token is
 * there again (the Retry-After of the refusal).
 */
export function reserveLookup(
  policy: BucketPolicy,
  budget: LookupBudget | undefined,
  now: number,
): Reservation {
  const tokens = tokensAt(policy, budget, now);
  if (tokens < 1) {
    return { admitted: false, retryAfterSeconds: retryAfterSeconds(policy, tokens) };
  }
  return { admitted: true, budget: { tokens: tokens - 1, at: now } };
}

/** Gives a look-up's token back: it found a valid credential, so it was no failure. */
export function returnLookup(
  policy: BucketPolicy,
  budget: LookupBudget | undefined,
  now: number,
): LookupBudget {
  return {
    tokens: Math.min(policy.requestsPerMinute, tokensAt(policy, budget, now) + 1),
    at: now,
  };
}

/** Whether a bucket is full at `now`, so that forgetting it changes nothing. */
export function isFull(policy: BucketPolicy, budget: LookupBudget, now: number): boolean {
  return tokensAt(policy, budget, now) >= policy.requestsPerMinute;
}

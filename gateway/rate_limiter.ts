import type { Sql } from "@printshop/shared/db";
import type { BucketPolicy, BucketState } from "./domain/token_bucket.ts";
import { takeTokens } from "./store/rate_limits.ts";

/** How long a lease of tokens may be spent locally before it goes back to the shared bucket. */
export const LEASE_LIFETIME_MS = 1_000;
const MAX_LEASES = 10_000;

interface Lease {
  left: number;
  /** Tokens the shared bucket held right after the lease was taken. */
  bucketTokens: number;
  expiresAt: number;
  requestsPerMinute: number;
}

/**
 * The largest lease for a policy: a hundredth of a minute's allowance, so no replica ever holds
 * back more than a sliver of it. Small limits lease one token at a time, which is exact.
 */
export function maxLease(policy: BucketPolicy): number {
  return Math.max(1, Math.floor(policy.requestsPerMinute / 100));
}

/**
 * Admits requests against the shared token buckets. A busy principal takes several tokens per
 * database round trip and spends them locally for up to a second; unspent tokens are handed back
 * with the next round trip. Every admitted request still spent a token of the shared bucket, so
 * the sum over all replicas never exceeds the policy. Lease sizes adapt: a lease used up before
 * it expires doubles the next one, a lease left over halves it.
 */
export class RateLimiter {
  #leases = new Map<string, Lease>();
  #wants = new Map<string, number>();

  constructor(private readonly sql: Sql, private readonly now: () => number = Date.now) {}

  async take(principal: string, policy: BucketPolicy): Promise<BucketState> {
    const now = this.now();
    const lease = this.#leases.get(principal);
    const current = lease !== undefined && lease.expiresAt > now &&
      lease.requestsPerMinute === policy.requestsPerMinute;
    if (current && lease.left > 0) {
      lease.left -= 1;
      return { admitted: true, tokens: lease.bucketTokens + lease.left };
    }
    // Claim an expired lease's leftovers before awaiting, so concurrent calls return them once.
    let giveBack = 0;
    if (lease && !current) {
      giveBack = lease.left;
      lease.left = 0;
    }
    const previousWant = this.#wants.get(principal) ?? 1;
    const want = lease === undefined ? previousWant : current // used up before expiry: busy
      ? Math.min(previousWant * 2, maxLease(policy))
      : Math.max(1, Math.floor(previousWant / 2));
    this.#wants.set(principal, want);
    const result = await takeTokens(this.sql, principal, policy, want, giveBack);
    const extra = Math.max(0, result.granted - 1);
    // Concurrent calls for one principal each bring tokens back: add to a live lease rather
    // than replace it, or the tokens it still holds would be lost.
    const latest = this.#leases.get(principal);
    const after = this.now();
    if (
      latest && latest.expiresAt > after && latest.requestsPerMinute === policy.requestsPerMinute
    ) {
      latest.left += extra;
      latest.bucketTokens = result.tokens;
    } else {
      if (this.#leases.size >= MAX_LEASES) this.#forgetOldest();
      this.#leases.set(principal, {
        left: extra + (latest && latest !== lease ? latest.left : 0),
        bucketTokens: result.tokens,
        expiresAt: after + LEASE_LIFETIME_MS,
        requestsPerMinute: policy.requestsPerMinute,
      });
    }
    return { admitted: result.admitted, tokens: result.tokens + extra };
  }

  /** Drops the oldest leases; their unspent tokens refill anyway, so this is only stricter. */
  #forgetOldest(): void {
    let drop = Math.ceil(MAX_LEASES / 10);
    for (const key of this.#leases.keys()) {
      this.#leases.delete(key);
      this.#wants.delete(key);
      if (--drop === 0) break;
    }
  }
}

/**
 * Token bucket arithmetic for the rate limiter. A bucket holds up to `capacity` tokens (a
 * minute's allowance, so `RateLimit-Policy: q=<per minute>;w=60` describes it exactly) and
 * refills continuously at capacity / 60 tokens per second; a request takes one token.
 */
export interface BucketPolicy {
  /** Requests per minute, which is also the burst (the bucket's capacity). */
  requestsPerMinute: number;
}

export interface BucketState {
  /** Tokens left after this request was admitted or refused. */
  tokens: number;
  admitted: boolean;
}

export function refillPerSecond(policy: BucketPolicy): number {
  return policy.requestsPerMinute / 60;
}

/** The tokens a bucket holds `elapsedMs` after it held `tokens`: refilled, never over capacity. */
export function refilled(policy: BucketPolicy, tokens: number, elapsedMs: number): number {
  const gained = Math.max(0, elapsedMs) / 1000 * refillPerSecond(policy);
  return Math.min(policy.requestsPerMinute, tokens + gained);
}

/** Whole seconds until the bucket holds a token again; never earlier than that moment. */
export function retryAfterSeconds(policy: BucketPolicy, tokens: number): number {
  if (tokens >= 1) return 0;
  return Math.ceil((1 - tokens) / refillPerSecond(policy));
}

/** Whole seconds until the bucket is full again, the `t` of the RateLimit field. */
export function secondsUntilFull(policy: BucketPolicy, tokens: number): number {
  const missing = Math.max(0, policy.requestsPerMinute - tokens);
  return Math.ceil(missing / refillPerSecond(policy));
}

/** The IETF RateLimit fields for a response. */
export function rateLimitHeaders(
  policy: BucketPolicy,
  state: BucketState,
): { "RateLimit-Policy": string; "RateLimit": string } {
  return {
    "RateLimit-Policy": `"default";q=${policy.requestsPerMinute};w=60`,
    "RateLimit": `"default";r=${Math.max(0, Math.floor(state.tokens))};t=${
      secondsUntilFull(policy, state.tokens)
    }`,
  };
}

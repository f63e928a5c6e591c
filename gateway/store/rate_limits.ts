import type { Queryable } from "@printshop/shared/db";
import { type BucketPolicy, type BucketState, refillPerSecond } from "../domain/token_bucket.ts";

/**
 * Takes up to `want` tokens from a principal's bucket in a single statement: refill for the
 * time passed, add back `giveBack` unspent tokens of an earlier lease, then hand out as many
 * whole tokens as are there, at most `want`. The row lock of the upsert serialises concurrent
 * requests of the same principal across every gateway replica, so what they are granted in sum
 * never exceeds the policy.
 */
export async function takeTokens(
  sql: Queryable,
  principal: string,
  policy: BucketPolicy,
  want = 1,
  giveBack = 0,
): Promise<BucketState & { granted: number }> {
  const capacity = policy.requestsPerMinute;
  const rate = refillPerSecond(policy);
  // One clock reading for the whole statement, so every column agrees.
  const [row] = await sql<{ tokens: number; granted: number }[]>`
    WITH clock AS (SELECT clock_timestamp() AS now)
    INSERT INTO rate_limit_buckets AS b (principal, tokens, refreshed_at, admitted, granted)
    SELECT ${principal}, ${capacity}::float8 - least(${want}::int, ${capacity}::int), clock.now,
      true, least(${want}::int, ${capacity}::int) FROM clock
    ON CONFLICT (principal) DO UPDATE SET
      (tokens, granted, admitted, refreshed_at) = (
        SELECT available - handed, handed, handed >= 1, now
        FROM (
          SELECT available, now,
            CASE WHEN available >= 1 THEN least(${want}::int, floor(available)::int) ELSE 0 END AS handed
          FROM (
            SELECT clock.now, least(${capacity}::float8, b.tokens + ${giveBack}::float8 +
              greatest(0, extract(epoch FROM clock.now - b.refreshed_at)) * ${rate}::float8)
              AS available
            FROM clock
          ) refilled
        ) decided
      )
    RETURNING tokens, granted`;
  return { tokens: row!.tokens, granted: row!.granted, admitted: row!.granted >= 1 };
}

/** Takes one token: the request is admitted when it got it. */
export async function takeToken(
  sql: Queryable,
  principal: string,
  policy: BucketPolicy,
): Promise<BucketState> {
  const { tokens, admitted } = await takeTokens(sql, principal, policy, 1);
  return { tokens, admitted };
}

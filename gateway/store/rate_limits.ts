import type { Queryable } from "@printshop/shared/db";
import { type BucketPolicy, type BucketState, refillPerSecond } from "../domain/token_bucket.ts";

/**
 * Takes one token from a principal's bucket in a single statement: refill for the time passed,
 * then take a token if one is there. The row lock of the upsert serialises concurrent requests of
 * the same principal across every gateway replica, so their sum never exceeds the policy.
 */
export async function takeToken(
  sql: Queryable,
  principal: string,
  policy: BucketPolicy,
): Promise<BucketState> {
  const capacity = policy.requestsPerMinute;
  const rate = refillPerSecond(policy);
  // One clock reading for the whole statement, so `tokens` and `admitted` agree.
  const [row] = await sql<{ tokens: number; admitted: boolean }[]>`
    WITH clock AS (SELECT clock_timestamp() AS now)
    INSERT INTO rate_limit_buckets AS b (principal, tokens, refreshed_at, admitted)
    SELECT ${principal}, ${capacity - 1}::float8, clock.now, true FROM clock
    ON CONFLICT (principal) DO UPDATE SET
      tokens = (
        SELECT CASE WHEN available >= 1 THEN available - 1 ELSE available END
        FROM (SELECT least(${capacity}::float8, b.tokens + greatest(0,
          extract(epoch FROM clock.now - b.refreshed_at)) * ${rate}::float8) AS available
          FROM clock) a
      ),
      admitted = (
        SELECT available >= 1
        FROM (SELECT least(${capacity}::float8, b.tokens + greatest(0,
          extract(epoch FROM clock.now - b.refreshed_at)) * ${rate}::float8) AS available
          FROM clock) a
      ),
      refreshed_at = (SELECT now FROM clock)
    RETURNING tokens, admitted`;
  return { tokens: row!.tokens, admitted: row!.admitted };
}

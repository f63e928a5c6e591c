import type { Queryable } from "@printshop/shared/db";

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export type ClaimOutcome =
  | { kind: "claimed" }
  | { kind: "reused" }
  | { kind: "in_flight" }
  | { kind: "completed"; response: StoredResponse };

export interface ClaimRequest {
  principal: string;
  key: string;
  fingerprint: Uint8Array;
  /** How long the claim holds if this gateway dies before finishing. */
  lockMs: number;
  /** How long a completed record is replayed. */
  retentionMs: number;
}

/**
 * Claims a key for one request. Exactly one of any number of concurrent claims wins: the
 * INSERT … ON CONFLICT takes the row lock, and the losers read what the winner wrote. An
 * expired record, or a lapsed claim for the same request, is taken over.
 */
export async function claimKey(sql: Queryable, request: ClaimRequest): Promise<ClaimOutcome> {
  const claimed = await sql`
    INSERT INTO idempotency_records AS r
      (principal, key, fingerprint, state, locked_until, expires_at)
    VALUES (${request.principal}, ${request.key}, ${request.fingerprint}, 'in_flight',
      clock_timestamp() + ${request.lockMs} * interval '1 millisecond',
      clock_timestamp() + ${request.retentionMs} * interval '1 millisecond')
    ON CONFLICT (principal, key) DO UPDATE SET
      fingerprint = excluded.fingerprint,
      state = 'in_flight',
      locked_until = excluded.locked_until,
      expires_at = excluded.expires_at,
      response_status = NULL,
      response_headers = NULL,
      response_body = NULL,
      created_at = clock_timestamp()
    WHERE r.expires_at <= clock_timestamp()
       OR (r.state = 'in_flight' AND r.locked_until <= clock_timestamp()
           AND r.fingerprint = excluded.fingerprint)
    RETURNING 1`;
  if (claimed.length > 0) return { kind: "claimed" };
  const [row] = await sql<{
    fingerprint: Uint8Array;
    state: "in_flight" | "completed";
    response_status: number | null;
    response_headers: Record<string, string> | null;
    response_body: Uint8Array | null;
  }[]>`
    SELECT fingerprint, state, response_status, response_headers, response_body
    FROM idempotency_records WHERE principal = ${request.principal} AND key = ${request.key}`;
  // The row vanished between the two statements (purged or released): claim again.
  if (!row) return await claimKey(sql, request);
  if (!sameBytes(new Uint8Array(row.fingerprint), request.fingerprint)) return { kind: "reused" };
  if (row.state === "in_flight") return { kind: "in_flight" };
  return {
    kind: "completed",
    response: {
      status: row.response_status!,
      headers: row.response_headers ?? {},
      body: new Uint8Array(row.response_body ?? new Uint8Array()),
    },
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export async function completeKey(
  sql: Queryable,
  principal: string,
  key: string,
  response: StoredResponse,
): Promise<void> {
  await sql`
    UPDATE idempotency_records SET state = 'completed', response_status = ${response.status},
      response_headers = ${sql.json(response.headers)}, response_body = ${response.body}
    WHERE principal = ${principal} AND key = ${key} AND state = 'in_flight'`;
}

/** Gives a key back (after a 5xx or a failure), so a retry can run the request. */
export async function releaseKey(sql: Queryable, principal: string, key: string): Promise<void> {
  await sql`
    DELETE FROM idempotency_records
    WHERE principal = ${principal} AND key = ${key} AND state = 'in_flight'`;
}

/**
 * Deletes expired records in small batches, so purging never holds many row locks at once or
 * competes with requests for long. Returns how many went.
 */
export async function purgeExpired(sql: Queryable, batchSize = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await sql`
      DELETE FROM idempotency_records WHERE ctid IN (
        SELECT ctid FROM idempotency_records WHERE expires_at <= clock_timestamp()
        LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)`;
    total += deleted.count;
    if (deleted.count < batchSize) return total;
  }
}

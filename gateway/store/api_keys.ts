import {
  platformRead,
  platformTransaction,
  type Queryable,
  read,
  type Sql,
  transaction,
  withOrganization,
} from "@printshop/shared/db";
import { writeEvent } from "@printshop/shared/outbox";
import { uuidv7 } from "@printshop/shared/ids";
import { generateApiKey, hashSecret } from "../domain/api_key.ts";
import { notFound } from "@printshop/shared/http";

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string | null;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string | null;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  scopes: row.scopes,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at?.toISOString() ?? null,
});

/** Issues a key; the returned token is the only time the secret exists outside the caller. */
export async function createApiKey(
  sql: Queryable,
  organizationId: string,
  name: string | null,
  scopes: string[],
): Promise<{ record: ApiKeyRecord; token: string }> {
  const key = generateApiKey();
  const hash = await hashSecret(key.secret);
  const [row] = await withOrganization(
    organizationId,
    () =>
      transaction(sql, (tx) =>
        tx<ApiKeyRow[]>`
        INSERT INTO api_keys (id, organization_id, name, lookup, secret_hash, scopes)
        VALUES (${uuidv7()}, ${organizationId}, ${name}, ${key.lookup}, ${hash}, ${scopes})
        RETURNING id, organization_id, name, scopes, created_at, revoked_at`),
  );
  return { record: toRecord(row!), token: key.token };
}

export interface KeyForAuth {
  id: string;
  organizationId: string;
  organizationName: string;
  requestsPerMinute: number | null;
  scopes: string[];
  secretHash: Uint8Array;
}

/**
 * The key a token names, whichever organisation holds it: the organisation is what this look-up
 * finds out, so it reads past the tenant policy (platformRead), by the token's public lookup.
 */
export async function findActiveKey(sql: Sql, lookup: string): Promise<KeyForAuth | null> {
  const [row] = await platformRead(sql, (q) =>
    q<{
      id: string;
      organization_id: string;
      organization_name: string;
      requests_per_minute: number | null;
      scopes: string[];
      secret_hash: Uint8Array;
    }[]>`
    SELECT k.id, k.organization_id, o.name AS organization_name, o.requests_per_minute,
           k.scopes, k.secret_hash
    FROM api_keys k JOIN organizations o ON o.id = k.organization_id
    WHERE k.lookup = ${lookup} AND k.revoked_at IS NULL`);
  if (!row) return null;
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    requestsPerMinute: row.requests_per_minute,
    scopes: row.scopes,
    secretHash: new Uint8Array(row.secret_hash),
  };
}

export async function listApiKeys(sql: Sql, organizationId: string): Promise<ApiKeyRecord[]> {
  const rows = await withOrganization(organizationId, () =>
    read(sql, (q) =>
      q<ApiKeyRow[]>`
        SELECT id, organization_id, name, scopes, created_at, revoked_at FROM api_keys
        WHERE organization_id = ${organizationId} ORDER BY id`));
  return rows.map(toRecord);
}

/**
 * Revokes a key (404 when there is none) and, on the first revocation only, records
 * `api_key.revoked` in the same transaction, so the webhooks service stops delivering to the
 * key's subscriptions. Revoking twice keeps the first revocation time and writes no second event:
 * the row is locked before it is read, so two revocations at once cannot both see it unrevoked.
 * The admin API names the key alone, so the key is found across organisations
 * (platformTransaction).
 */
export async function revokeApiKey(sql: Sql, id: string): Promise<ApiKeyRecord> {
  return await platformTransaction(sql, async (tx) => {
    const [before] = await tx<{ revoked: boolean }[]>`
      SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = ${id} FOR UPDATE`;
    if (!before) throw notFound("API key", id);
    const [row] = await tx<ApiKeyRow[]>`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}
      RETURNING id, organization_id, name, scopes, created_at, revoked_at`;
    const record = toRecord(row!);
    if (!before.revoked) {
      await writeEvent(tx, {
        organizationId: record.organizationId,
        type: "api_key.revoked",
        aggregateId: record.id,
        payload: { id: record.id, organizationId: record.organizationId },
      });
    }
    return record;
  });
}

import { isScope, type Scope } from "@printshop/shared/scopes";
import {
  type Queryable,
  read,
  type Sql,
  transaction,
  withOrganization,
} from "@printshop/shared/db";
import { writeEvent } from "@printshop/shared/outbox";
import { uuidv7 } from "@printshop/shared/ids";
import { base64Url, hashSecret } from "../domain/api_key.ts";
import { notFound } from "@printshop/shared/http";

export interface PartnerApp {
  id: string;
  name: string;
  clientId: string;
  scopes: string[];
  createdAt: string;
}

export interface PartnerGrant {
  appId: string;
  organizationId: string;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

const CLIENT_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function newClientId(): string {
  const out: string[] = [];
  while (out.length < 20) {
    for (const byte of crypto.getRandomValues(new Uint8Array(40))) {
      // 252 = 36 * 7: rejecting larger bytes keeps every character equally likely.
      if (byte < 252 && out.length < 20) out.push(CLIENT_ID_ALPHABET[byte % 36]!);
    }
  }
  return `pca_${out.join("")}`;
}

/** Registers an app; the secret exists outside this call only in its return value. */
export async function createPartnerApp(
  sql: Queryable,
  name: string,
  scopes: string[],
): Promise<{ app: PartnerApp; clientSecret: string }> {
  const clientSecret = `pcs_${base64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const [row] = await sql<{ id: string; client_id: string; created_at: Date }[]>`
    INSERT INTO partner_apps (id, name, client_id, secret_hash, scopes)
    VALUES (${uuidv7()}, ${name}, ${newClientId()}, ${await hashSecret(clientSecret)}, ${scopes})
    RETURNING id, client_id, created_at`;
  return {
    app: {
      id: row!.id,
      name,
      clientId: row!.client_id,
      scopes,
      createdAt: row!.created_at.toISOString(),
    },
    clientSecret,
  };
}

/** An app that is not revoked; 404 otherwise. */
export async function findPartnerAppById(sql: Queryable, id: string): Promise<PartnerApp> {
  const [row] = await sql<
    { id: string; name: string; client_id: string; scopes: string[]; created_at: Date }[]
  >`SELECT id, name, client_id, scopes, created_at FROM partner_apps
    WHERE id = ${id} AND revoked_at IS NULL`;
  if (!row) throw notFound("Partner app", id);
  return {
    id: row.id,
    name: row.name,
    clientId: row.client_id,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
  };
}

export interface PartnerAppForAuth {
  id: string;
  scopes: string[];
  secretHash: Uint8Array;
}

export async function findActivePartnerApp(
  sql: Queryable,
  clientId: string,
): Promise<PartnerAppForAuth | null> {
  const [row] = await sql<{ id: string; scopes: string[]; secret_hash: Uint8Array }[]>`
    SELECT id, scopes, secret_hash FROM partner_apps
    WHERE client_id = ${clientId} AND revoked_at IS NULL`;
  return row
    ? { id: row.id, scopes: row.scopes, secretHash: new Uint8Array(row.secret_hash) }
    : null;
}

/**
 * Records (or replaces) an organisation's grant to an app and, in the same transaction,
 * `partner_grant.updated` with what the app may now do for the organisation (the app's scopes ∩
 * the grant's), so the webhooks service narrows the app's subscriptions there when the grant
 * loses a scope, and lets them resume when it regains one. 404 when there is no such app (or it
 * was revoked).
 */
export async function upsertGrant(
  sql: Sql,
  appId: string,
  organizationId: string,
  scopes: string[],
): Promise<PartnerGrant> {
  return await withOrganization(organizationId, () =>
    transaction(sql, async (tx) => {
      // FOR SHARE: the app's scopes cannot change under the event this transaction records.
      const [app] = await tx<{ scopes: string[] }[]>`
      SELECT scopes FROM partner_apps WHERE id = ${appId} AND revoked_at IS NULL FOR SHARE`;
      if (!app) throw notFound("Partner app", appId);
      const [row] = await tx<{ created_at: Date; updated_at: Date }[]>`
      INSERT INTO partner_grants (app_id, organization_id, scopes)
      VALUES (${appId}, ${organizationId}, ${scopes})
      ON CONFLICT (app_id, organization_id)
        DO UPDATE SET scopes = excluded.scopes, updated_at = now()
      RETURNING created_at, updated_at`;
      await writeEvent(tx, {
        organizationId,
        type: "partner_grant.updated",
        aggregateId: appId,
        payload: {
          appId,
          organizationId,
          // Stored scopes were checked when the app was made; isScope narrows them to the type.
          scopes: app.scopes.filter((s): s is Scope => isScope(s) && scopes.includes(s)),
        },
      });
      return {
        appId,
        organizationId,
        scopes,
        createdAt: row!.created_at.toISOString(),
        updatedAt: row!.updated_at.toISOString(),
      };
    }));
}

export interface GrantForAuth {
  scopes: string[];
  organizationName: string;
  requestsPerMinute: number | null;
}

export async function findGrant(
  sql: Sql,
  appId: string,
  organizationId: string,
): Promise<GrantForAuth | null> {
  const [row] = await withOrganization(
    organizationId,
    () =>
      read(sql, (q) =>
        q<{ scopes: string[]; name: string; requests_per_minute: number | null }[]>`
        SELECT g.scopes, o.name, o.requests_per_minute
        FROM partner_grants g JOIN organizations o ON o.id = g.organization_id
        WHERE g.app_id = ${appId} AND g.organization_id = ${organizationId}`),
  );
  return row
    ? { scopes: row.scopes, organizationName: row.name, requestsPerMinute: row.requests_per_minute }
    : null;
}

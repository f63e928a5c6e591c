import type { Queryable, Sql } from "@printshop/shared/db";
import { isUniqueViolation } from "@printshop/shared/db";
import type { CredentialKind } from "@printshop/shared/internal-context";
import type { WebhookSubscription } from "@printshop/shared/contracts";
import type { SecretBox } from "../delivery/secret_box.ts";
import { generateSigningSecret } from "../delivery/signing.ts";
import { EVENT_LOG_LOCK } from "./events.ts";

/** Who owns a subscription: the credential that made it, within one organisation. */
export interface Owner {
  organizationId: string;
  credentialKind: CredentialKind;
  credentialId: string;
}

/** How long a rotated-out secret keeps signing deliveries. */
export const OLD_SECRET_VALIDITY_HOURS = 48;

interface SubscriptionRow {
  id: string;
  event_type: string;
  url: string;
  includes_costs: boolean;
  created_at: Date;
  secret_rotated_at: Date | null;
  credential_revoked_at: Date | null;
}

const COLUMNS = "id, event_type, url, includes_costs, created_at, secret_rotated_at, " +
  "credential_revoked_at";

function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    event: row.event_type,
    url: row.url,
    includesCosts: row.includes_costs,
    active: row.credential_revoked_at === null,
    createdAt: row.created_at.toISOString(),
    secretRotatedAt: row.secret_rotated_at?.toISOString() ?? null,
  };
}

export async function listSubscriptions(
  sql: Queryable,
  owner: Owner,
): Promise<WebhookSubscription[]> {
  const rows = await sql<SubscriptionRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM subscriptions
    WHERE organization_id = ${owner.organizationId}
      AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}
    ORDER BY created_at, id`;
  return rows.map(toSubscription);
}

export async function findSubscription(
  sql: Queryable,
  owner: Owner,
  id: string,
): Promise<WebhookSubscription | null> {
  const [row] = await sql<SubscriptionRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM subscriptions
    WHERE id = ${id} AND organization_id = ${owner.organizationId}
      AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}`;
  return row ? toSubscription(row) : null;
}

async function findByTarget(
  sql: Queryable,
  owner: Owner,
  event: string,
  url: string,
): Promise<WebhookSubscription | null> {
  const [row] = await sql<SubscriptionRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM subscriptions
    WHERE organization_id = ${owner.organizationId}
      AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}
      AND event_type = ${event} AND url = ${url}`;
  return row ? toSubscription(row) : null;
}

export type SubscribeResult =
  | { created: true; subscription: WebhookSubscription & { secret: string } }
  | { created: false; subscription: WebhookSubscription };

/**
 * Subscribes, or finds the subscription this credential already has for the same event and URL
 * (then without its secret, which is never shown twice). Concurrent identical calls meet at the
 * unique index, and the loser answers with the winner's subscription.
 */
export async function subscribe(
  sql: Sql,
  box: SecretBox,
  owner: Owner,
  input: { event: string; url: string; includesCosts: boolean },
): Promise<SubscribeResult> {
  const existing = await findByTarget(sql, owner, input.event, input.url);
  if (existing) return { created: false, subscription: existing };
  const secret = generateSigningSecret();
  const sealed = await box.seal(secret);
  try {
    const subscription = await sql.begin(async (tx) => {
      const [row] = await tx<SubscriptionRow[]>`
        INSERT INTO subscriptions
          (organization_id, credential_kind, credential_id, event_type, url, includes_costs)
        VALUES (${owner.organizationId}, ${owner.credentialKind}, ${owner.credentialId},
                ${input.event}, ${input.url}, ${input.includesCosts})
        RETURNING ${tx.unsafe(COLUMNS)}`;
      await tx`
        INSERT INTO signing_secrets (subscription_id, sealed) VALUES (${row!.id}, ${sealed})`;
      return toSubscription(row!);
    });
    return { created: true, subscription: { ...subscription, secret } };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await findByTarget(sql, owner, input.event, input.url);
    if (!winner) throw error;
    return { created: false, subscription: winner };
  }
}

/** Deletes a subscription with its secrets and deliveries; false when there was none. */
export async function unsubscribe(sql: Queryable, owner: Owner, id: string): Promise<boolean> {
  const rows = await sql`
    DELETE FROM subscriptions
    WHERE id = ${id} AND organization_id = ${owner.organizationId}
      AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}
    RETURNING id`;
  return rows.length > 0;
}

/**
 * Issues a new current secret. The one it replaces keeps signing for 48 hours; secrets that
 * were already on their way out keep their own (earlier) expiry.
 */
export async function rotateSecret(
  sql: Sql,
  box: SecretBox,
  owner: Owner,
  id: string,
): Promise<(WebhookSubscription & { secret: string; previousSecretExpiresAt: string }) | null> {
  const secret = generateSigningSecret();
  const sealed = await box.seal(secret);
  return await sql.begin(async (tx) => {
    const [row] = await tx<SubscriptionRow[]>`
      UPDATE subscriptions SET secret_rotated_at = now()
      WHERE id = ${id} AND organization_id = ${owner.organizationId}
        AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}
      RETURNING ${tx.unsafe(COLUMNS)}`;
    if (!row) return null;
    const [expiry] = await tx<{ expires_at: Date }[]>`
      UPDATE signing_secrets
      SET expires_at = now() + make_interval(hours => ${OLD_SECRET_VALIDITY_HOURS})
      WHERE subscription_id = ${id} AND expires_at IS NULL
      RETURNING expires_at`;
    await tx`INSERT INTO signing_secrets (subscription_id, sealed) VALUES (${id}, ${sealed})`;
    await tx`
      DELETE FROM signing_secrets WHERE subscription_id = ${id} AND expires_at <= now()`;
    return {
      ...toSubscription(row),
      secret,
      previousSecretExpiresAt: (expiry?.expires_at ?? new Date()).toISOString(),
    };
  });
}

/** Secrets that sign a delivery now, newest first. */
export async function signingSecrets(
  sql: Queryable,
  box: SecretBox,
  subscriptionId: string,
): Promise<string[]> {
  const rows = await sql<{ sealed: Uint8Array }[]>`
    SELECT sealed FROM signing_secrets
    WHERE subscription_id = ${subscriptionId} AND (expires_at IS NULL OR expires_at > now())
    ORDER BY created_at DESC, id DESC`;
  return await Promise.all(rows.map((r) => box.open(new Uint8Array(r.sealed))));
}

/**
 * Stops a revoked tenant key's subscriptions; what was still queued for them fails. It takes the
 * lock `recordEvents` holds, so no delivery for the key can be queued between the two steps.
 */
export async function revokeCredential(sql: Sql, apiKeyId: string): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${EVENT_LOG_LOCK}))`;
    const stopped = await tx<{ id: string }[]>`
      UPDATE subscriptions SET credential_revoked_at = now()
      WHERE credential_kind = 'tenant_key' AND credential_id = ${apiKeyId}
        AND credential_revoked_at IS NULL
      RETURNING id`;
    if (stopped.length > 0) {
      await tx`
        UPDATE deliveries
        SET status = 'failed', next_attempt_at = NULL, last_failure_reason = 'credential revoked'
        WHERE subscription_id = ANY(${stopped.map((s) => s.id)})
          AND status IN ('pending', 'retrying')`;
    }
    return stopped.length;
  });
}

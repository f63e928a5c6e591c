import {
  type Fragment,
  oneStatement,
  type Queryable,
  read,
  type Sql,
  transaction,
} from "@printshop/shared/db";
import { isUniqueViolation } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import type { Caller } from "@printshop/shared/internal-context";
import { EVENT_DEFINITIONS, eventDefinition } from "@printshop/shared/events";
import { COSTS_READ } from "@printshop/shared/scopes";
import { WEBHOOK_SECRET_OVERLAP_HOURS } from "@printshop/shared/limits";
import { conflict, notFound } from "@printshop/shared/http";
import {
  ListWebhooksQuery,
  type WEBHOOK_SORT_FIELDS,
  type WebhookSubscription,
} from "@printshop/shared/contracts/webhooks";
import type { FieldTable } from "@printshop/shared/db/fields";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import type { SecretBox } from "../delivery/secret_box.ts";
import { generateSigningSecret } from "../delivery/signing.ts";
import { EVENT_LOG_LOCK } from "./events.ts";

/** Who owns a subscription: the credential that made it, within one organisation. */
export type Owner = Caller & { organizationId: string };

/**
 * The subscriptions table: the fields of WebhookSubscription it holds, in the order the resource
 * shows them (`active`, computed, goes after `includesCosts`).
 */
const SUBSCRIPTIONS = defineTable({
  name: "subscriptions",
  tenant: true,
  noun: "Webhook",
  columns: {
    id: col.uuid(),
    event: col.text().named("event_type").filterable(),
    url: col.text().filterable(),
    includesCosts: col.boolean().filterable(),
    // Computed in SQL (ACTIVE), with the same expression its filter uses.
    active: col.computed<boolean>(),
    createdAt: col.timestamp().filterable(),
    secretRotatedAt: col.timestamp().nullable(),
  },
});

/** Whether deliveries go out: neither the credential revoked nor the read scope withdrawn. */
const ACTIVE = "(credential_revoked_at IS NULL AND scope_withdrawn_at IS NULL)";

/** What a subscription is read with: its columns and whether it is active. */
const COLUMNS = `${SUBSCRIPTIONS.select}, ${ACTIVE} AS active`;

type SubscriptionRow = RowOf<typeof SUBSCRIPTIONS> & { active: boolean };

function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return SUBSCRIPTIONS.read(row, { active: row.active });
}

/** The subscription list's fields: what `filters` may name, and what `sortField` orders on. */
export const SUBSCRIPTION_FIELDS = SUBSCRIPTIONS.fields(undefined, {
  active: { type: "boolean", column: ACTIVE },
}) satisfies FieldTable<typeof WEBHOOK_SORT_FIELDS[number]>;

export const SUBSCRIPTION_LIST = listSpec(ListWebhooksQuery, {
  from: "subscriptions",
  select: COLUMNS,
  fields: SUBSCRIPTION_FIELDS,
  order: { field: "createdAt", direction: "asc" },
});

/** The owner's own subscriptions, and nobody else's. */
export function ownedBy(sql: Queryable, owner: Owner): Fragment {
  return sql`organization_id = ${owner.organizationId}
    AND credential_kind = ${owner.credentialKind} AND credential_id = ${owner.credentialId}`;
}

/** One page of the owner's subscriptions; oldest first unless a sort is asked for. */
export async function listSubscriptions(
  sql: Queryable,
  owner: Owner,
  query: ListWebhooksQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<WebhookSubscription>> {
  return await offsetPage(
    sql,
    SUBSCRIPTION_LIST,
    { where: ownedBy(sql, owner), query, pageSizeMax },
    (rows: SubscriptionRow[]) => rows.map(toSubscription),
  );
}

/** One of the owner's subscriptions; another credential's is a 404 like a missing one. */
export async function findSubscription(
  sql: Queryable,
  owner: Owner,
  id: string,
): Promise<WebhookSubscription> {
  const [row] = await read(sql, (q) =>
    q<SubscriptionRow[]>`
      SELECT ${q.unsafe(COLUMNS)} FROM subscriptions WHERE id = ${id} AND ${ownedBy(q, owner)}`);
  if (!row) throw notFound("Webhook", id);
  return toSubscription(row);
}

async function findByTarget(
  sql: Queryable,
  owner: Owner,
  event: string,
  url: string,
): Promise<WebhookSubscription | null> {
  const [row] = await read(sql, (q) =>
    q<SubscriptionRow[]>`
      SELECT ${q.unsafe(COLUMNS)} FROM subscriptions
      WHERE ${ownedBy(q, owner)} AND event_type = ${event} AND url = ${url}`);
  return row ? toSubscription(row) : null;
}

export type SubscribeResult =
  | { created: true; subscription: WebhookSubscription & { secret: string } }
  | { created: false; subscription: WebhookSubscription };

/**
 * Serialises, for the rest of the transaction, what changes a credential's rights here
 * (revokeCredential, applyPartnerGrant) with the subscriptions the credential makes (subscribe):
 * a subscription is made either before the change, which then reaches it, or after, and starts
 * from what the change stored. Without it, each would miss the other's uncommitted row.
 */
async function lockCredential(tx: Queryable, owner: Owner): Promise<void> {
  const credential = `${owner.organizationId}:${owner.credentialKind}:${owner.credentialId}`;
  await tx`
    SELECT pg_advisory_xact_lock(hashtext('webhooks.credential'), hashtext(${credential}))`;
}

/**
 * Subscribes, or finds the subscription this credential already has for the same event and URL
 * (then without its secret, which is never shown twice). Concurrent identical calls meet at the
 * unique index, and the loser answers with the winner's subscription.
 *
 * The gateway lets a credential through on what it knew a moment ago (its auth cache, a request
 * in flight), so the call may come after this service stopped the credential: a revoked key, or a
 * partner grant that no longer gives the event area's read scope or costs.read. The subscription
 * then starts as its siblings were left (inactive; without cost fields), or it would deliver for
 * good to a credential that lost the right to receive.
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
  const readScope = eventDefinition(input.event)?.readScope ?? null;
  for (;;) {
    const result = await transaction(sql, async (tx): Promise<SubscribeResult | null> => {
      await lockCredential(tx, owner);
      const { organizationId, credentialKind, credentialId } = owner;
      const [row] = await tx<SubscriptionRow[]>`
        INSERT INTO subscriptions
          (organization_id, credential_kind, credential_id, event_type, url, includes_costs,
           credential_revoked_at, scope_withdrawn_at)
        SELECT ${organizationId}, ${credentialKind}, ${credentialId}, ${input.event}, ${input.url},
          ${input.includesCosts} AND (g.scopes IS NULL OR ${COSTS_READ} = ANY(g.scopes)),
          r.revoked_at,
          CASE WHEN NOT (${readScope}::text = ANY(g.scopes)) THEN now() END
        FROM (VALUES (1)) AS one (n)
          LEFT JOIN revoked_credentials r ON r.organization_id = ${organizationId}
            AND r.credential_kind = ${credentialKind} AND r.credential_id = ${credentialId}
          LEFT JOIN partner_grant_versions g ON ${credentialKind}::text = 'partner'
            AND g.organization_id = ${organizationId} AND g.app_id = ${credentialId}
        ON CONFLICT (organization_id, credential_kind, credential_id, event_type, url) DO NOTHING
        RETURNING ${tx.unsafe(COLUMNS)}`;
      if (!row) {
        // Another call made it first. Null only when that one was deleted since: try again.
        const winner = await findByTarget(tx, owner, input.event, input.url);
        return winner ? { created: false, subscription: winner } : null;
      }
      await tx`
        INSERT INTO signing_secrets (organization_id, subscription_id, sealed)
        VALUES (${organizationId}, ${row.id}, ${sealed})`;
      return { created: true, subscription: { ...toSubscription(row), secret } };
    });
    if (result) return result;
  }
}

/**
 * Points a subscription at another URL. Its secrets and history stay, and deliveries still
 * queued go to the new URL. The owner may not end up with two subscriptions for one event and
 * URL (409 naming the other one). Should the other one go (deleted, or pointed elsewhere) between
 * the refusal and the look for it, the change is tried again rather than answered with the
 * refusal's raw error.
 */
export async function updateSubscriptionUrl(
  sql: Sql,
  owner: Owner,
  id: string,
  url: string,
): Promise<WebhookSubscription> {
  for (let attempt = 1;; attempt++) {
    try {
      const [row] = await oneStatement(sql, (tx) =>
        tx<SubscriptionRow[]>`
          UPDATE subscriptions SET url = ${url}
          WHERE id = ${id} AND ${ownedBy(tx, owner)}
          RETURNING ${tx.unsafe(COLUMNS)}`);
      if (!row) throw notFound("Webhook", id);
      return toSubscription(row);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const [other] = await read(sql, (q) =>
        q<{ id: string }[]>`
          SELECT s.id FROM subscriptions s JOIN subscriptions mine ON mine.id = ${id}
          WHERE s.organization_id = mine.organization_id
            AND s.credential_kind = mine.credential_kind AND s.credential_id = mine.credential_id
            AND s.event_type = mine.event_type AND s.url = ${url} AND s.id <> mine.id`);
      if (other) {
        throw conflict(
          `Webhook "${other.id}" already sends this event to that URL; delete one of the two`,
        );
      }
      if (attempt >= 3) throw error;
    }
  }
}

/**
 * Deletes a subscription with its secrets and deliveries. Unsubscribing twice is not an error:
 * the answer says whether there was one (a caller choosing between two successes).
 */
export async function unsubscribe(sql: Sql, owner: Owner, id: string): Promise<boolean> {
  const rows = await oneStatement(
    sql,
    (tx) => tx`DELETE FROM subscriptions WHERE id = ${id} AND ${ownedBy(tx, owner)} RETURNING id`,
  );
  return rows.length > 0;
}

/**
 * Issues a new current secret. The one it replaces keeps signing for the overlap
 * (WEBHOOK_SECRET_OVERLAP_HOURS); secrets already on their way out keep their own earlier expiry.
 */
export async function rotateSecret(
  sql: Sql,
  box: SecretBox,
  owner: Owner,
  id: string,
): Promise<WebhookSubscription & { secret: string; previousSecretExpiresAt: string }> {
  const secret = generateSigningSecret();
  const sealed = await box.seal(secret);
  return await transaction(sql, async (tx) => {
    const [row] = await tx<SubscriptionRow[]>`
      UPDATE subscriptions SET secret_rotated_at = now()
      WHERE id = ${id} AND ${ownedBy(tx, owner)}
      RETURNING ${tx.unsafe(COLUMNS)}`;
    if (!row) throw notFound("Webhook", id);
    const [expiry] = await tx<{ expires_at: Date }[]>`
      UPDATE signing_secrets
      SET expires_at = now() + make_interval(hours => ${WEBHOOK_SECRET_OVERLAP_HOURS})
      WHERE subscription_id = ${id} AND expires_at IS NULL
      RETURNING expires_at`;
    await tx`
      INSERT INTO signing_secrets (organization_id, subscription_id, sealed)
      VALUES (${owner.organizationId}, ${id}, ${sealed})`;
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
  const rows = await read(sql, (q) =>
    q<{ sealed: Uint8Array }[]>`
      SELECT sealed FROM signing_secrets
      WHERE subscription_id = ${subscriptionId} AND (expires_at IS NULL OR expires_at > now())
      ORDER BY created_at DESC, id DESC`);
  return await Promise.all(rows.map((r) => box.open(new Uint8Array(r.sealed))));
}

/**
 * Stops a revoked tenant key's subscriptions; what was still queued for them fails. It takes the
 * lock `recordEvents` holds, so no delivery for the key can be queued between the two steps. The
 * revocation is remembered, so a subscription the key makes afterwards starts inactive
 * (subscribe).
 */
export async function revokeCredential(
  sql: Sql,
  revoked: { organizationId: string; apiKeyId: string },
): Promise<number> {
  const { organizationId, apiKeyId } = revoked;
  // The revocation names its organisation: the transaction is that organisation's work.
  return await withOrganization(organizationId, () =>
    transaction(sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${EVENT_LOG_LOCK}))`;
      await lockCredential(tx, {
        organizationId,
        credentialKind: "tenant_key",
        credentialId: apiKeyId,
      });
      await tx`
      INSERT INTO revoked_credentials (organization_id, credential_kind, credential_id, revoked_at)
      VALUES (${organizationId}, 'tenant_key', ${apiKeyId}, now())
      ON CONFLICT DO NOTHING`;
      const stopped = await tx<{ id: string }[]>`
      UPDATE subscriptions SET credential_revoked_at = now()
      WHERE organization_id = ${organizationId} AND credential_kind = 'tenant_key'
        AND credential_id = ${apiKeyId} AND credential_revoked_at IS NULL
      RETURNING id`;
      if (stopped.length > 0) {
        await tx`
        UPDATE deliveries
        SET status = 'failed', next_attempt_at = NULL, last_failure_reason = 'credential revoked'
        WHERE subscription_id = ANY(${stopped.map((s) => s.id)})
          AND status IN ('pending', 'retrying')`;
      }
      return stopped.length;
    }));
}

/** A partner app's rights in one organisation, as `partner_grant.updated` carries them. */
export interface PartnerGrantUpdate {
  /** The event's id and time: updates apply in the order the gateway published them. */
  eventId: string;
  occurredAt: string;
  appId: string;
  organizationId: string;
  /** What the app may now do for the organisation: its own scopes ∩ the grant's. */
  scopes: readonly string[];
}

export interface PartnerGrantOutcome {
  /** False when a newer update for the same app and organisation was applied already. */
  applied: boolean;
  /** Subscriptions stopped now because their event area's read scope is gone. */
  withdrawn: number;
  /** Subscriptions that had been stopped and resume, the read scope being back. */
  resumed: number;
  /** Subscriptions that stop receiving cost fields now. */
  costsDropped: number;
}

/**
 * Keeps a partner app's subscriptions in one organisation within what its grant there allows
 * now: a subscription whose event area's read scope is gone stops (`active: false`) and what was
 * still queued for it fails; one whose read scope is back resumes for new events (its failed
 * deliveries stay failed); without costs.read, cost fields are left out from now on, also of
 * deliveries already queued. It takes the lock `recordEvents` holds, so no delivery can be
 * queued by the old rights once this commits. An update older than one already applied (a
 * redelivery, or an event released from the gateway's outbox quarantine) changes nothing.
 */
export async function applyPartnerGrant(
  sql: Sql,
  update: PartnerGrantUpdate,
): Promise<PartnerGrantOutcome> {
  const areas = EVENT_DEFINITIONS.flatMap((d) =>
    d.readScope === null ? [] : [{ type: d.type, readScope: d.readScope }]
  );
  const types = areas.map((a) => a.type);
  const reads = areas.map((a) => a.readScope);
  const scopes = [...update.scopes];
  const { organizationId, appId } = update;
  // The grant names its organisation: the transaction is that organisation's work.
  return await withOrganization(organizationId, () =>
    transaction(sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext(${EVENT_LOG_LOCK}))`;
      await lockCredential(tx, { organizationId, credentialKind: "partner", credentialId: appId });
      // The scopes are kept for the subscriptions the app makes from now on (subscribe).
      const newest = await tx`
      INSERT INTO partner_grant_versions AS v
        (organization_id, app_id, occurred_at, event_id, scopes)
      VALUES (${organizationId}, ${appId}, ${update.occurredAt}, ${update.eventId}, ${scopes})
      ON CONFLICT (organization_id, app_id) DO UPDATE
        SET occurred_at = excluded.occurred_at, event_id = excluded.event_id,
            scopes = excluded.scopes
        WHERE (v.occurred_at, v.event_id) < (excluded.occurred_at, excluded.event_id)
      RETURNING event_id`;
      if (newest.length === 0) {
        return { applied: false, withdrawn: 0, resumed: 0, costsDropped: 0 };
      }
      // Each event area's read scope, from the catalogue.
      const area = () =>
        tx`SELECT * FROM unnest(${types}::text[], ${reads}::text[]) AS a(event_type, read_scope)`;
      const withdrawn = await tx<{ id: string }[]>`
      UPDATE subscriptions s SET scope_withdrawn_at = now()
      FROM (${area()}) a
      WHERE s.organization_id = ${organizationId} AND s.credential_kind = 'partner'
        AND s.credential_id = ${appId} AND a.event_type = s.event_type
        AND NOT (a.read_scope = ANY(${scopes}::text[])) AND s.scope_withdrawn_at IS NULL
      RETURNING s.id`;
      if (withdrawn.length > 0) {
        await tx`
        UPDATE deliveries d
        SET status = 'failed', next_attempt_at = NULL,
            last_failure_reason = 'scope withdrawn: ' || a.read_scope
        FROM subscriptions s JOIN (${area()}) a ON a.event_type = s.event_type
        WHERE d.subscription_id = s.id AND s.id = ANY(${withdrawn.map((w) => w.id)}::uuid[])
          AND d.status IN ('pending', 'retrying')`;
      }
      const resumed = await tx<{ id: string }[]>`
      UPDATE subscriptions s SET scope_withdrawn_at = NULL
      FROM (${area()}) a
      WHERE s.organization_id = ${organizationId} AND s.credential_kind = 'partner'
        AND s.credential_id = ${appId} AND a.event_type = s.event_type
        AND a.read_scope = ANY(${scopes}::text[]) AND s.scope_withdrawn_at IS NOT NULL
      RETURNING s.id`;
      const costsDropped = scopes.includes(COSTS_READ) ? [] : await tx<{ id: string }[]>`
      -- Only ever switched off, never back on by a wider grant: leaving cost fields out is the
      -- safe direction, and a grant regaining costs.read does not say this subscriber should get
      -- them again. Deleting the subscription and subscribing again with costs.read restores them.
      UPDATE subscriptions SET includes_costs = false
      WHERE organization_id = ${organizationId} AND credential_kind = 'partner'
        AND credential_id = ${appId} AND includes_costs
      RETURNING id`;
      return {
        applied: true,
        withdrawn: withdrawn.length,
        resumed: resumed.length,
        costsDropped: costsDropped.length,
      };
    }));
}

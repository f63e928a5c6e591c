-- A partner app's subscriptions follow the organisation's grant (partner_grant.updated): while
-- the grant no longer gives the read scope of a subscription's event area, scope_withdrawn_at is
-- set and the subscription is inactive (nothing is queued for it, nothing queued is sent); it is
-- cleared when the grant gives the scope again.
ALTER TABLE subscriptions ADD COLUMN scope_withdrawn_at timestamptz;

DROP INDEX subscriptions_fan_out;
CREATE INDEX subscriptions_fan_out
  ON subscriptions (organization_id, event_type)
  WHERE credential_revoked_at IS NULL AND scope_withdrawn_at IS NULL;

-- The newest partner_grant.updated applied per app and organisation, in the order the gateway's
-- relay publishes (occurred_at, then id). An older one arriving later (a redelivery, or an event
-- an operator released from the outbox quarantine) is ignored, so it can never undo a newer
-- grant: a stale wider grant must not resume what a newer narrower one withdrew.
CREATE TABLE partner_grant_versions (
  organization_id uuid NOT NULL,
  app_id uuid NOT NULL,
  occurred_at timestamptz NOT NULL,
  event_id uuid NOT NULL,
  PRIMARY KEY (organization_id, app_id)
);

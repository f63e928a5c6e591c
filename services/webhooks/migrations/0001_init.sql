-- Subscriptions belong to the credential that made them: a tenant key or a partner app acting
-- for this organisation. includes_costs freezes what that credential could read when it
-- subscribed; credential_revoked_at stops every delivery once the key is revoked.
CREATE TABLE subscriptions (
  id uuid PRIMARY KEY DEFAULT uuidv7(),
  organization_id uuid NOT NULL,
  credential_kind text NOT NULL CHECK (credential_kind IN ('tenant_key', 'partner')),
  credential_id uuid NOT NULL,
  event_type text NOT NULL,
  url text NOT NULL,
  includes_costs boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  secret_rotated_at timestamptz,
  credential_revoked_at timestamptz
);
CREATE UNIQUE INDEX subscriptions_one_per_target
  ON subscriptions (organization_id, credential_kind, credential_id, event_type, url);
CREATE INDEX subscriptions_fan_out
  ON subscriptions (organization_id, event_type) WHERE credential_revoked_at IS NULL;
CREATE INDEX subscriptions_by_credential ON subscriptions (credential_kind, credential_id);

-- Sealed with AES-GCM. The current secret has no expiry; a rotated-out one signs beside it
-- until expires_at.
CREATE TABLE signing_secrets (
  id uuid PRIMARY KEY DEFAULT uuidv7(),
  subscription_id uuid NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
  sealed bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE INDEX signing_secrets_by_subscription ON signing_secrets (subscription_id);

-- Every event an integrator may see, once, in the order this service recorded them: the event
-- log pages by seq, and deliveries read their payload from here.
CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  organization_id uuid NOT NULL,
  type text NOT NULL,
  aggregate_id uuid,
  occurred_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_by_organization ON events (organization_id, seq);

-- One row per subscription and event (the unique key makes a redelivered event harmless).
CREATE TABLE deliveries (
  id uuid PRIMARY KEY DEFAULT uuidv7(),
  subscription_id uuid NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
  event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  -- When a worker may next take it. Claiming pushes it past the attempt's timeout, so a worker
  -- that dies mid-attempt leaves a delivery that becomes due again by itself.
  next_attempt_at timestamptz DEFAULT now(),
  last_http_status integer,
  last_failure_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, event_id)
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX deliveries_by_subscription ON deliveries (subscription_id, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
  id uuid PRIMARY KEY DEFAULT uuidv7(),
  delivery_id uuid NOT NULL REFERENCES deliveries ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  http_status integer,
  succeeded boolean NOT NULL,
  failure_reason text,
  trigger text NOT NULL CHECK (trigger IN ('automatic', 'manual'))
);
CREATE INDEX delivery_attempts_by_delivery ON delivery_attempts (delivery_id, attempt);

-- Token buckets of the rate limiter, shared by every gateway replica. A bucket belongs to one
-- principal: a tenant key, or a partner app acting for one organisation.
CREATE TABLE rate_limit_buckets (
  principal text PRIMARY KEY,
  tokens double precision NOT NULL,
  refreshed_at timestamptz NOT NULL,
  admitted boolean NOT NULL
);

-- Idempotency-Key records: a claim while the first request runs, then its stored response.
CREATE TABLE idempotency_records (
  principal text NOT NULL,
  key text NOT NULL,
  fingerprint bytea NOT NULL,
  state text NOT NULL CHECK (state IN ('in_flight', 'completed')),
  -- A claim left by a gateway that died mid-request lapses at this time.
  locked_until timestamptz NOT NULL,
  response_status integer,
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

-- Partner applications: the client id is public, the secret is stored as a SHA-256 hash.
CREATE TABLE partner_apps (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  client_id text NOT NULL UNIQUE,
  secret_hash bytea NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- An organisation's consent for a partner app to act for it, within these scopes.
CREATE TABLE partner_grants (
  app_id uuid NOT NULL REFERENCES partner_apps (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, organization_id)
);

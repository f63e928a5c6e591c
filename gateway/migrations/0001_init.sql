CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- Per-organisation override of RATE_LIMIT_PER_MINUTE; null means the default applies.
  requests_per_minute integer CHECK (requests_per_minute > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A key is "psk_<lookup>_<secret>". Only the lookup (to find the row) and a SHA-256 of the
-- secret are stored; the secret is compared in constant time after the row is found.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  name text,
  lookup text NOT NULL UNIQUE,
  secret_hash bytea NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_organization ON api_keys (organization_id);

-- What this service knows of a credential's rights, kept so a subscription made after a change
-- starts in line with it. The gateway remembers a credential it resolved for a moment (its auth
-- cache) and a request is in flight for another, so POST /v1/webhooks can arrive here after
-- `api_key.revoked` or a narrowing `partner_grant.updated` was applied; the subscription it made
-- was active, with cost fields, and nothing would ever stop it.
--
-- A tenant key's revocation, for good (a key is never restored): a subscription the key makes
-- afterwards is made inactive, as revocation leaves the key's others.
CREATE TABLE revoked_credentials (
  organization_id uuid NOT NULL,
  credential_kind text NOT NULL CHECK (credential_kind IN ('tenant_key', 'partner')),
  credential_id uuid NOT NULL,
  revoked_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, credential_kind, credential_id)
);

-- What the newest grant applied lets the app do in the organisation (the app's scopes ∩ the
-- grant's): a subscription the app makes afterwards is stopped when the grant lacks its event
-- area's read scope, and leaves cost fields out without costs.read. Null for a grant applied
-- before this column existed: nothing is known, and nothing is held back.
ALTER TABLE partner_grant_versions ADD COLUMN scopes text[];

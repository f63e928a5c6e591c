-- The rows below a subscription carry its organisation too: its signing secrets, its deliveries
-- and their attempts. Every table with an organisation gets the forced row-level policy, and each
-- key between two of them is made to carry it ((organization_id, subscription_id) →
-- subscriptions (organization_id, id), and the same to events and deliveries: shared/db/
-- tenancy.ts, after the migrations), so no delivery, secret or attempt is visible to another
-- organisation's transaction, and the database refuses one that points at another organisation's
-- subscription, event or delivery, whoever writes it.
--
-- The backfill runs as the owner, who bypasses the policies (BYPASSRLS), so it sees and fills
-- every organisation's rows; each row takes its parent's organisation. It rewrites each table
-- once (a delivery table of millions of rows takes a while, under this migration's lock: the
-- service starts when it is done).
ALTER TABLE signing_secrets ADD COLUMN organization_id uuid;
UPDATE signing_secrets k SET organization_id = s.organization_id
FROM subscriptions s WHERE s.id = k.subscription_id;
ALTER TABLE signing_secrets ALTER COLUMN organization_id SET NOT NULL;

ALTER TABLE deliveries ADD COLUMN organization_id uuid;
UPDATE deliveries d SET organization_id = s.organization_id
FROM subscriptions s WHERE s.id = d.subscription_id;
ALTER TABLE deliveries ALTER COLUMN organization_id SET NOT NULL;

ALTER TABLE delivery_attempts ADD COLUMN organization_id uuid;
UPDATE delivery_attempts a SET organization_id = d.organization_id
FROM deliveries d WHERE d.id = a.delivery_id;
ALTER TABLE delivery_attempts ALTER COLUMN organization_id SET NOT NULL;

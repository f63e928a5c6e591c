-- The two tables that tie a row to other rows (a revision to the mocks it shows, a message to
-- the proofs it carries) take the organisation too, so that row-level security covers them
-- like every other table and their keys carry it: `(organization_id, revision_id)` and
-- `(organization_id, mock_id)` and so on (shared/db/tenancy.ts makes the keys composite and
-- forces the policy once migrations have run). The backfill runs as the owner, which bypasses
-- the policies, and takes each row's organisation from the row it belongs to.

ALTER TABLE proof_revision_mocks ADD COLUMN organization_id uuid;
UPDATE proof_revision_mocks m SET organization_id = r.organization_id
FROM proof_revisions r WHERE r.id = m.revision_id;
ALTER TABLE proof_revision_mocks ALTER COLUMN organization_id SET NOT NULL;

ALTER TABLE mail_message_proofs ADD COLUMN organization_id uuid;
UPDATE mail_message_proofs p SET organization_id = m.organization_id
FROM mail_messages m WHERE m.id = p.message_id;
ALTER TABLE mail_message_proofs ALTER COLUMN organization_id SET NOT NULL;

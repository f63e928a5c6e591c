-- Proofs with their numbered revisions, the mocks each revision shows, their items (links to
-- quote lines with quantities per size) and the history of each revision.

CREATE TABLE proofs (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  -- Ids in other services (quotes; jobs), kept as given. At least one is set.
  quote_id uuid,
  job_id uuid,
  title text,
  recipient_name text NOT NULL,
  recipient_email text NOT NULL,
  status text NOT NULL DEFAULT 'draft'
    CHECK (status IN ('draft', 'sent', 'viewed', 'approved', 'changes_requested', 'rejected')),
  -- The number of the current (highest) revision.
  current_revision integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (quote_id IS NOT NULL OR job_id IS NOT NULL)
);
CREATE INDEX proofs_org ON proofs (organization_id, created_at, id);
CREATE INDEX proofs_status ON proofs (organization_id, status);
CREATE INDEX proofs_quote ON proofs (organization_id, quote_id) WHERE quote_id IS NOT NULL;
CREATE INDEX proofs_job ON proofs (organization_id, job_id) WHERE job_id IS NOT NULL;
CREATE INDEX proofs_recipient ON proofs (organization_id, recipient_email);

CREATE TABLE proof_revisions (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  proof_id uuid NOT NULL REFERENCES proofs (id) ON DELETE CASCADE,
  number integer NOT NULL CHECK (number >= 1),
  image_urls text[] NOT NULL DEFAULT '{}',
  notes text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (proof_id, number)
);

-- A mock a revision shows cannot be deleted (RESTRICT): the store refuses it first with a 409.
CREATE TABLE proof_revision_mocks (
  revision_id uuid NOT NULL REFERENCES proof_revisions (id) ON DELETE CASCADE,
  mock_id uuid NOT NULL REFERENCES mocks (id) ON DELETE RESTRICT,
  position integer NOT NULL,
  PRIMARY KEY (revision_id, position)
);
CREATE INDEX proof_revision_mocks_mock ON proof_revision_mocks (mock_id);

CREATE TABLE proof_item_links (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  proof_id uuid NOT NULL REFERENCES proofs (id) ON DELETE CASCADE,
  -- An id in the quotes service, kept as given.
  quote_line_id uuid,
  description text NOT NULL,
  -- [{ "size": "M", "quantity": 40 }, …], in the order shown.
  sizes jsonb NOT NULL DEFAULT '[]',
  confirmed_sizes jsonb,
  confirmed_at timestamptz,
  confirmed_by_credential_kind text,
  confirmed_by_credential_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX proof_item_links_proof ON proof_item_links (proof_id, created_at, id);

-- What happened to each revision: sends, views, decisions and manual status changes. Rows are
-- never changed; a decision keeps what the revision showed and its digest, as evidence.
CREATE TABLE proof_history (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  proof_id uuid NOT NULL REFERENCES proofs (id) ON DELETE CASCADE,
  revision_id uuid NOT NULL REFERENCES proof_revisions (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('sent', 'viewed', 'decision', 'status_changed')),
  -- clock_timestamp(): entries of one transaction keep the order they were written in.
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  from_status text,
  to_status text,
  credential_kind text,
  credential_id text,
  sent_to text,
  ip_address text,
  user_agent text,
  note text,
  decision text CHECK (decision IN ('approve', 'request_changes')),
  comment text,
  signer_name text,
  signer_email text,
  channel text CHECK (channel IN ('api', 'page')),
  wording text,
  digest text,
  shown jsonb
);
CREATE INDEX proof_history_revision ON proof_history (revision_id, occurred_at, id);
CREATE INDEX proof_history_decisions ON proof_history (proof_id) WHERE kind = 'decision';

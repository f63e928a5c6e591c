-- The mail outbox: a message is written in the transaction that sends its proofs, and the mail
-- worker hands it to SMTP_URL (or, with none, it is kept here as delivered locally).

CREATE TABLE mail_messages (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'local')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX mail_messages_due ON mail_messages (next_attempt_at) WHERE status = 'pending';
CREATE INDEX mail_messages_created ON mail_messages (created_at DESC, id);

-- The proofs a message carries, each with the revision it was sent for (a failure is recorded
-- in that revision's history).
CREATE TABLE mail_message_proofs (
  message_id uuid NOT NULL REFERENCES mail_messages (id) ON DELETE CASCADE,
  position integer NOT NULL,
  proof_id uuid NOT NULL REFERENCES proofs (id) ON DELETE CASCADE,
  revision_id uuid NOT NULL REFERENCES proof_revisions (id) ON DELETE CASCADE,
  PRIMARY KEY (message_id, position)
);
CREATE INDEX mail_message_proofs_proof ON mail_message_proofs (proof_id);

-- A send the mail server refused is kept in the proof's history.
ALTER TABLE proof_history DROP CONSTRAINT proof_history_kind_check;
ALTER TABLE proof_history ADD CONSTRAINT proof_history_kind_check
  CHECK (kind IN ('sent', 'send_failed', 'viewed', 'decision', 'status_changed'));

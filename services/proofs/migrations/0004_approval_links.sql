-- Approval links: one per proof per send, each the customer's way to the approval page of the
-- revision that send carried. No foreign key to the proof: a link outlives its proof's deletion,
-- so a customer who opens it is told the shop withdrew the proof rather than that it is invalid.

CREATE TABLE approval_links (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  proof_id uuid NOT NULL,
  revision integer NOT NULL CHECK (revision >= 1),
  mail_message_id uuid NOT NULL REFERENCES mail_messages (id),
  -- Who it was sent to: the signer's email address when a decision is made through it.
  sent_to text NOT NULL,
  -- The shop's name as it was at the send; the page shows it.
  shop_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  -- Set on the first opening, which alone records a view.
  first_viewed_at timestamptz
);
CREATE INDEX approval_links_proof ON approval_links (proof_id, created_at);

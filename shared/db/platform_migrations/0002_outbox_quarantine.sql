-- An event the broker refuses for good (invalid or too large) would otherwise hold back every
-- event after it. The relay sets it aside here, with the broker's reason; an operator clears
-- quarantined_at to send it again.
ALTER TABLE outbox ADD COLUMN quarantined_at timestamptz, ADD COLUMN publish_error text;
DROP INDEX outbox_unpublished;
CREATE INDEX outbox_unpublished ON outbox (created_at, id)
  WHERE published_at IS NULL AND quarantined_at IS NULL;

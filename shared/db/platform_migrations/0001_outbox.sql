-- Every service schema has an outbox: an event is written here in the same transaction as the
-- change it describes, and a relay publishes it. Its shape belongs to shared/, so it lives on
-- the platform migration track rather than in each service's own files.
CREATE TABLE outbox (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  type text NOT NULL,
  aggregate_id uuid,
  payload jsonb NOT NULL,
  traceparent text,
  created_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (created_at, id) WHERE published_at IS NULL;

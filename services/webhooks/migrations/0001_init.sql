-- Every service owns an outbox: events are written here in the same transaction as the change
-- they describe, and a relay publishes them (see the project's shared/ event bus).
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

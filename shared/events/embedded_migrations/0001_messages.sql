-- The embedded event bus: a log of published events per topic and each consumer group's
-- position in it. It stands in for Kafka on one machine, so it belongs to no service.
CREATE TABLE messages (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic text NOT NULL,
  id uuid NOT NULL,
  organization_id uuid NOT NULL,
  type text NOT NULL,
  aggregate_id uuid,
  occurred_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  traceparent text,
  published_at timestamptz NOT NULL DEFAULT now()
);
-- A relay that crashed between publishing and marking its rows publishes them again; the
-- second copy is dropped here, as an idempotent Kafka producer would.
CREATE UNIQUE INDEX messages_topic_event ON messages (topic, id);
CREATE INDEX messages_topic_seq ON messages (topic, seq);
CREATE INDEX messages_published_at ON messages (published_at);

CREATE TABLE consumer_offsets (
  group_id text NOT NULL,
  topic text NOT NULL,
  position bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic)
);

-- An event's data is kept to be delivered, never filtered or sorted on: like the outbox's payload
-- (platform migration 0008), it carries no planner statistics, so autovacuum's ANALYZE of this
-- growing table does not sort a sample of payloads each time it runs.
ALTER TABLE events ALTER COLUMN data SET STATISTICS 0;

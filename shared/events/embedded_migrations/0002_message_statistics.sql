-- A message's data is carried to its consumers, never filtered or sorted on: like the outbox's
-- payload (platform migration 0008), it carries no planner statistics, so autovacuum's ANALYZE of
-- this growing log does not sort a sample of payloads each time it runs.
ALTER TABLE messages ALTER COLUMN data SET STATISTICS 0;

-- The worker's retention purge (purgeOldEvents) deletes events older than the retention, and
-- each takes its deliveries with it (ON DELETE CASCADE): with no index on when an event was
-- recorded the purge read the whole log, and with none on a delivery's event each purged event
-- read the deliveries whole. Found by the index inventory (docs/indexes.md).
CREATE INDEX events_recorded_at ON events (recorded_at);
CREATE INDEX deliveries_by_event ON deliveries (organization_id, event_id);
-- Every read of a credential's subscriptions names the organisation first, which
-- subscriptions_one_per_target (organization_id, credential_kind, credential_id, …) serves; this
-- one only cost every subscription write an entry.
DROP INDEX subscriptions_by_credential;

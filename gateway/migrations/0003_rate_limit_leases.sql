-- A gateway may take several tokens at once and spend them locally (a lease), so a busy
-- credential does not cost a database round trip per request; `granted` says how many the
-- last statement handed out.
ALTER TABLE rate_limit_buckets ADD COLUMN granted integer NOT NULL DEFAULT 1;

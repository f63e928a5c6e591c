-- The trace context of the request that caused each event, as the bus carried it: a delivery's
-- span continues that trace, so one trace runs from the write to every attempt of its webhooks.
ALTER TABLE events ADD COLUMN traceparent text;

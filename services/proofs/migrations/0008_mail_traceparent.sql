-- The trace a message continues (W3C traceparent of the request that sent the proofs), so the
-- mail worker's attempts join the request's trace as the outbox's events do. Older messages have
-- none and start traces of their own. Not part of the outbox as the admin API shows it.
ALTER TABLE mail_messages ADD COLUMN traceparent text;

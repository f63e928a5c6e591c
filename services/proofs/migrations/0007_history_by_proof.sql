-- A proof's history is read whole, in time order (GET /v1/proofs/{id}/history): by its proof,
-- which no index led with, so the read scanned every organisation's history (found by
-- services/proofs/plans_test.ts).
CREATE INDEX proof_history_proof ON proof_history (proof_id, occurred_at, id);

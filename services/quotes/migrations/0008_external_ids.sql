-- The id an integrator's own system gives a quote (a storefront's order number, say), so a sync
-- retried by a webhook finds the quote it made instead of making another: at most 200
-- characters, held once per organisation (a create or PATCH naming one another quote holds is a
-- 409 naming that quote). The unique index is the rule and what the list filter `externalId`
-- reads.
ALTER TABLE quotes ADD COLUMN external_id text CHECK (char_length(external_id) <= 200);
CREATE UNIQUE INDEX quotes_external_id_key ON quotes (organization_id, external_id)
  WHERE external_id IS NOT NULL;

-- Stored documents were rendered without the new key: dropped, each is rendered again (with it)
-- on its next read.
UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
WHERE document_with_costs IS NOT NULL OR document_without_costs IS NOT NULL;

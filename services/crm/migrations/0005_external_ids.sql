-- The id an integrator's own system gives a customer or a vendor, so a sync finds the row it made
-- instead of making another: at most 200 characters, held once per organisation among its
-- customers and once among its vendors (a create or PATCH naming one another row holds is a 409
-- naming that row). The unique indexes are the rule and what the list filter `externalId` reads.
ALTER TABLE customers ADD COLUMN external_id text CHECK (char_length(external_id) <= 200);
ALTER TABLE vendors ADD COLUMN external_id text CHECK (char_length(external_id) <= 200);
CREATE UNIQUE INDEX customers_external_id_key ON customers (organization_id, external_id)
  WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX vendors_external_id_key ON vendors (organization_id, external_id)
  WHERE external_id IS NOT NULL;

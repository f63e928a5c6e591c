-- The GIN indexes on custom_fields served `custom_fields ? '<definition id>'` (the records holding
-- a value of a definition, looked up when one is changed or deleted). Under the row-level policies
-- the service's role can no longer use them: `?` (jsonb_exists) is not leakproof, so PostgreSQL
-- evaluates it only after the policy, never as an index condition. Those look-ups now read the
-- organisation's rows through the btree indexes that lead with organization_id (customers_org,
-- vendors_org_name, tasks_org); the GIN indexes only cost upkeep on every write of values.
DROP INDEX customers_custom_fields;
DROP INDEX vendors_custom_fields;
DROP INDEX tasks_custom_fields;

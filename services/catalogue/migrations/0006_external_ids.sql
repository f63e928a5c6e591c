-- An integrator's sync finds the rows it made by their externalId, so an organisation holds each
-- external id once per kind of row: once among its catalogue items, once among its garment
-- variants. A create or PATCH that names one another row holds is refused (409, naming it).
--
-- Rows written before this rule may share one. The oldest (created first, then the lowest id)
-- keeps it; each later one keeps it with a suffix, " (duplicate 2)", " (duplicate 3)"…, its
-- value cut to 180 characters first so it stays within 200: nothing is lost, nothing matches a
-- sync twice, and the list filter `externalId` still finds the original.
WITH ranked AS (
  SELECT id, external_id,
    row_number() OVER (PARTITION BY organization_id, external_id ORDER BY created_at, id) AS n
  FROM catalogue_items WHERE external_id IS NOT NULL
)
UPDATE catalogue_items c
SET external_id = left(r.external_id, 180) || ' (duplicate ' || r.n || ')', updated_at = now()
FROM ranked r WHERE c.id = r.id AND r.n > 1;

WITH ranked AS (
  SELECT id, external_id,
    row_number() OVER (PARTITION BY organization_id, external_id ORDER BY created_at, id) AS n
  FROM garment_variants WHERE external_id IS NOT NULL
)
UPDATE garment_variants v
SET external_id = left(r.external_id, 180) || ' (duplicate ' || r.n || ')', updated_at = now()
FROM ranked r WHERE v.id = r.id AND r.n > 1;

-- The rule, and the index the list filter `externalId` reads.
CREATE UNIQUE INDEX catalogue_items_external_id_key ON catalogue_items (organization_id, external_id)
  WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX garment_variants_external_id_key
  ON garment_variants (organization_id, external_id) WHERE external_id IS NOT NULL;

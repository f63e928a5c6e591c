-- Every key carries the organisation. A pre-built item's id is the client's choice (PUT), so it
-- is unique within its organisation only: an id another shop already uses creates this shop's
-- item rather than telling it that the id is taken. Server-made ids (uuidv7) are unique anyway;
-- their tables are keyed the same way so that every reference can carry the organisation too,
-- and the database itself then refuses a row that points at another organisation's row.

-- The references depend on the keys they name: they go first and come back composite.
ALTER TABLE garment_variants DROP CONSTRAINT garment_variants_garment_catalogue_item_id_fkey;
ALTER TABLE prebuilt_items DROP CONSTRAINT prebuilt_items_garment_catalogue_item_id_fkey;
ALTER TABLE stock_adjustments DROP CONSTRAINT stock_adjustments_garment_variant_id_fkey;
-- A database whose tenancy pass ran before this file (shared/db/tenancy.ts) has its own unique
-- keys on (organization_id, id) beside the primary keys made below: they would only be copies.
ALTER TABLE catalogue_items DROP CONSTRAINT IF EXISTS catalogue_items_organization_id_id_key;
ALTER TABLE garment_variants DROP CONSTRAINT IF EXISTS garment_variants_organization_id_id_key;

ALTER TABLE catalogue_items DROP CONSTRAINT catalogue_items_pkey,
  ADD PRIMARY KEY (organization_id, id);
ALTER TABLE garment_variants DROP CONSTRAINT garment_variants_pkey,
  ADD PRIMARY KEY (organization_id, id);
ALTER TABLE prebuilt_items DROP CONSTRAINT prebuilt_items_pkey,
  ADD PRIMARY KEY (organization_id, id);
ALTER TABLE stock_adjustments DROP CONSTRAINT stock_adjustments_pkey,
  ADD PRIMARY KEY (organization_id, id);

-- A colour and size once per item, within the organisation; its index also serves the
-- item's variants (the cascade of a delete, the style code an item hands down).
ALTER TABLE garment_variants
  DROP CONSTRAINT garment_variants_garment_catalogue_item_id_color_size_key,
  ADD UNIQUE (organization_id, garment_catalogue_item_id, color, size),
  ADD FOREIGN KEY (organization_id, garment_catalogue_item_id)
    REFERENCES catalogue_items (organization_id, id);
-- No cascade: an item a pre-built item uses is never deleted. A null garment is not checked.
ALTER TABLE prebuilt_items ADD FOREIGN KEY (organization_id, garment_catalogue_item_id)
  REFERENCES catalogue_items (organization_id, id);
ALTER TABLE stock_adjustments ADD FOREIGN KEY (organization_id, garment_variant_id)
  REFERENCES garment_variants (organization_id, id) ON DELETE CASCADE;

-- The key a variant's size is matched against the organisation's size order with: the label
-- upper-cased by the service, as the order's labels are (PostgreSQL's upper() depends on the
-- cluster's locale and leaves some letters, such as Ñ, as they are under C).
ALTER TABLE garment_variants ADD COLUMN size_key text;
UPDATE garment_variants SET size_key = upper(size);
ALTER TABLE garment_variants ALTER COLUMN size_key SET NOT NULL;

-- `search` on catalogue items, garment variants and pre-built items: declared again (platform
-- migration 0007), so each trigram index is built over the searched columns rather than over a
-- function of the whole row, and an update that changes none of them can be heap-only. The
-- columns are those of 0010 and 0011; this is now the statement of which columns each list's
-- `search` looks in.
SELECT declare_search('catalogue_items',
  ARRAY['style_code', 'name', 'brand', 'description', 'external_id']);
SELECT declare_search('garment_variants',
  ARRAY['style_code', 'color', 'size', 'stock_code', 'external_id'], NULL, true);
SELECT declare_search('prebuilt_items', ARRAY['name', 'description']);

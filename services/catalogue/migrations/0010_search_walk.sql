-- `search` on catalogue items, garment variants and pre-built items: declared again (platform
-- migration 0005), so a list that need not count can walk its rows in order for a common term;
-- the columns are those of 0008 and 0009 and the indexes are kept. This is now the statement of
-- which columns each list's `search` looks in.
SELECT declare_search('catalogue_items',
  ARRAY['style_code', 'name', 'brand', 'description', 'external_id']);
SELECT declare_search('garment_variants',
  ARRAY['style_code', 'color', 'size', 'stock_code', 'external_id']);
SELECT declare_search('prebuilt_items', ARRAY['name', 'description']);

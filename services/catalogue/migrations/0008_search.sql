-- `search` on catalogue items, garment variants and pre-built items (platform migration 0003,
-- declare_search): the one statement of which columns each list's `search` looks in.
SELECT declare_search('catalogue_items',
  ARRAY['style_code', 'name', 'brand', 'description', 'external_id']);
SELECT declare_search('garment_variants',
  ARRAY['style_code', 'color', 'size', 'stock_code', 'external_id']);
SELECT declare_search('prebuilt_items', ARRAY['name', 'description']);

-- Garment variants are searched by codes whose segments may be a character or two (stock codes
-- such as "SC-1-1", sizes, style codes): declared again with `codes` (platform migration 0006),
-- so such a term reads the codes index instead of every variant of the shop. The columns are
-- those of 0010; the trigram index is kept.
SELECT declare_search('garment_variants',
  ARRAY['style_code', 'color', 'size', 'stock_code', 'external_id'], NULL, true);

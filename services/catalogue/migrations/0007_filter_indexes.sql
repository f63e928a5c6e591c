-- Two list filters read every row they could match, found by the scale bench (README, `deno task
-- bench:scale`) at ten times the data: a catalogue narrowed to one supplier (a sequential scan of
-- the organisation's items: ×3.0 from 10,000 to 100,000 variants' worth) and a variant's ledger
-- narrowed to one location (the whole ledger walked backwards, 100,000 rows dropped for a page of
-- none: ×6.9). Each index is the filter, then the list's own order, so a page is read in order
-- and stops at its limit. A ledger row written with a location pays one more index entry.
CREATE INDEX catalogue_items_by_supplier
  ON catalogue_items (organization_id, supplier_vendor_id, created_at, id)
  WHERE supplier_vendor_id IS NOT NULL;
CREATE INDEX stock_adjustments_by_location
  ON stock_adjustments (garment_variant_id, location, created_at, id)
  WHERE location IS NOT NULL;

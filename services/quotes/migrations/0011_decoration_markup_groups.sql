-- Deleting a markup group first asks whether a decoration still prices with it
-- (deleteMarkupGroup), and the foreign keys ask the same: neither column had an index, so every
-- delete read every organisation's decorations (found by the index inventory, docs/indexes.md).
-- Partial: a decoration without a group adds nothing to either.
CREATE INDEX quote_decorations_by_markup_group
  ON quote_decorations (organization_id, markup_group_id)
  WHERE markup_group_id IS NOT NULL;
CREATE INDEX quote_decorations_by_setup_markup_group
  ON quote_decorations (organization_id, setup_markup_group_id)
  WHERE setup_markup_group_id IS NOT NULL;

-- A variant's style code is its item's unless the variant was given its own. Which of the two
-- it is is kept here, not guessed by comparing codes: a variant given its own code that happens
-- to equal its item's keeps it when the item's changes, and one given none follows the item.
ALTER TABLE garment_variants ADD COLUMN style_code_is_own boolean NOT NULL DEFAULT false;

-- Variants written before this column: nothing recorded which were given a code, so a code
-- other than the item's is taken as the variant's own, and one equal to it as the item's. A
-- copy an earlier change of its item left behind is therefore kept, as it was before.
UPDATE garment_variants v SET style_code_is_own = true
FROM catalogue_items i
WHERE i.organization_id = v.organization_id AND i.id = v.garment_catalogue_item_id
  AND v.style_code <> i.style_code;

-- Pre-built items: saved garment-plus-decoration combinations. The garment is a catalogue item of
-- the same organisation (checked by the store); the foreign key has no cascade, so a catalogue
-- item a pre-built item uses cannot be deleted from under it. Decorations are kept in order as
-- one JSON array: they are only ever read and replaced with their item.

CREATE TABLE prebuilt_items (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  description text,
  garment_catalogue_item_id uuid REFERENCES catalogue_items (id),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'archived')),
  default_colors text[] NOT NULL DEFAULT '{}',
  default_sizes text[] NOT NULL DEFAULT '{}',
  -- [{ method, position, …, colours: [{ name, isBase }], unitCost, setupCost }], in order.
  decorations jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The list's default order, and its status filter.
CREATE INDEX prebuilt_items_created ON prebuilt_items (organization_id, created_at, id);
CREATE INDEX prebuilt_items_status ON prebuilt_items (organization_id, status, created_at, id);
-- Finding the pre-built items of a garment: the list filter, and the catalogue's check before a
-- delete (and the foreign key's own check).
CREATE INDEX prebuilt_items_garment ON prebuilt_items (garment_catalogue_item_id)
  WHERE garment_catalogue_item_id IS NOT NULL;

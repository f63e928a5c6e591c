-- Tax rates: each organisation gets "GST 10 %" as its default the first time it needs one.
CREATE TABLE tax_rates (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  rate_pct numeric(7, 4) NOT NULL CHECK (rate_pct >= 0 AND rate_pct <= 100),
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tax_rates_one_default ON tax_rates (organization_id) WHERE is_default;
CREATE INDEX tax_rates_by_org ON tax_rates (organization_id, created_at, id);

-- Markup groups: bands of markups by quantity (garment, decoration lanes) or setup cost.
CREATE TABLE markup_groups (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  lane text NOT NULL CHECK (lane IN ('garment', 'decoration', 'setup')),
  decoration_method text,
  is_default boolean NOT NULL DEFAULT false,
  applies_to_setup_cost boolean NOT NULL DEFAULT false,
  bands jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- One default per lane, and for decorations one per method (plus one for any method).
CREATE UNIQUE INDEX markup_groups_one_default
  ON markup_groups (organization_id, lane, coalesce(decoration_method, ''))
  WHERE is_default;
CREATE INDEX markup_groups_by_org ON markup_groups (organization_id, created_at, id);

ALTER TABLE quotes ADD CONSTRAINT quotes_tax_rate FOREIGN KEY (tax_rate_id) REFERENCES tax_rates (id);

CREATE TABLE quote_lines (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  quote_id uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
  quote_group_id uuid NOT NULL REFERENCES quote_groups (id) ON DELETE CASCADE,
  line_type text NOT NULL
    CHECK (line_type IN ('Garment', 'Decoration', 'Service', 'Cost', 'Discount', 'Surcharge', 'Other')),
  garment_catalogue_item_id uuid,
  product_name text NOT NULL,
  product_sku text,
  title text,
  description text,
  quantity integer NOT NULL DEFAULT 0 CHECK (quantity >= 0),
  unit_price_ex_gst numeric(18, 4) NOT NULL DEFAULT 0,
  value_type text CHECK (value_type IN ('Flat', 'Percentage')),
  percentage numeric(18, 4),
  discount_value_type text CHECK (discount_value_type IN ('Flat', 'Percentage')),
  discount_percentage numeric(18, 4),
  custom_image_url text,
  sort_order integer NOT NULL CHECK (sort_order >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quote_lines_by_group ON quote_lines (quote_group_id, sort_order, id);
CREATE INDEX quote_lines_by_quote ON quote_lines (quote_id);

CREATE TABLE quote_variants (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  quote_id uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
  quote_line_id uuid NOT NULL REFERENCES quote_lines (id) ON DELETE CASCADE,
  size text,
  colour text,
  quantity integer NOT NULL CHECK (quantity >= 0),
  unit_price_ex_gst numeric(18, 4) NOT NULL,
  buy_price numeric(18, 4) NOT NULL DEFAULT 0,
  extra_cost numeric(18, 4) NOT NULL DEFAULT 0,
  markup_type text CHECK (markup_type IN ('percentage', 'fixed')),
  markup_value numeric(30, 10),
  markup_source text NOT NULL DEFAULT 'manual' CHECK (markup_source IN ('group', 'manual')),
  markup_group_id uuid REFERENCES markup_groups (id),
  is_custom_line boolean NOT NULL DEFAULT false,
  show_on_documents boolean NOT NULL DEFAULT false,
  sort_order integer NOT NULL CHECK (sort_order >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT is_custom_line OR (size IS NULL AND colour IS NULL))
);
CREATE INDEX quote_variants_by_line ON quote_variants (quote_line_id, sort_order, id);
CREATE INDEX quote_variants_by_quote ON quote_variants (quote_id);
CREATE INDEX quote_variants_by_markup_group ON quote_variants (markup_group_id)
  WHERE markup_group_id IS NOT NULL;

CREATE TABLE quote_decorations (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  quote_id uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
  quote_group_id uuid NOT NULL REFERENCES quote_groups (id) ON DELETE CASCADE,
  decoration_item_id uuid,
  method text,
  position text,
  quantity integer NOT NULL CHECK (quantity >= 0),
  unit_cost numeric(18, 4) NOT NULL DEFAULT 0,
  setup_cost numeric(18, 4) NOT NULL DEFAULT 0,
  base_unit_cost numeric(18, 4) NOT NULL DEFAULT 0,
  base_setup_cost numeric(18, 4) NOT NULL DEFAULT 0,
  include_setup_cost boolean NOT NULL DEFAULT false,
  markup_type text CHECK (markup_type IN ('percentage', 'fixed')),
  markup_value numeric(30, 10),
  markup_source text NOT NULL DEFAULT 'manual' CHECK (markup_source IN ('group', 'manual')),
  markup_group_id uuid REFERENCES markup_groups (id),
  setup_markup_type text CHECK (setup_markup_type IN ('percentage', 'fixed')),
  setup_markup_value numeric(30, 10),
  setup_markup_source text NOT NULL DEFAULT 'manual'
    CHECK (setup_markup_source IN ('group', 'manual')),
  setup_markup_group_id uuid REFERENCES markup_groups (id),
  roll_up boolean NOT NULL DEFAULT false,
  roll_up_setup boolean NOT NULL DEFAULT false,
  show_on_documents boolean NOT NULL DEFAULT true,
  description text,
  width_cm numeric(10, 2) CHECK (width_cm >= 0),
  length_cm numeric(10, 2) CHECK (length_cm >= 0),
  neckline_drop_cm numeric(10, 2) CHECK (neckline_drop_cm >= 0),
  screen_count integer CHECK (screen_count >= 0),
  screen_mesh_grade text,
  colour_count integer CHECK (colour_count >= 0),
  colours jsonb NOT NULL DEFAULT '[]',
  special_instructions text,
  artwork_file_url text,
  separation_file_url text,
  sort_order integer NOT NULL CHECK (sort_order >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quote_decorations_by_group ON quote_decorations (quote_group_id, sort_order, id);
CREATE INDEX quote_decorations_by_quote ON quote_decorations (quote_id);

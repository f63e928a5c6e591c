-- The garment catalogue: items (a style), their variants (a colour and size of a style) with
-- stock, the stock ledger every stock change is written to, and per-organisation settings.

CREATE TABLE catalogue_settings (
  organization_id uuid PRIMARY KEY,
  -- Size labels in display order; sizes not listed sort after them, alphabetically.
  size_order text[] NOT NULL,
  -- The same labels upper-cased: what variants' sizes are matched against.
  size_keys text[] NOT NULL,
  allow_negative_stock boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalogue_items (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  style_code text NOT NULL,
  name text NOT NULL,
  brand text,
  description text,
  category text,
  supplier_vendor_id uuid,
  fabric text,
  weight_gsm integer,
  images text[] NOT NULL DEFAULT '{}',
  is_discontinued boolean NOT NULL DEFAULT false,
  external_id text,
  source text NOT NULL DEFAULT 'manual',
  buy_price numeric(14, 4),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, style_code)
);
-- The keyset orders of GET /v1/catalogue: each sort field, then the id.
CREATE INDEX catalogue_items_created ON catalogue_items (organization_id, created_at, id);
CREATE INDEX catalogue_items_updated ON catalogue_items (organization_id, updated_at, id);
CREATE INDEX catalogue_items_name ON catalogue_items (organization_id, name, id);

CREATE TABLE garment_variants (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  garment_catalogue_item_id uuid NOT NULL REFERENCES catalogue_items (id),
  style_code text NOT NULL,
  color text NOT NULL,
  size text NOT NULL,
  stock_code text,
  color_hex text,
  country_of_manufacture text,
  stock_on_hand integer NOT NULL DEFAULT 0,
  stock_reserved integer NOT NULL DEFAULT 0 CHECK (stock_reserved >= 0),
  supplier_stock integer NOT NULL DEFAULT 0 CHECK (supplier_stock >= 0),
  -- [{ "location": text, "quantity": int }]; when not empty, stock_on_hand is its sum.
  stock_by_location jsonb NOT NULL DEFAULT '[]',
  -- [{ "quantity": int, "availableOn": "YYYY-MM-DD" }], the supplier's future availability.
  future_availability jsonb NOT NULL DEFAULT '[]',
  is_discontinued boolean NOT NULL DEFAULT false,
  images text[] NOT NULL DEFAULT '{}',
  source text NOT NULL DEFAULT 'manual',
  next_delivery_eta timestamptz,
  unit_price numeric(14, 4),
  external_id text,
  last_synced_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (garment_catalogue_item_id, color, size)
);
CREATE INDEX garment_variants_org ON garment_variants (organization_id, style_code, color);
CREATE INDEX garment_variants_updated ON garment_variants (organization_id, updated_at, id);

-- Every change of a variant's stock, with who made it and the figures after it.
CREATE TABLE stock_adjustments (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  garment_variant_id uuid NOT NULL REFERENCES garment_variants (id) ON DELETE CASCADE,
  location text,
  delta integer NOT NULL,
  reason text NOT NULL,
  reference text,
  note text,
  stock_on_hand_after integer NOT NULL,
  location_quantity_after integer,
  credential_kind text NOT NULL,
  credential_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stock_adjustments_variant ON stock_adjustments (garment_variant_id, created_at, id);

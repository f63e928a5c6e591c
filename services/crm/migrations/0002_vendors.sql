-- Vendors with their contacts and addresses. A vendor is archived, never deleted.

CREATE TABLE vendors (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('InventorySupplier', 'Decorator', 'ConsumablesSupplier',
    'Freight', 'Other')),
  service_types text[] NOT NULL DEFAULT '{}' CHECK (service_types <@ ARRAY['ScreenPrint',
    'Embroidery', 'DirectToGarment', 'DirectToFilm', 'Transfers', 'Sublimation', 'PadPrint',
    'LaserEngraving', 'Digitizing', 'Finishing', 'Other']::text[]),
  -- Set by archive, cleared by unarchive; `isActive` is derived from it so the two cannot differ.
  archived_at timestamptz,
  is_active boolean GENERATED ALWAYS AS (archived_at IS NULL) STORED,
  is_managed boolean NOT NULL DEFAULT false,
  logo_url text,
  orders_website text,
  account_number text,
  default_lead_time_days integer,
  minimum_order numeric(14, 2),
  proximity_notes text,
  notes text,
  -- { "<definition id>": value }, checked against the definitions when written.
  custom_fields jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vendors_org_name ON vendors (organization_id, is_active, name, id);
CREATE INDEX vendors_custom_fields ON vendors USING gin (custom_fields);

CREATE TABLE vendor_contacts (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  vendor_id uuid NOT NULL REFERENCES vendors (id),
  first_name text,
  last_name text,
  email text,
  phone text,
  role text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vendor_contacts_vendor ON vendor_contacts (vendor_id, created_at, id);

CREATE TABLE vendor_addresses (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  vendor_id uuid NOT NULL REFERENCES vendors (id),
  label text,
  street text,
  city text,
  state text,
  postcode text,
  country text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vendor_addresses_vendor ON vendor_addresses (vendor_id, created_at, id);

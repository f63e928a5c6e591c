-- Custom field definitions, and customers with their contacts and addresses.

CREATE TABLE custom_field_definitions (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  type text NOT NULL,
  entity text NOT NULL,
  options text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX custom_field_definitions_org ON custom_field_definitions (organization_id, entity);

CREATE TABLE customers (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  company_name text NOT NULL,
  email text,
  phone text,
  tier text NOT NULL DEFAULT 'standard',
  -- Lower-cased: tags compare without regard to case.
  tags text[] NOT NULL DEFAULT '{}',
  tax_exempt boolean NOT NULL DEFAULT false,
  tax_number text,
  default_markup_group_id uuid,
  sales_rep_email text,
  notes text,
  -- { "<definition id>": value }, checked against the definitions when written.
  custom_fields jsonb NOT NULL DEFAULT '{}',
  is_archived boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customers_org ON customers (organization_id, created_at, id);
CREATE INDEX customers_tier ON customers (organization_id, tier);
CREATE INDEX customers_custom_fields ON customers USING gin (custom_fields);

CREATE TABLE customer_contacts (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  first_name text,
  last_name text,
  email text,
  phone text,
  role text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_contacts_customer ON customer_contacts (customer_id, created_at, id);

CREATE TABLE customer_addresses (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  label text,
  street text,
  city text,
  state text,
  postcode text,
  country text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX customer_addresses_customer ON customer_addresses (customer_id, created_at, id);

-- Quote numbers are per organisation; one counter row per organisation, bumped with a row lock,
-- hands out numbers without races between concurrent creates.
CREATE TABLE quote_ref_counters (
  organization_id uuid PRIMARY KEY,
  last_number integer NOT NULL
);

CREATE TABLE quotes (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  quote_number integer NOT NULL,
  quote_ref text NOT NULL,
  status text NOT NULL DEFAULT 'draft'
    CHECK (status IN ('draft', 'sent', 'approved', 'declined', 'expired')),
  subtotal_ex_gst numeric(16, 2) NOT NULL DEFAULT 0,
  gst_amount numeric(16, 2) NOT NULL DEFAULT 0,
  total_inc_gst numeric(16, 2) NOT NULL DEFAULT 0,
  reference text,
  client_id uuid,
  contact_id uuid,
  shipping_address_id uuid,
  sales_rep_email text,
  delivery_method text,
  delivery_date date,
  production_deadline date,
  invoice_due_date date,
  notes text,
  tax_rate_id uuid,
  tax_name text NOT NULL DEFAULT 'GST',
  tax_rate_pct numeric(7, 4) NOT NULL DEFAULT 10,
  mock_id uuid,
  job_id text,
  job_ref text,
  invoice_id text,
  invoice_status text,
  sent_to_email text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, quote_number)
);
CREATE INDEX quotes_by_created ON quotes (organization_id, created_at, id);
CREATE INDEX quotes_by_client ON quotes (organization_id, client_id);
CREATE INDEX quotes_by_status ON quotes (organization_id, status);

CREATE TABLE quote_groups (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  quote_id uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
  name text NOT NULL,
  sort_order integer NOT NULL CHECK (sort_order >= 1),
  roll_up_decoration boolean NOT NULL DEFAULT false,
  roll_up_setup boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quote_groups_by_quote ON quote_groups (quote_id, sort_order, id);

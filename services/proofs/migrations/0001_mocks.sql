-- Mocks: artwork placed on a garment for a quote, a quote group or a job.

CREATE TABLE mocks (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  -- Ids in other services (quotes; jobs), kept as given. At least one is set.
  quote_id uuid,
  quote_group_id uuid,
  job_id uuid,
  name text NOT NULL,
  -- https URLs, in the order they are shown.
  images text[] NOT NULL DEFAULT '{}',
  notes text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (quote_id IS NOT NULL OR quote_group_id IS NOT NULL OR job_id IS NOT NULL)
);
CREATE INDEX mocks_quote ON mocks (organization_id, quote_id, created_at, id)
  WHERE quote_id IS NOT NULL;
CREATE INDEX mocks_quote_group ON mocks (organization_id, quote_group_id, created_at, id)
  WHERE quote_group_id IS NOT NULL;
CREATE INDEX mocks_job ON mocks (organization_id, job_id, created_at, id)
  WHERE job_id IS NOT NULL;

-- Tasks with their checklist items, comments and attachments.

CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  title text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'todo'
    CHECK (status IN ('todo', 'in_progress', 'done', 'cancelled')),
  priority text NOT NULL DEFAULT 'normal'
    CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  due_date date,
  assignee_email text,
  -- Ids in other services (quotes; jobs), kept as given.
  quote_id uuid,
  job_id uuid,
  -- Checked to be the organisation's before they are written; a deleted customer unlinks.
  customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
  vendor_id uuid REFERENCES vendors (id) ON DELETE SET NULL,
  -- { "<definition id>": value }, checked against the definitions when written.
  custom_fields jsonb NOT NULL DEFAULT '{}',
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_org ON tasks (organization_id, created_at, id);
CREATE INDEX tasks_due ON tasks (organization_id, due_date, id);
CREATE INDEX tasks_status ON tasks (organization_id, status);
CREATE INDEX tasks_assignee ON tasks (organization_id, assignee_email);
CREATE INDEX tasks_customer ON tasks (customer_id) WHERE customer_id IS NOT NULL;
CREATE INDEX tasks_vendor ON tasks (vendor_id) WHERE vendor_id IS NOT NULL;
CREATE INDEX tasks_quote ON tasks (organization_id, quote_id) WHERE quote_id IS NOT NULL;
CREATE INDEX tasks_custom_fields ON tasks USING gin (custom_fields);

CREATE TABLE task_checklist_items (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  text text NOT NULL,
  completed boolean NOT NULL DEFAULT false,
  -- 1..n within the task, kept by a SortSequence.
  sort_order integer NOT NULL,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_checklist_items_task ON task_checklist_items (task_id, sort_order, id);

-- Authors are credentials: the gateway tells a service the caller's kind and id, no person.
CREATE TABLE task_comments (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  body text NOT NULL,
  author_credential_kind text NOT NULL,
  author_credential_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  edited_at timestamptz
);
CREATE INDEX task_comments_task ON task_comments (task_id, created_at, id);

CREATE TABLE task_attachments (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  file_url text NOT NULL,
  filename text NOT NULL,
  mime_type text NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  uploaded_by_credential_kind text NOT NULL,
  uploaded_by_credential_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_attachments_task ON task_attachments (task_id, created_at, id);

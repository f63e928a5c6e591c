-- `search` on customers, vendors and tasks, served by trigram indexes. Why a function that runs
-- past the row-level policies, why one index over the searched columns joined, and how it is
-- planned: quotes migration 0010. Each answers only ids of the organisation the transaction
-- names; the list reads those rows under the policies (shared/db/pages.ts). Each is the one
-- statement of which columns its list's `search` looks in.
SELECT set_config('search_path', current_setting('search_path') || ', ' ||
  (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), true);

-- A customer's tags as one text: array_to_string is only STABLE for arrays in general (an
-- element's output may depend on settings), but text elements print as themselves.
CREATE FUNCTION tags_text(tags text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_string(tags, ' ');

CREATE FUNCTION customers_search_text(c customers) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN c.company_name || ' ' || coalesce(c.email, '') || ' ' || coalesce(c.phone, '') || ' '
    || coalesce(c.tax_number, '') || ' ' || tags_text(c.tags);
CREATE INDEX customers_search ON customers
  USING gin (customers_search_text(customers) gin_trgm_ops);
CREATE FUNCTION customers_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT c.id FROM customers c
  WHERE organization = organization_in_force() AND c.organization_id = organization
    AND customers_search_text(c) ILIKE pattern ESCAPE '\'
    AND (c.company_name ILIKE pattern ESCAPE '\' OR c.email ILIKE pattern ESCAPE '\'
      OR c.phone ILIKE pattern ESCAPE '\' OR c.tax_number ILIKE pattern ESCAPE '\'
      OR tags_text(c.tags) ILIKE pattern ESCAPE '\');
END;

CREATE FUNCTION vendors_search_text(v vendors) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN v.name || ' ' || coalesce(v.account_number, '') || ' ' || coalesce(v.notes, '');
CREATE INDEX vendors_search ON vendors USING gin (vendors_search_text(vendors) gin_trgm_ops);
CREATE FUNCTION vendors_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT v.id FROM vendors v
  WHERE organization = organization_in_force() AND v.organization_id = organization
    AND vendors_search_text(v) ILIKE pattern ESCAPE '\'
    AND (v.name ILIKE pattern ESCAPE '\' OR v.account_number ILIKE pattern ESCAPE '\'
      OR v.notes ILIKE pattern ESCAPE '\');
END;

CREATE FUNCTION tasks_search_text(t tasks) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN t.title || ' ' || coalesce(t.description, '');
CREATE INDEX tasks_search ON tasks USING gin (tasks_search_text(tasks) gin_trgm_ops);
CREATE FUNCTION tasks_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT t.id FROM tasks t
  WHERE organization = organization_in_force() AND t.organization_id = organization
    AND tasks_search_text(t) ILIKE pattern ESCAPE '\'
    AND (t.title ILIKE pattern ESCAPE '\' OR t.description ILIKE pattern ESCAPE '\');
END;

-- The touches of 0004/0005 ran as static statements of their trigger functions, and PL/pgSQL keeps
-- a statement's plan for the life of the connection. A service's pooled connection lives as long
-- as the process, so a touch first run while the shop had a handful of quotes (when scanning the
-- table is the cheapest plan) kept scanning every quote of every shop on each row write once the
-- table held thousands (measured: ~0.4 ms per touch at 4,500 quotes, twice per variant PATCH).
-- Each touch is now planned when it runs (EXECUTE), from the table's size and the change's row
-- count as they are then, so it finds its quotes by key. Planning adds ~0.06 ms to a touch (~0.1
-- ms in all, where a kept plan on a small table took ~0.065), far less than the scan it avoids.
-- The table is named in the trigger's own schema, so a write from a session with another
-- search_path touches the right quotes.
CREATE OR REPLACE FUNCTION quote_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  touched uuid[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    touched := ARRAY(SELECT DISTINCT quote_id FROM new_rows);
  ELSIF TG_OP = 'DELETE' THEN
    touched := ARRAY(SELECT DISTINCT quote_id FROM old_rows);
  ELSE
    touched := ARRAY(SELECT quote_id FROM new_rows UNION SELECT quote_id FROM old_rows);
  END IF;
  EXECUTE format(
    'UPDATE %I.quotes SET document_with_costs = NULL, document_without_costs = NULL
     WHERE id = ANY ($1)
       AND NOT (document_with_costs IS NULL AND document_without_costs IS NULL
         AND xmin = pg_current_xact_id()::xid)',
    TG_TABLE_SCHEMA) USING touched;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION quote_clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'UPDATE %I.quotes q SET document_with_costs = NULL, document_without_costs = NULL
     FROM (%s) c
     WHERE q.organization_id = c.organization_id AND q.client_id = c.id',
    TG_TABLE_SCHEMA,
    CASE TG_OP
      WHEN 'INSERT' THEN 'SELECT DISTINCT organization_id, id FROM new_rows'
      WHEN 'DELETE' THEN 'SELECT DISTINCT organization_id, id FROM old_rows'
      ELSE 'SELECT organization_id, id FROM new_rows UNION SELECT organization_id, id FROM old_rows'
    END);
  RETURN NULL;
END $$;

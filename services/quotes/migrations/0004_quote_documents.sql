-- Each quote keeps its rendered JSON (store/quote_json.ts), one text per cost visibility, so a
-- read sends a stored text instead of building a 60-variant quote again on every GET. A document
-- is written by the read that rendered it, and only if the quote has not changed since
-- (store/quote_documents.ts). Correctness rests on this file alone: every change to anything a
-- document shows clears the quote's documents in the same statement, so no write path can forget
-- to, and the clearing always writes the quote's row, so its xmin moves and a render taken
-- before the change can never be stored after it.
ALTER TABLE quotes
  ADD COLUMN document_with_costs text,
  ADD COLUMN document_without_costs text;

-- Any update of a quote's own row that does not itself store a document clears both.
CREATE FUNCTION quote_documents_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.document_with_costs IS NOT DISTINCT FROM OLD.document_with_costs
     AND NEW.document_without_costs IS NOT DISTINCT FROM OLD.document_without_costs THEN
    NEW.document_with_costs := NULL;
    NEW.document_without_costs := NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER quotes_forget_documents BEFORE UPDATE ON quotes
  FOR EACH ROW EXECUTE FUNCTION quote_documents_forget();

-- A change to a quote's rows (groups, lines, variants, decorations) touches the quote, once per
-- statement whatever the number of rows. Unconditional: a quote with no document yet still gets
-- a new row version, which is what turns away a store of a render from before the change.
CREATE FUNCTION quote_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT DISTINCT quote_id FROM new_rows);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT DISTINCT quote_id FROM old_rows);
  ELSE
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT quote_id FROM new_rows UNION SELECT quote_id FROM old_rows);
  END IF;
  RETURN NULL;
END $$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['quote_groups', 'quote_lines', 'quote_variants', 'quote_decorations']
  LOOP
    EXECUTE format('CREATE TRIGGER %1$s_insert_touches_quote AFTER INSERT ON %1$I
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION quote_rows_changed()', t);
    EXECUTE format('CREATE TRIGGER %1$s_update_touches_quote AFTER UPDATE ON %1$I
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION quote_rows_changed()', t);
    EXECUTE format('CREATE TRIGGER %1$s_delete_touches_quote AFTER DELETE ON %1$I
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION quote_rows_changed()', t);
  END LOOP;
END $$;

-- A quote shows its client's name from the customer projection: a change there touches the
-- client's quotes.
CREATE FUNCTION quote_clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE quotes q SET document_with_costs = NULL, document_without_costs = NULL
    FROM (SELECT DISTINCT organization_id, id FROM new_rows) c
    WHERE q.organization_id = c.organization_id AND q.client_id = c.id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE quotes q SET document_with_costs = NULL, document_without_costs = NULL
    FROM (SELECT DISTINCT organization_id, id FROM old_rows) c
    WHERE q.organization_id = c.organization_id AND q.client_id = c.id;
  ELSE
    UPDATE quotes q SET document_with_costs = NULL, document_without_costs = NULL
    FROM (SELECT organization_id, id FROM new_rows UNION SELECT organization_id, id FROM old_rows) c
    WHERE q.organization_id = c.organization_id AND q.client_id = c.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER crm_customers_insert_touches_quotes AFTER INSERT ON crm_customers
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION quote_clients_changed();
CREATE TRIGGER crm_customers_update_touches_quotes AFTER UPDATE ON crm_customers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION quote_clients_changed();
CREATE TRIGGER crm_customers_delete_touches_quotes AFTER DELETE ON crm_customers
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION quote_clients_changed();

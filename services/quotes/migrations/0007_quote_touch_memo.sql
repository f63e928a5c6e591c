-- A write to a quote's rows is several statements in one transaction (a variant's INSERT, then its
-- line's derived quantity; a line's DELETE, its variants' cascade, the compaction of its
-- siblings), and each statement's touch (0006) planned and ran an UPDATE of the quote, though
-- only the first could change anything: after it, the documents are null and the row's version is
-- this transaction's. Measured in-process on a line turn (a line, its 5 variants, its delete: 7
-- transactions, one after another), the touches were ~2 of PostgreSQL's ~7 ms per turn.
--
-- So the transaction now remembers which quotes it has cleared, in a setting local to it
-- (`printshop.cleared_quotes`, a uuid[] as text), and a touch of quotes it names runs no
-- statement. A quote is remembered once its documents are null on a row version this transaction
-- wrote: by the trigger on the quote's own row when it clears them, and by a touch after its
-- UPDATE (which wrote each quote, or found it so already). The service locks a quote for a change
-- with an UPDATE that clears it (store/aggregate.ts), so the change's row statements usually run
-- no touch at all: ~0.8–1.1 ms less PostgreSQL time per line turn.
--
-- A statement that stores a document (never inside a write transaction today) forgets every
-- quote, so a later change in that transaction touches again. The setting follows the
-- transaction: it is gone at its end, and a savepoint rolled back takes back what was remembered
-- under it along with the row versions.
CREATE OR REPLACE FUNCTION quote_documents_forget() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cleared uuid[];
BEGIN
  IF NEW.document_with_costs IS NOT DISTINCT FROM OLD.document_with_costs
     AND NEW.document_without_costs IS NOT DISTINCT FROM OLD.document_without_costs THEN
    NEW.document_with_costs := NULL;
    NEW.document_without_costs := NULL;
    cleared := coalesce(nullif(current_setting('printshop.cleared_quotes', true), ''), '{}');
    IF NOT NEW.id = ANY (cleared) THEN
      PERFORM set_config('printshop.cleared_quotes', (cleared || NEW.id)::text, true);
    END IF;
  ELSE
    PERFORM set_config('printshop.cleared_quotes', '', true);
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION quote_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  touched uuid[];
  cleared uuid[] := coalesce(nullif(current_setting('printshop.cleared_quotes', true), ''), '{}');
BEGIN
  IF TG_OP = 'INSERT' THEN
    touched := ARRAY(SELECT DISTINCT quote_id FROM new_rows);
  ELSIF TG_OP = 'DELETE' THEN
    touched := ARRAY(SELECT DISTINCT quote_id FROM old_rows);
  ELSE
    touched := ARRAY(SELECT quote_id FROM new_rows UNION SELECT quote_id FROM old_rows);
  END IF;
  -- Nothing changed (a statement that matched no row), or only quotes already cleared.
  IF touched <@ cleared THEN
    RETURN NULL;
  END IF;
  EXECUTE format(
    'UPDATE %I.quotes SET document_with_costs = NULL, document_without_costs = NULL
     WHERE id = ANY ($1)
       AND NOT (document_with_costs IS NULL AND document_without_costs IS NULL
         AND xmin = pg_current_xact_id()::xid)',
    TG_TABLE_SCHEMA) USING touched;
  -- Each of them is now cleared by this transaction: written above, or already so (the guard).
  PERFORM set_config('printshop.cleared_quotes', (cleared || touched)::text, true);
  RETURN NULL;
END $$;

-- A change to a quote's rows touches the quote (0004_quote_documents.sql) once per statement, but
-- a write usually changes several tables in one transaction (a variant, then its line's derived
-- quantity and the quote's totals), and each statement's touch rewrote the quote's row again.
-- The touch exists for two things: the quote's documents are cleared, and its row gets a version
-- no render taken before the change can carry. Once this transaction has done both, a further
-- touch adds nothing: the documents are already null and the row's xmin is already this
-- transaction's (a document is stored only outside write transactions, and only over the version
-- it was rendered from). So a touch now skips such a quote; the first touch of a transaction, and
-- any touch of a quote with a document, still writes.
CREATE OR REPLACE FUNCTION quote_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT DISTINCT quote_id FROM new_rows)
      AND NOT (document_with_costs IS NULL AND document_without_costs IS NULL
        AND xmin = pg_current_xact_id()::xid);
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT DISTINCT quote_id FROM old_rows)
      AND NOT (document_with_costs IS NULL AND document_without_costs IS NULL
        AND xmin = pg_current_xact_id()::xid);
  ELSE
    UPDATE quotes SET document_with_costs = NULL, document_without_costs = NULL
    WHERE id IN (SELECT quote_id FROM new_rows UNION SELECT quote_id FROM old_rows)
      AND NOT (document_with_costs IS NULL AND document_without_costs IS NULL
        AND xmin = pg_current_xact_id()::xid);
  END IF;
  RETURN NULL;
END $$;

-- The quote list's `search`: declared again (platform migration 0007), so each trigram index is
-- built over the searched columns rather than over a function of the whole row. A quote is
-- updated by every change to its rows (its totals, `updated_at`); with the old index none of
-- those updates could be heap-only, and each wrote into all nine of the quote's indexes. The
-- columns and the client's-name branch are those of 0013; this is now the statement of which
-- columns the list's `search` looks in.
-- The quotes' functions call the projection's, so they go first and are made again after it.
DROP FUNCTION quotes_matching(text, uuid);
SELECT declare_search('crm_customers', ARRAY['name']);
SELECT declare_search('quotes', ARRAY['quote_ref', 'reference', 'notes', 'client_id'], $also$
  SELECT q.id FROM crm_customers_matching(pattern, organization) AS m (id)
  JOIN crm_customers c ON c.organization_id = organization AND c.id = m.id AND NOT c.deleted
  JOIN quotes q ON q.organization_id = organization AND q.client_id = c.id
$also$);

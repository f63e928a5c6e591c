-- The quote list's `search`: declared again (platform migration 0005), so a list that need not
-- count can walk its rows in order for a common term; the columns and the client's-name branch
-- are those of 0010 and 0012 and the indexes are kept. This is now the statement of which
-- columns the list's `search` looks in.
-- The quotes' functions call the projection's, so they go first and are made again after it.
DROP FUNCTION quotes_matching(text, uuid);
SELECT declare_search('crm_customers', ARRAY['name']);
SELECT declare_search('quotes', ARRAY['quote_ref', 'reference', 'notes', 'client_id'], $also$
  SELECT q.id FROM crm_customers_matching(pattern, organization) AS m (id)
  JOIN crm_customers c ON c.organization_id = organization AND c.id = m.id AND NOT c.deleted
  JOIN quotes q ON q.organization_id = organization AND q.client_id = c.id
$also$);

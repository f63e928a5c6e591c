-- The quote list's `search` (platform migration 0003, declare_search): a quote's ref, reference,
-- notes and client id, and its client's name as the customer projection knows it while the
-- customer is not deleted (store/customers.ts, clientNameSql), found through the projection's
-- own search and then the client's quotes by key.
SELECT declare_search('crm_customers', ARRAY['name']);
SELECT declare_search('quotes', ARRAY['quote_ref', 'reference', 'notes', 'client_id'], $also$
  SELECT q.id FROM crm_customers_matching(pattern, organization) AS m (id)
  JOIN crm_customers c ON c.organization_id = organization AND c.id = m.id AND NOT c.deleted
  JOIN quotes q ON q.organization_id = organization AND q.client_id = c.id
$also$);

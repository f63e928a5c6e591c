-- `search` on customers, vendors and tasks: declared again (platform migration 0007), so each
-- trigram index is built over the searched columns rather than over a function of the whole row,
-- and an update that changes none of them can be heap-only. The columns are those of 0008; this
-- is now the statement of which columns each list's `search` looks in.
SELECT declare_search('customers', ARRAY['company_name', 'email', 'phone', 'tax_number', 'tags']);
SELECT declare_search('vendors', ARRAY['name', 'account_number', 'notes']);
SELECT declare_search('tasks', ARRAY['title', 'description']);

-- `search` on customers, vendors and tasks: declared again (platform migration 0005), so a list
-- that need not count can walk its rows in order for a common term; the columns are those of
-- 0006 and 0007 and the indexes are kept. This is now the statement of which columns each
-- list's `search` looks in.
SELECT declare_search('customers', ARRAY['company_name', 'email', 'phone', 'tax_number', 'tags']);
SELECT declare_search('vendors', ARRAY['name', 'account_number', 'notes']);
SELECT declare_search('tasks', ARRAY['title', 'description']);

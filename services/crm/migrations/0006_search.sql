-- `search` on customers, vendors and tasks (platform migration 0003, declare_search): the one
-- statement of which columns each list's `search` looks in.
SELECT declare_search('customers', ARRAY['company_name', 'email', 'phone', 'tax_number', 'tags']);
SELECT declare_search('vendors', ARRAY['name', 'account_number', 'notes']);
SELECT declare_search('tasks', ARRAY['title', 'description']);

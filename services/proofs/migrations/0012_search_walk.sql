-- `search` on proofs: declared again (platform migration 0005), so a list that need not count
-- can walk its rows in order for a common term; the columns are those of 0009 and 0011 and the
-- index is kept. This is now the statement of which columns the list's `search` looks in.
SELECT declare_search('proofs', ARRAY['title', 'recipient_name', 'recipient_email']);

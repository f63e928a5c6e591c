-- `search` on proofs: declared again (platform migration 0007), so the trigram index is built
-- over the searched columns rather than over a function of the whole row, and an update that
-- changes none of them can be heap-only. The columns are those of 0012; this is now the
-- statement of which columns the list's `search` looks in.
SELECT declare_search('proofs', ARRAY['title', 'recipient_name', 'recipient_email']);

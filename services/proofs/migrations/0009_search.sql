-- `search` on proofs (platform migration 0003, declare_search): the one statement of which
-- columns the list's `search` looks in.
SELECT declare_search('proofs', ARRAY['title', 'recipient_name', 'recipient_email']);

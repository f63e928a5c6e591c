-- `search` on proofs: declared again (platform migration 0004), so a search asks its trigram
-- index for the rarest piece of the text; the columns are those of 0009 and the index is kept.
-- This is now the statement of which columns the list's `search` looks in.
SELECT declare_search('proofs', ARRAY['title', 'recipient_name', 'recipient_email']);

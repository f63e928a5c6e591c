-- A revision's delete (a proof's, cascading) removes the mail rows that sent it (ON DELETE
-- CASCADE), which had no index on the revision: each read the table whole. Found by the index
-- inventory (docs/indexes.md).
CREATE INDEX mail_message_proofs_revision ON mail_message_proofs (revision_id);
-- Nothing reads approval links by proof (a link is found by its token's id, and leads to its
-- proof, never the other way): this one only cost every send an entry.
DROP INDEX approval_links_proof;

-- `search` on proofs (title, recipient's name and address), served by a trigram index. Why a
-- function that runs past the row-level policies, why one index over the searched columns
-- joined, and how it is planned: quotes migration 0010. It answers only ids of the organisation
-- the transaction names; the list reads those proofs under the policies (shared/db/pages.ts). It
-- is the one statement of which columns the list's `search` looks in.
SELECT set_config('search_path', current_setting('search_path') || ', ' ||
  (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), true);

CREATE FUNCTION proofs_search_text(p proofs) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce(p.title, '') || ' ' || p.recipient_name || ' ' || p.recipient_email;
CREATE INDEX proofs_search ON proofs USING gin (proofs_search_text(proofs) gin_trgm_ops);
CREATE FUNCTION proofs_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT p.id FROM proofs p
  WHERE organization = organization_in_force() AND p.organization_id = organization
    AND proofs_search_text(p) ILIKE pattern ESCAPE '\'
    AND (p.title ILIKE pattern ESCAPE '\' OR p.recipient_name ILIKE pattern ESCAPE '\'
      OR p.recipient_email ILIKE pattern ESCAPE '\');
END;

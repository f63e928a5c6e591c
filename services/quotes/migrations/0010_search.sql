-- `search` on the quote list looks for the text in a quote's ref, reference, notes and client id
-- and in its client's name. As ILIKEs over the list it read every quote of the organisation
-- (1.5 s at 100,000 quotes in `deno task bench:scale`, ten times what 10,000 took). A trigram
-- index serves them, but not under the row-level policies: ILIKE is not leakproof, so the
-- planner runs it only after the policy's condition and never as an index condition. So the
-- search is a function that runs as its owner, past the policies, and answers only the ids of
-- the organisation the transaction names (organization_in_force); the list then reads those
-- quotes under the policies as before (shared/db/pages.ts). It is the one statement of which
-- columns `search` looks in.
--
-- One index over all the searched columns joined (quotes_search_text): one index scan, where an
-- index per column took one each (two to eight times slower, measured). The columns are then
-- checked one by one on the few rows found, so a text spanning two columns is no match.
--
-- How it is planned: for each call (plan_cache_mode), with the pattern and the organisation as
-- values; a generic plan cannot tell a pattern the index serves from one too short for it, nor a
-- shop of 100,000 quotes from one of ten, and a setting read inside a statement is unknown to the
-- planner, so the organisation comes in as an argument (defaulted to the one in force; any other
-- is answered nothing). cpu_operator_cost: an ILIKE costs about 1.2 µs a row, some fifty times
-- what the planner assumes of an operator, and at the default it would rather run five ILIKEs on
-- each of 20,000 rows (120 ms) than read the index (under 5 ms). ROWS 10 tells the list to look
-- the few ids up by key rather than walk the organisation's quotes in order.
SELECT set_config('search_path', current_setting('search_path') || ', ' ||
  (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), true);

CREATE FUNCTION quotes_search_text(q quotes) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN q.quote_ref || ' ' || coalesce(q.reference, '') || ' ' || coalesce(q.notes, '') || ' '
    || coalesce(q.client_id::text, '');
CREATE INDEX quotes_search ON quotes USING gin (quotes_search_text(quotes) gin_trgm_ops);
CREATE INDEX crm_customers_search ON crm_customers USING gin (name gin_trgm_ops);

CREATE FUNCTION quotes_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT q.id FROM quotes q
  WHERE organization = organization_in_force() AND q.organization_id = organization
    AND quotes_search_text(q) ILIKE pattern ESCAPE '\'
    AND (q.quote_ref ILIKE pattern ESCAPE '\' OR q.reference ILIKE pattern ESCAPE '\'
      OR q.notes ILIKE pattern ESCAPE '\' OR q.client_id::text ILIKE pattern ESCAPE '\')
  UNION
  -- The client's name as the customer projection knows it, while it is not deleted
  -- (store/customers.ts, clientNameSql).
  SELECT q.id FROM crm_customers c
  JOIN quotes q ON q.organization_id = c.organization_id AND q.client_id = c.id
  WHERE organization = organization_in_force() AND c.organization_id = organization
    AND NOT c.deleted AND c.name ILIKE pattern ESCAPE '\';
END;

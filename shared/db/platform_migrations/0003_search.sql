-- `search` on a list finds rows whose searched columns contain the text, ignoring case. Only a
-- trigram index (pg_trgm, shipped with PostgreSQL) can serve such an ILIKE, and under the
-- row-level policies none can: ILIKE is not leakproof, so the planner runs it only after the
-- policy's condition, never as an index condition, and every search read the organisation's rows
-- (1.5 s at 100,000 quotes in `deno task bench:scale`). So a searchable table gets, from
-- declare_search below, a function that reads its trigram index past the policies and answers
-- only ids of the organisation the transaction names; the list reads those rows under the
-- policies as before (shared/db/pages.ts, README "Search").
--
-- The extension is the database's, one for every service, so it lives in a schema of its own;
-- this file runs in every service's schema, and the lock keeps two services that start together
-- from creating it twice. pg_trgm is a trusted extension: the owner role may create it with the
-- CREATE right it has on the database. Where an operator installed it already (in any schema),
-- that copy is used.
SELECT pg_advisory_xact_lock(hashtext('printshop.extensions'));
CREATE SCHEMA IF NOT EXISTS printshop_extensions;
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA printshop_extensions;

-- The organisation the transaction serves, as the row-level policies read it (the setting
-- printshop.organization_id, shared/db/tenancy.ts): NULL when none is set.
CREATE FUNCTION organization_in_force() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE
  RETURN nullif(current_setting('printshop.organization_id', true), '')::uuid;

-- An array of texts as one text: array_to_string is only STABLE for arrays in general (an
-- element's output may depend on settings), but text elements print as themselves.
CREATE FUNCTION search_array_text(texts text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN array_to_string(texts, ' ');

-- Makes `<table>` searchable by `columns` (text, text[] or anything with a text form, such as a
-- uuid), as a migration declares it, once per table; declared again, it replaces what it made.
-- It makes three things:
-- - `<table>_search_text(row)`: the searched columns joined by spaces, and the one trigram index
--   on it, `<table>_search`: one index scan per search, where an index per column took one each
--   (two to eight times slower, measured).
-- - `<table>_matching(pattern)`: the ids of the rows of the organisation in force whose joined
--   text matches, each then checked column by column, so a text spanning two columns is no
--   match. It runs as its owner, past the policies, and answers no other organisation's rows:
--   the organisation comes in as an argument (defaulted to the one in force, and any other is
--   answered nothing) so that each call is planned for that organisation's size, with the
--   pattern as a value (plan_cache_mode): a generic plan cannot tell a shop of 100,000 rows from
--   one of ten, nor a pattern the index serves from one too short for it. cpu_operator_cost: an
--   ILIKE costs about 1.2 µs a row, some fifty times what the planner assumes of an operator,
--   and at the default it would rather run five ILIKEs on each of 20,000 rows (120 ms) than read
--   the index (under 5 ms). ROWS 10 tells the list to look the few ids up by key rather than
--   walk the organisation's rows in order.
-- `also`, when given, is a query of more ids, UNIONed in, that may use `pattern` and
-- `organization` (the quote list's search by its client's name).
CREATE FUNCTION declare_search(tab text, columns text[], also text DEFAULT NULL) RETURNS void
  LANGUAGE plpgsql AS $declare$
DECLARE
  texts text[];
  trgm text := (SELECT e.extnamespace::regnamespace::text FROM pg_extension e
    WHERE e.extname = 'pg_trgm');
BEGIN
  -- Each column's text form, read off its type, so a column can only be named, never written
  -- as an expression.
  SELECT array_agg(CASE
      WHEN a.attname IS NULL THEN NULL
      WHEN a.atttypid = 'text'::regtype THEN format('t.%I', a.attname)
      WHEN a.atttypid = 'text[]'::regtype THEN format('search_array_text(t.%I)', a.attname)
      ELSE format('t.%I::text', a.attname) END ORDER BY c.n)
    INTO texts
    FROM unnest(columns) WITH ORDINALITY AS c (name, n)
    LEFT JOIN pg_attribute a ON a.attrelid = tab::regclass AND a.attname = c.name
      AND a.attnum > 0 AND NOT a.attisdropped;
  IF texts IS NULL OR array_position(texts, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'declare_search(%, %): a column is not in the table', tab, columns;
  END IF;
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, uuid)', tab || '_matching');
  EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search');
  EXECUTE format(
    'CREATE OR REPLACE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE '
      'RETURN %s',
    tab || '_search_text', tab,
    (SELECT string_agg(format('coalesce(%s, %L)', x, ''), ' || '' '' || ') FROM unnest(texts) x));
  EXECUTE format('CREATE INDEX %I ON %I USING gin (%I(%I) %s.gin_trgm_ops)',
    tab || '_search', tab, tab || '_search_text', tab, trgm);
  EXECUTE format(
    'CREATE FUNCTION %I(pattern text, organization uuid DEFAULT organization_in_force()) '
      'RETURNS SETOF uuid LANGUAGE sql STABLE SECURITY DEFINER ROWS 10 '
      'SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1 '
      'BEGIN ATOMIC SELECT t.id FROM %I t '
      'WHERE organization = organization_in_force() AND t.organization_id = organization '
      'AND %I(t) ILIKE pattern ESCAPE %L AND (%s)%s; END',
    tab || '_matching', tab, tab || '_search_text', '\',
    (SELECT string_agg(format('%s ILIKE pattern ESCAPE %L', x, '\'), ' OR ') FROM unnest(texts) x),
    coalesce(' UNION ' || also, ''));
END
$declare$;
-- Migrations only: what it makes is the owner's.
REVOKE ALL ON FUNCTION declare_search(text, text[], text) FROM PUBLIC;

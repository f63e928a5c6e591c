-- A search for a common term walks the list in its order instead of finding every match.
--
-- A term held by one row in ten ("Scale task 1" among 100,000 tasks: 11,112 rows) has no rare
-- piece (0004): the search function reads every match from the index and the heap, and a first
-- page of twenty cost what all 11,112 cost (127 ms at 100,000 tasks, 27 ms at 10,000, in
-- `deno task bench:scale`), although walking the list in its order finds twenty within a few
-- hundred rows. So a list that need not count (a cursor page, or an offset page with
-- `count=false`, shared/db/pages.ts) first asks whether the term is common, from the sample
-- ANALYZE keeps of the searched text; if so it takes the first rows of the list in its order and
-- asks which of those match. When enough of them do, those are the page, exactly: every match
-- further on comes later in the same order. When too few do (the shop's rows are not like the
-- sample), the list is answered as before. So a walk never changes an answer, only its cost.
--
-- The sample as rows with the share of the table each stands for: the most common values with
-- their frequency, and each histogram bound with an equal part of the rest. No rows when the
-- index's expression has no histogram (a table never analysed, or too small), as before: with
-- too few texts, a share read off them means nothing. The statistics are read as the owner of
-- the search functions, the only role that sees them (search_index_pattern, 0004, says why
-- through the names).
CREATE FUNCTION search_sample(searched text)
  RETURNS TABLE (sample_text text, sample_share float8)
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET search_path = pg_catalog, pg_temp
  SET plan_cache_mode = auto
  AS $body$
BEGIN
  RETURN QUERY
    WITH s AS (
      SELECT st.most_common_vals::text::text[] AS common, st.most_common_freqs AS shares,
        st.histogram_bounds::text::text[] AS bounds, st.null_frac AS nulls
      FROM pg_stats st
      WHERE (st.schemaname, st.tablename) = (SELECT n.nspname::text, i.relname::text
        FROM pg_class i JOIN pg_namespace n ON n.oid = i.relnamespace
        WHERE i.oid = to_regclass(searched))
        AND st.histogram_bounds IS NOT NULL)
    SELECT c.v, c.f::float8 FROM s, unnest(s.common, s.shares) AS c (v, f)
    UNION ALL
    SELECT b.v, (1 - s.nulls - coalesce((SELECT sum(f) FROM unnest(s.shares) AS f), 0))::float8
        / cardinality(s.bounds)
      FROM s, unnest(s.bounds) AS b (v);
END
$body$;
REVOKE ALL ON FUNCTION search_sample(text) FROM PUBLIC;

-- As in 0004, the sample now read through search_sample (on the search path set below).
CREATE OR REPLACE FUNCTION search_index_pattern(pattern text, searched text) RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET search_path = pg_catalog, pg_temp
  SET plan_cache_mode = auto
  AS $body$
DECLARE
  pieces text[] := ARRAY(SELECT DISTINCT p
    FROM regexp_split_to_table(lower(pattern), '[^a-z0-9]+') AS p WHERE length(p) >= 3);
  texts text[];
  shares float8[];
  piece text;
  share float8;
  best text;
  best_share float8 := 0.02;
BEGIN
  IF cardinality(pieces) = 0
    OR (cardinality(pieces) = 1 AND lower(pattern) = '%' || pieces[1] || '%') THEN
    RETURN pattern;
  END IF;
  SELECT array_agg(s.sample_text), array_agg(s.sample_share) INTO texts, shares
    FROM search_sample(searched) AS s;
  IF texts IS NULL THEN
    RETURN pattern;
  END IF;
  FOREACH piece IN ARRAY pieces LOOP
    share := coalesce((SELECT sum(x.f) FROM unnest(texts, shares) AS x (v, f)
      WHERE strpos(lower(x.v), piece) > 0), 0);
    IF share < best_share OR (share = best_share AND length(piece) > length(best)) THEN
      best := piece;
      best_share := share;
    END IF;
  END LOOP;
  RETURN coalesce('%' || best || '%', pattern);
END
$body$;

-- The share of the searched rows whose text matches the pattern, by the sample; NULL without
-- one. The joined text is matched, not each column: a text spanning two columns counts here,
-- which can only make a term look commoner than it is, and costs a walk that finds too few.
CREATE FUNCTION search_share(pattern text, searched text) RETURNS float8
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  SET search_path = pg_catalog, pg_temp
  SET plan_cache_mode = auto
  AS $body$
BEGIN
  RETURN (SELECT CASE WHEN count(*) > 0 THEN
      coalesce(sum(s.sample_share) FILTER (WHERE s.sample_text ILIKE pattern ESCAPE '\'), 0) END
    FROM search_sample(searched) AS s);
END
$body$;
REVOKE ALL ON FUNCTION search_share(text, text) FROM PUBLIC;

-- The two that read the sample find search_sample in this schema, behind the catalogue (so
-- nothing here can stand in for what the catalogue names); only the owner creates in it.
DO $path$
BEGIN
  EXECUTE format('ALTER FUNCTION search_index_pattern(text, text) '
    'SET search_path = pg_catalog, %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION search_share(text, text) '
    'SET search_path = pg_catalog, %I, pg_temp', current_schema());
END
$path$;

-- declare_search as in migration 0004, making two more functions beside `<table>_matching`:
-- - `<table>_matching_is_common(pattern, at_least)`: whether, by the sample, at least that share
--   of the searched rows matches (the list says what share makes a walk worth it). It answers
--   from every organisation's sample, and so does nothing but choose how a list looks for its
--   rows, never what it answers: at most whether a walk was made could show in the time an
--   answer takes, as whether a search was narrowed could (0004).
-- - `<table>_matching_among(pattern, among)`: which of the ids `among` are rows of the
--   organisation in force that match, checked column by column as `<table>_matching` checks
--   them: the walk's check of the rows it took. Read by key, never through the trigram index.
--   Not made for a table declared with `also` (below), which is never walked.
CREATE OR REPLACE FUNCTION declare_search(tab text, columns text[], also text DEFAULT NULL)
  RETURNS void LANGUAGE plpgsql AS $declare$
DECLARE
  texts text[];
  joined text;
  kept boolean;
  trgm text := (SELECT e.extnamespace::regnamespace::text FROM pg_extension e
    WHERE e.extname = 'pg_trgm');
  index_name text := format('%I.%I', current_schema(), tab || '_search');
  indexable constant text := '[a-z0-9]{3}';
  matches text;
BEGIN
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
  joined := (SELECT string_agg(format('coalesce(%s, %L)', x, ''), ' || '' '' || ')
    FROM unnest(texts) x);
  EXECUTE format(
    'CREATE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE RETURN %s',
    tab || '_search_text_declared', tab, joined);
  EXECUTE format(
    'SELECT coalesce((SELECT x.indisvalid FROM pg_index x WHERE x.indexrelid = to_regclass(%L)) '
      'AND pg_get_function_sqlbody(to_regprocedure(%L)) = '
      'pg_get_function_sqlbody(to_regprocedure(%L)), false)',
    index_name, format('%I(%I)', tab || '_search_text', tab),
    format('%I(%I)', tab || '_search_text_declared', tab))
    INTO kept;
  EXECUTE format('DROP FUNCTION %I(%I)', tab || '_search_text_declared', tab);
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, uuid)', tab || '_matching');
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, uuid[], uuid)', tab || '_matching_among');
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, float8)', tab || '_matching_is_common');
  IF NOT kept THEN
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search');
    EXECUTE format(
      'CREATE OR REPLACE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE '
        'RETURN %s',
      tab || '_search_text', tab, joined);
    EXECUTE format('CREATE INDEX %I ON %I USING gin (%I(%I) %s.gin_trgm_ops)',
      tab || '_search', tab, tab || '_search_text', tab, trgm);
  END IF;
  IF NOT EXISTS (SELECT FROM pg_stats s WHERE s.schemaname = current_schema()
      AND s.tablename = tab || '_search') THEN
    EXECUTE format('ANALYZE %I', tab);
  END IF;
  matches := (SELECT string_agg(format('%s ILIKE pattern ESCAPE %L', x, '\'), ' OR ')
    FROM unnest(texts) x);
  EXECUTE format(
    'CREATE FUNCTION %I(pattern text, organization uuid DEFAULT organization_in_force()) '
      'RETURNS SETOF uuid LANGUAGE sql STABLE SECURITY DEFINER ROWS 10 '
      'SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1 '
      'BEGIN ATOMIC '
      'SELECT t.id FROM %2$I t '
      'WHERE organization = organization_in_force() AND t.organization_id = organization '
      'AND lower(pattern) ~ %3$L AND %4$I(t) ILIKE (SELECT search_index_pattern(pattern, %5$L)) '
      'ESCAPE %6$L AND (%7$s) '
      'UNION ALL SELECT t.id FROM %2$I t '
      'WHERE organization = organization_in_force() AND t.organization_id = organization '
      'AND lower(pattern) !~ %3$L AND %4$I(t) ILIKE pattern ESCAPE %6$L AND (%7$s)%8$s; END',
    tab || '_matching', tab, indexable, tab || '_search_text', index_name, '\', matches,
    coalesce(' UNION ' || also, ''));
  -- A table with `also` is never walked: its check would have to run that query too, and
  -- would tie this function to the one it calls (so that neither could be declared again
  -- alone). The quote list, the one table with it, writes its own statements anyway.
  IF also IS NULL THEN
    EXECUTE format(
      'CREATE FUNCTION %I(pattern text, among uuid[], '
        'organization uuid DEFAULT organization_in_force()) '
        'RETURNS SETOF uuid LANGUAGE sql STABLE SECURITY DEFINER '
        'BEGIN ATOMIC '
        'SELECT t.id FROM %I t '
        'WHERE organization = organization_in_force() AND t.organization_id = organization '
        'AND t.id = ANY (among) AND (%s); END',
      tab || '_matching_among', tab, matches);
  END IF;
  EXECUTE format(
    'CREATE FUNCTION %I(pattern text, at_least float8) RETURNS boolean '
      'LANGUAGE sql STABLE SECURITY DEFINER '
      'BEGIN ATOMIC SELECT %s; END',
    tab || '_matching_is_common',
    CASE WHEN also IS NULL
      THEN format('coalesce(search_share(pattern, %L) >= at_least, false)', index_name)
      ELSE 'false' END);
END
$declare$;
REVOKE ALL ON FUNCTION declare_search(text, text[], text) FROM PUBLIC;

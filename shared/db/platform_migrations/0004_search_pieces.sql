-- A search asks its trigram index for the rarest piece of its text rather than for the whole.
--
-- A trigram index answers an ILIKE by reading the posting list of every trigram of the pattern
-- in full and intersecting them. A term such as "Scale task 1000" or "SC-000123" shares most of
-- its trigrams with nearly every row ("sca", "ask", "c-0"): each search read lists as long as
-- the table, and its cost grew with the data (`deno task bench:scale`: 2.4 to 4.8 times slower
-- at ten times the rows), although "1000" or "000123" alone names a handful of rows and reads
-- in a fraction of a millisecond. So the search function now asks the index for one piece (a
-- run of at least three ASCII letters and digits, the least a trigram index can use) and checks
-- the whole pattern on the rows it finds, column by column, as before: the answer is the same,
-- only cheaper. ASCII only, because those are word characters to pg_trgm under every locale
-- and provider: under PostgreSQL's builtin C.UTF-8 provider a regular expression's [[:alnum:]]
-- takes in "σοφια" while pg_trgm makes no trigram of it (tried), and a piece the index cannot
-- use would be read as the whole index. A term of other letters goes to the branch that shows
-- the planner its pattern (below).
--
-- Which piece: the one the fewest rows hold, estimated from the sample of the searched text
-- that ANALYZE keeps for the index's expression (its most common values and histogram, about a
-- hundred texts). A piece is taken only when it looks rare (under 2 % of the sample); without
-- statistics (a table never analysed, or too small to have a histogram) or without a rare
-- piece, the whole pattern is asked for, as before. A rare piece may still be held by more rows
-- than the whole term (up to 2 % of the table where the term names one): each of those is
-- checked and passed over, which costs time, never a wrong answer. The pieces are cut from the
-- lowered pattern, so each is a substring of what ILIKE compares, whatever the collation does to
-- a letter by what follows it. The sample is every organisation's: it only chooses how to look,
-- never what is answered (at most, whether a search is narrowed could show in its time).
--
-- plpgsql so that each connection plans its reads once (pg_stats is a view of several joins:
-- ~1.5 ms to plan, ~0.4 ms to run): ~1.3 ms a search once a connection has made a few. It reads
-- pg_stats as the search function's owner, the only role that sees the index's statistics;
-- called by anyone else it sees none and answers the pattern as given. The index is named, not
-- given by OID, so one rebuilt (REINDEX CONCURRENTLY gives it a new OID) is still found.
CREATE FUNCTION search_index_pattern(pattern text, searched text) RETURNS text
  LANGUAGE plpgsql STABLE PARALLEL SAFE
  -- It runs in a search function, as its owner: nothing a caller puts first on its search path
  -- may stand in for what it calls. Its plans are kept whatever the caller asks of its own
  -- (a search list plans its statements afresh, shared/db/mod.ts `read`): planning its read of
  -- pg_stats afresh costs ~10 ms a call.
  SET search_path = pg_catalog, pg_temp
  SET plan_cache_mode = auto
  AS $body$
DECLARE
  pieces text[] := ARRAY(SELECT DISTINCT p
    FROM regexp_split_to_table(lower(pattern), '[^a-z0-9]+') AS p WHERE length(p) >= 3);
  common text[];
  shares real[];
  bounds text[];
  nulls real;
  rest float8;
  piece text;
  share float8;
  best text;
  best_share float8 := 0.02;
BEGIN
  -- One piece that is the whole term: nothing narrower to ask for.
  IF cardinality(pieces) = 0
    OR (cardinality(pieces) = 1 AND lower(pattern) = '%' || pieces[1] || '%') THEN
    RETURN pattern;
  END IF;
  SELECT s.most_common_vals::text::text[], s.most_common_freqs,
      s.histogram_bounds::text::text[], s.null_frac
    INTO common, shares, bounds, nulls
    FROM pg_stats s
    -- The names worked out first, so that pg_stats is read by them through the catalogue's
    -- indexes (joined to pg_stats by name instead, it was worked out whole: 19 ms).
    WHERE (s.schemaname, s.tablename) = (SELECT n.nspname::text, i.relname::text
      FROM pg_class i JOIN pg_namespace n ON n.oid = i.relnamespace
      WHERE i.oid = to_regclass(searched));
  IF bounds IS NULL THEN
    RETURN pattern;
  END IF;
  -- The share of rows neither null nor one of the common values: the histogram's.
  rest := 1 - nulls - coalesce((SELECT sum(f) FROM unnest(shares) AS f), 0);
  FOREACH piece IN ARRAY pieces LOOP
    share := coalesce((SELECT sum(c.f) FROM unnest(common, shares) AS c (v, f)
        WHERE strpos(lower(c.v), piece) > 0), 0)
      + rest * (SELECT avg((strpos(lower(b), piece) > 0)::int) FROM unnest(bounds) AS b);
    IF share < best_share OR (share = best_share AND length(piece) > length(best)) THEN
      best := piece;
      best_share := share;
    END IF;
  END LOOP;
  RETURN coalesce('%' || best || '%', pattern);
END
$body$;
-- The search functions call it as their owner; nobody else has a use for it.
REVOKE ALL ON FUNCTION search_index_pattern(text, text) FROM PUBLIC;

-- declare_search as in migration 0003, with these changes:
-- - the search function asks its index for search_index_pattern(pattern) (a sub-select, so it
--   is worked out once per call, not once per row the index finds);
-- - a pattern with no run of three ASCII letters or digits has no trigram to look up: asked of the
--   index as a value the planner cannot see, it read all of the index, every organisation's rows
--   (1.4 s for "zz" among 100,000 quotes). Such a pattern goes to a second branch written as
--   0003's was, where the planner sees it and chooses between the organisation's rows and the
--   whole index by their cost (each call's plan keeps only its branch);
-- - declared again with the same columns, it keeps the trigram index it has rather than
--   building it anew (minutes on a large table, with writes held meanwhile), so a service
--   migration can re-declare a table to give it the new function; an index built anew is
--   analysed at once, since the piece is chosen from its statistics.
CREATE OR REPLACE FUNCTION declare_search(tab text, columns text[], also text DEFAULT NULL)
  RETURNS void LANGUAGE plpgsql AS $declare$
DECLARE
  texts text[];
  joined text;
  kept boolean;
  trgm text := (SELECT e.extnamespace::regnamespace::text FROM pg_extension e
    WHERE e.extname = 'pg_trgm');
  -- The index by its schema-qualified name, as search_index_pattern looks it up.
  index_name text := format('%I.%I', current_schema(), tab || '_search');
  -- What a pattern needs for the index to be of use: a run of three letters or digits.
  indexable constant text := '[a-z0-9]{3}';
  matches text;
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
  joined := (SELECT string_agg(format('coalesce(%s, %L)', x, ''), ' || '' '' || ')
    FROM unnest(texts) x);
  -- The joined text as it is declared now, made under a scratch name and compared, as
  -- PostgreSQL prints them, with the one the index is built on: the same, and the index valid,
  -- the index is kept.
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
END
$declare$;
REVOKE ALL ON FUNCTION declare_search(text, text[], text) FROM PUBLIC;

-- Search indexes over the searched columns themselves, so that updates of a searchable table stay
-- HOT.
--
-- Until now `<table>_search` (and `<table>_search_codes`) indexed `<table>_search_text(<table>)`:
-- a function of the whole row. PostgreSQL cannot tell which columns such an expression reads, so
-- it counts every UPDATE of the table as changing an indexed column: none was ever a heap-only
-- update, and each wrote a new entry into every index of the table. A quote is updated by every
-- change to its lines, variants and decorations (its totals and `updated_at`), so each of those
-- writes paid the quote's nine indexes, the trigram index's ~25 keys among them (measured on the
-- bench stack: `UPDATE quotes SET updated_at = now()` 0 of 5 heap-only). Now the index is built on
-- the same text written over the columns (`coalesce(quote_ref, '') || ' ' || …`), which is what
-- the planner makes of `<table>_search_text(t)` when it inlines it, so the search functions find
-- the index as before; an update that changes none of the searched or otherwise indexed columns
-- can be heap-only again.
--
-- The index carries the expression it was built from as its comment: declared again with the
-- same columns, a table whose index has that comment keeps it; an index of the old kind has none
-- and is built anew (every service declares its searches again in its next migration).

CREATE OR REPLACE FUNCTION declare_search(tab text, columns text[], also text DEFAULT NULL,
  codes boolean DEFAULT false)
  RETURNS void LANGUAGE plpgsql AS $declare$
DECLARE
  texts text[];
  columns_text text[];
  joined text;
  indexed text;
  kept boolean;
  trgm text := (SELECT e.extnamespace::regnamespace::text FROM pg_extension e
    WHERE e.extname = 'pg_trgm');
  index_name text := format('%I.%I', current_schema(), tab || '_search');
  codes_index text := format('%I.%I', current_schema(), tab || '_search_codes');
  indexable constant text := '[a-z0-9]{3}';
  matches text;
  short_branches text;
BEGIN
  SELECT array_agg(CASE
      WHEN a.attname IS NULL THEN NULL
      WHEN a.atttypid = 'text'::regtype THEN format('t.%I', a.attname)
      WHEN a.atttypid = 'text[]'::regtype THEN format('search_array_text(t.%I)', a.attname)
      ELSE format('t.%I::text', a.attname) END ORDER BY c.n),
    array_agg(CASE
      WHEN a.atttypid = 'text'::regtype THEN format('%I', a.attname)
      WHEN a.atttypid = 'text[]'::regtype THEN format('search_array_text(%I)', a.attname)
      ELSE format('%I::text', a.attname) END ORDER BY c.n)
    INTO texts, columns_text
    FROM unnest(columns) WITH ORDINALITY AS c (name, n)
    LEFT JOIN pg_attribute a ON a.attrelid = tab::regclass AND a.attname = c.name
      AND a.attnum > 0 AND NOT a.attisdropped;
  IF texts IS NULL OR array_position(texts, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'declare_search(%, %): a column is not in the table', tab, columns;
  END IF;
  joined := (SELECT string_agg(format('coalesce(%s, %L)', x, ''), ' || '' '' || ')
    FROM unnest(texts) x);
  indexed := (SELECT string_agg(format('coalesce(%s, %L)', x, ''), ' || '' '' || ')
    FROM unnest(columns_text) x);
  EXECUTE format(
    'CREATE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE RETURN %s',
    tab || '_search_text_declared', tab, joined);
  EXECUTE format(
    'SELECT coalesce((SELECT x.indisvalid FROM pg_index x WHERE x.indexrelid = to_regclass(%1$L)) '
      'AND obj_description(to_regclass(%1$L), %4$L) = %5$L '
      'AND pg_get_function_sqlbody(to_regprocedure(%2$L)) = '
      'pg_get_function_sqlbody(to_regprocedure(%3$L)), false)',
    index_name, format('%I(%I)', tab || '_search_text', tab),
    format('%I(%I)', tab || '_search_text_declared', tab), 'pg_class', indexed)
    INTO kept;
  EXECUTE format('DROP FUNCTION %I(%I)', tab || '_search_text_declared', tab);
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, uuid)', tab || '_matching');
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, uuid[], uuid)', tab || '_matching_among');
  EXECUTE format('DROP FUNCTION IF EXISTS %I(text, float8)', tab || '_matching_is_common');
  IF NOT kept THEN
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search_codes');
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search');
    EXECUTE format(
      'CREATE OR REPLACE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE '
        'RETURN %s',
      tab || '_search_text', tab, joined);
    EXECUTE format('CREATE INDEX %I ON %I USING gin ((%s) %s.gin_trgm_ops)',
      tab || '_search', tab, indexed, trgm);
    EXECUTE format('COMMENT ON INDEX %I IS %L', tab || '_search', indexed);
  END IF;
  -- The codes index follows the declaration: kept while it is valid and asked for, built when
  -- asked for and missing (or invalid), dropped when no longer asked for.
  IF NOT codes OR NOT coalesce((SELECT x.indisvalid FROM pg_index x
      WHERE x.indexrelid = to_regclass(codes_index)), true) THEN
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search_codes');
  END IF;
  IF codes AND to_regclass(codes_index) IS NULL THEN
    EXECUTE format('CREATE INDEX %I ON %I USING gin (search_code_trigrams(%s))',
      tab || '_search_codes', tab, indexed);
  END IF;
  IF NOT EXISTS (SELECT FROM pg_stats s WHERE s.schemaname = current_schema()
      AND s.tablename = tab || '_search') THEN
    EXECUTE format('ANALYZE %I', tab);
  END IF;
  matches := (SELECT string_agg(format('%s ILIKE pattern ESCAPE %L', x, '\'), ' OR ')
    FROM unnest(texts) x);
  -- A pattern with no run of three: with `codes`, one the codes index can narrow asks it, and
  -- any other goes to 0004's branch; without, every such pattern does. In each call only one
  -- branch's condition on the pattern holds (the plan is the call's own, the pattern in sight).
  -- The codes branch checks the columns only, not the joined text: the trigram index would
  -- serve that ILIKE, and PostgreSQL, which prices a read of it for a pattern of one-character
  -- words as a few rows, chose it over the codes index and read the whole shop.
  short_branches := format(
    'SELECT t.id FROM %1$I t '
      'WHERE organization = organization_in_force() AND t.organization_id = organization '
      'AND lower(pattern) !~ %2$L %3$s AND %4$I(t) ILIKE pattern ESCAPE %5$L AND (%6$s)',
    tab, indexable,
    CASE WHEN codes THEN 'AND cardinality(search_pattern_code_trigrams(pattern)) = 0' ELSE '' END,
    tab || '_search_text', '\', matches);
  IF codes THEN
    short_branches := short_branches || format(
      ' UNION ALL SELECT t.id FROM %1$I t '
        'WHERE organization = organization_in_force() AND t.organization_id = organization '
        'AND lower(pattern) !~ %2$L AND cardinality(search_pattern_code_trigrams(pattern)) > 0 '
        'AND search_code_trigrams(%3$I(t)) @> search_pattern_code_trigrams(pattern) AND (%4$s)',
      tab, indexable, tab || '_search_text', matches);
  END IF;
  EXECUTE format(
    'CREATE FUNCTION %I(pattern text, organization uuid DEFAULT organization_in_force()) '
      'RETURNS SETOF uuid LANGUAGE sql STABLE SECURITY DEFINER ROWS 10 '
      'SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1 '
      'BEGIN ATOMIC '
      'SELECT t.id FROM %2$I t '
      'WHERE organization = organization_in_force() AND t.organization_id = organization '
      'AND lower(pattern) ~ %3$L AND %4$I(t) ILIKE (SELECT search_index_pattern(pattern, %5$L)) '
      'ESCAPE %6$L AND (%7$s) '
      'UNION ALL %8$s%9$s; END',
    tab || '_matching', tab, indexable, tab || '_search_text', index_name, '\', matches,
    short_branches, coalesce(' UNION ' || also, ''));
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
REVOKE ALL ON FUNCTION declare_search(text, text[], text, boolean) FROM PUBLIC;

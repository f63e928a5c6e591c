-- A search for a code of short segments reads an index of the code's own trigrams.
--
-- pg_trgm makes trigrams of runs of letters and digits only, so a term such as "SC-1-1" (a stock
-- code whose segments are one or two characters) gives it nothing but one-character words, which
-- nearly every code holds; with no piece of three to ask for (0004), the search read every row
-- of the organisation (`deno task bench:scale`: 5.8 ms at 10,000 variants, 35 ms at 100,000, for
-- the same two matches). Its trigrams with the punctuation kept ("sc-", "c-1", "-1-", "1-1") are
-- another matter: "-1-" is in the ten variants of item 1 at any size, and a GIN index of them
-- starts from its rarest key (tried on the ×10 data: 0.14 ms where the read took 3.6). So a
-- table declared with `codes` gets that index too, `<table>_search_codes`, over the same joined
-- text, and its search function asks it for a term with no run of three letters or digits when
-- the term is plain ASCII of three characters or more. It is a condition rows must meet, never
-- the match: ILIKE lowers both sides, so a row whose text holds the term holds its lowered
-- trigrams, and each row found is checked column by column as before. A term outside ASCII
-- (where lowering a word can depend on what follows it), with a wildcard, or shorter than three
-- characters goes to the branch of 0004, unchanged. Only tables whose searched text is codes
-- are declared so: each row's entry is every three characters of its text, more than pg_trgm
-- keeps, and a table of prose would pay for it on every write for terms nobody types.

-- Every three characters of the text, lowered: the index's keys. Empty for a text under three.
CREATE FUNCTION search_code_trigrams(searched text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN ARRAY(SELECT DISTINCT substr(lower(searched), i, 3)
    FROM generate_series(1, length(searched) - 2) AS i);

-- The trigrams a row must hold to match `pattern`, as shared/db/pages.ts makes it (`%`, the
-- term with `\`, `%` and `_` escaped, `%`); empty, asking nothing, when the term is not plain
-- printable ASCII of three characters or more, or the pattern is of another shape.
CREATE FUNCTION search_pattern_code_trigrams(pattern text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN CASE
    WHEN pattern !~ '^%.*%$' THEN '{}'::text[]
    -- An unescaped wildcard inside: not one literal.
    WHEN regexp_replace(substr(pattern, 2, length(pattern) - 2), '\\.', '', 'g') ~ '[%_\\]'
      THEN '{}'::text[]
    WHEN regexp_replace(substr(pattern, 2, length(pattern) - 2), '\\(.)', '\1', 'g')
      !~ '^[ -~]{3,}$' THEN '{}'::text[]
    ELSE search_code_trigrams(
      regexp_replace(substr(pattern, 2, length(pattern) - 2), '\\(.)', '\1', 'g'))
  END;

-- declare_search as in migration 0005, with `codes`: the index above and the branch that asks
-- it. Declared again without it, a table loses the index. The old signature goes, so that a
-- call naming three arguments or two is never ambiguous.
DROP FUNCTION declare_search(text, text[], text);
CREATE FUNCTION declare_search(tab text, columns text[], also text DEFAULT NULL,
  codes boolean DEFAULT false)
  RETURNS void LANGUAGE plpgsql AS $declare$
DECLARE
  texts text[];
  joined text;
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
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search_codes');
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search');
    EXECUTE format(
      'CREATE OR REPLACE FUNCTION %I(t %I) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE '
        'RETURN %s',
      tab || '_search_text', tab, joined);
    EXECUTE format('CREATE INDEX %I ON %I USING gin (%I(%I) %s.gin_trgm_ops)',
      tab || '_search', tab, tab || '_search_text', tab, trgm);
  END IF;
  -- The codes index follows the declaration: kept while it is valid and asked for, built when
  -- asked for and missing (or invalid), dropped when no longer asked for.
  IF NOT codes OR NOT coalesce((SELECT x.indisvalid FROM pg_index x
      WHERE x.indexrelid = to_regclass(codes_index)), true) THEN
    EXECUTE format('DROP INDEX IF EXISTS %I', tab || '_search_codes');
  END IF;
  IF codes AND to_regclass(codes_index) IS NULL THEN
    EXECUTE format('CREATE INDEX %I ON %I USING gin (search_code_trigrams(%I(%I)))',
      tab || '_search_codes', tab, tab || '_search_text', tab);
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

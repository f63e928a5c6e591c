-- `search` on catalogue items, garment variants and pre-built items, served by trigram indexes.
-- Why a function that runs past the row-level policies, why one index over the searched columns
-- joined, and how it is planned: quotes migration 0010. Each answers only ids of the
-- organisation the transaction names; the list reads those rows under the policies
-- (shared/db/pages.ts). Each is the one statement of which columns its list's `search` looks in.
SELECT set_config('search_path', current_setting('search_path') || ', ' ||
  (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), true);

CREATE FUNCTION catalogue_items_search_text(i catalogue_items) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN i.style_code || ' ' || i.name || ' ' || coalesce(i.brand, '') || ' '
    || coalesce(i.description, '') || ' ' || coalesce(i.external_id, '');
CREATE INDEX catalogue_items_search ON catalogue_items
  USING gin (catalogue_items_search_text(catalogue_items) gin_trgm_ops);
CREATE FUNCTION catalogue_items_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT i.id FROM catalogue_items i
  WHERE organization = organization_in_force() AND i.organization_id = organization
    AND catalogue_items_search_text(i) ILIKE pattern ESCAPE '\'
    AND (i.style_code ILIKE pattern ESCAPE '\' OR i.name ILIKE pattern ESCAPE '\'
      OR i.brand ILIKE pattern ESCAPE '\' OR i.description ILIKE pattern ESCAPE '\'
      OR i.external_id ILIKE pattern ESCAPE '\');
END;

CREATE FUNCTION garment_variants_search_text(v garment_variants) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN v.style_code || ' ' || v.color || ' ' || v.size || ' ' || coalesce(v.stock_code, '')
    || ' ' || coalesce(v.external_id, '');
CREATE INDEX garment_variants_search ON garment_variants
  USING gin (garment_variants_search_text(garment_variants) gin_trgm_ops);
CREATE FUNCTION garment_variants_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT v.id FROM garment_variants v
  WHERE organization = organization_in_force() AND v.organization_id = organization
    AND garment_variants_search_text(v) ILIKE pattern ESCAPE '\'
    AND (v.style_code ILIKE pattern ESCAPE '\' OR v.color ILIKE pattern ESCAPE '\'
      OR v.size ILIKE pattern ESCAPE '\' OR v.stock_code ILIKE pattern ESCAPE '\'
      OR v.external_id ILIKE pattern ESCAPE '\');
END;

CREATE FUNCTION prebuilt_items_search_text(p prebuilt_items) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN p.name || ' ' || coalesce(p.description, '');
CREATE INDEX prebuilt_items_search ON prebuilt_items
  USING gin (prebuilt_items_search_text(prebuilt_items) gin_trgm_ops);
CREATE FUNCTION prebuilt_items_matching(
  pattern text, organization uuid DEFAULT organization_in_force()
) RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
  SET plan_cache_mode = force_custom_plan SET cpu_operator_cost = 0.1
BEGIN ATOMIC
  SELECT p.id FROM prebuilt_items p
  WHERE organization = organization_in_force() AND p.organization_id = organization
    AND prebuilt_items_search_text(p) ILIKE pattern ESCAPE '\'
    AND (p.name ILIKE pattern ESCAPE '\' OR p.description ILIKE pattern ESCAPE '\');
END;

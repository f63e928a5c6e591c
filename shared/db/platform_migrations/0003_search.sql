-- `search` on a list finds rows whose text contains the words asked for, anywhere in a column.
-- Only a trigram index (pg_trgm, shipped with PostgreSQL) can serve such an ILIKE; without one
-- each search reads every row of the organisation. The extension is the database's, one for
-- every service, so it lives in a schema of its own; this file runs in every service's schema,
-- and the lock keeps two services that start together from creating it twice. pg_trgm is a
-- trusted extension: the owner role may create it with the CREATE right it has on the database.
-- Where an operator installed it already (in any schema), that copy is used.
SELECT pg_advisory_xact_lock(hashtext('printshop.extensions'));
CREATE SCHEMA IF NOT EXISTS printshop_extensions;
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA printshop_extensions;

-- The organisation the transaction serves, as the row-level policies read it (the setting
-- printshop.organization_id, shared/db/tenancy.ts): NULL when none is set. The search functions
-- read their index past the policies, so each answers only the ids of this organisation's rows.
CREATE FUNCTION organization_in_force() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE
  RETURN nullif(current_setting('printshop.organization_id', true), '')::uuid;

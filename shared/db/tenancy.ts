/**
 * Tenancy enforced by PostgreSQL itself. Every table with an `organization_id` column has row
 * level security, forced, and one policy: a row is visible, and may be written, only while the
 * transaction names its organisation in the setting `printshop.organization_id`. Nothing set,
 * nothing seen: a statement that forgets its organisation finds no rows rather than another
 * organisation's.
 *
 * Three roles share the work (created by `ensureRoles`, on the embedded cluster by the launcher
 * and by the test harness; on an external server by its operator, README "Database roles"):
 * - `printshop_owner` owns every schema and table and runs the migrations. It bypasses row level
 *   security (BYPASSRLS), which is what lets a migration backfill every organisation's rows.
 * - `printshop_app` is what the services run as: it owns nothing, is no superuser and has no
 *   BYPASSRLS, so every statement of a request is held to the policies.
 * - `printshop_platform` cannot log in and bypasses row level security; `printshop_app` may take
 *   it, for one transaction at a time (`SET LOCAL ROLE`), only through `platformTransaction` —
 *   the short, named list of what is rightly about every organisation (README "Database roles").
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Sql } from "./mod.ts";

export const ROLES = {
  owner: "printshop_owner",
  app: "printshop_app",
  platform: "printshop_platform",
} as const;

/** The transaction-local setting the policies read. */
export const ORGANIZATION_SETTING = "printshop.organization_id";

const organization = new AsyncLocalStorage<string>();

/**
 * Runs `fn` as work for `organizationId`: every transaction it opens (shared/db/mod.ts) names
 * that organisation to the policies. A service's request middleware does this once per request.
 */
export function withOrganization<T>(organizationId: string, fn: () => T): T {
  return organization.run(organizationId, fn);
}

/** The organisation the current work is for, if any. */
export function currentOrganization(): string | undefined {
  return organization.getStore();
}

/**
 * The policy's condition: the row's organisation is the one the transaction named. The setting is
 * read in a sub-select, which PostgreSQL runs once per statement (an InitPlan) and compares each
 * row with as a parameter. Written bare, it was evaluated for every row the statement looked at:
 * the setting looked up by name, copied and parsed into a UUID (16 `strtoul` calls) hundreds of
 * times for a change to one quote's variant, a tenth of PostgreSQL's CPU on 16 concurrent PATCHes
 * (README "Database roles"). Either way the organisation's own indexes serve the condition.
 */
export const POLICY_CHECK =
  `organization_id = (SELECT nullif(current_setting('${ORGANIZATION_SETTING}', true), '')::uuid)`;

/**
 * Creates the three roles on a cluster, as a superuser, if they are not there: idempotent, and
 * safe when several test files do it at once (roles belong to the whole cluster, while each test
 * has a database of its own). The two that log in take `password`.
 */
export async function ensureRoles(admin: Sql, password: string): Promise<void> {
  // The lock is the database's, and roles are the cluster's: two setups on two databases of one
  // cluster can still meet, and the loser of that race tries again.
  for (let attempt = 1;; attempt++) {
    try {
      return await createRoles(admin, password);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 5 || (code !== "23505" && code !== "XX000")) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function createRoles(admin: Sql, password: string): Promise<void> {
  await admin.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('printshop.roles'))`;
    const quoted = password.replaceAll("'", "''");
    const create = async (role: string, attributes: string): Promise<void> => {
      const [exists] = await tx`SELECT 1 FROM pg_roles WHERE rolname = ${role}`;
      await tx.unsafe(`${exists ? "ALTER" : "CREATE"} ROLE ${role} ${attributes}`);
    };
    await create(ROLES.owner, `LOGIN PASSWORD '${quoted}' BYPASSRLS NOSUPERUSER NOCREATEROLE`);
    await create(ROLES.platform, "NOLOGIN BYPASSRLS NOSUPERUSER NOCREATEROLE");
    await create(ROLES.app, `LOGIN PASSWORD '${quoted}' NOBYPASSRLS NOSUPERUSER NOCREATEROLE`);
    await tx.unsafe(`GRANT ${ROLES.platform} TO ${ROLES.app}`);
  });
}

/** `url` with a role and password of its own in place of the superuser's. */
export function roleUrl(url: string, role: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/**
 * Prepares a database for the roles, as a superuser: the owner may create schemas in it.
 * (An operator does the same on an external server: README "Database roles".)
 */
export async function grantDatabase(admin: Sql, database: string): Promise<void> {
  if (!/^[A-Za-z0-9_]+$/.test(database)) throw new Error(`Unexpected database name "${database}"`);
  await admin.unsafe(`GRANT CREATE, CONNECT ON DATABASE "${database}" TO ${ROLES.owner}`);
  await admin.unsafe(`GRANT CONNECT ON DATABASE "${database}" TO ${ROLES.app}`);
}

/**
 * What every schema's tables get once its migrations have run, as the owner, in the same
 * session and under the same lock: the runtime roles' privileges, and for each table with an
 * `organization_id` its forced policy and, for each of its foreign keys to another such table,
 * the organisation in the key (`(organization_id, x_id) → (organization_id, id)`), so that the
 * database refuses a row pointing at another organisation's. Idempotent: what is in place is
 * left as it is, so this runs at every start and a new table is covered by the next one.
 */
export async function ensureTenancy(owner: Sql, schema: string): Promise<void> {
  const [{ owned } = { owned: false }] = await owner<{ owned: boolean }[]>`
    SELECT pg_get_userbyid(n.nspowner) = current_user AS owned
    FROM pg_namespace n WHERE n.nspname = ${schema}`;
  // Run by someone else (a superuser in an old test, an operator by hand): nothing to grant from.
  if (!owned) return;
  const q = `"${schema}"`;
  const [{ roles } = { roles: 0 }] = await owner<{ roles: number }[]>`
    SELECT count(*)::int AS roles FROM pg_roles WHERE rolname IN (${ROLES.app}, ${ROLES.platform})`;
  // Without the runtime roles (a superuser's scratch database) there is no one to grant to; the
  // policies below hold all the same.
  if (roles === 2) {
    await owner.unsafe(`GRANT USAGE ON SCHEMA ${q} TO ${ROLES.app}, ${ROLES.platform}`);
    await owner.unsafe(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${q} ` +
        `TO ${ROLES.app}, ${ROLES.platform}`,
    );
    await owner.unsafe(
      `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${q} TO ${ROLES.app}, ${ROLES.platform}`,
    );
  }
  // A policy carries its condition as its comment: one made with another condition (by an earlier
  // version, which had none) is given this one.
  const tables = await owner<
    { name: string; forced: boolean; policy: boolean; condition: string | null }[]
  >`
    SELECT c.relname AS name, c.relforcerowsecurity AS forced, p.oid IS NOT NULL AS policy,
      obj_description(p.oid, 'pg_policy') AS condition
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_policy p ON p.polrelid = c.oid AND p.polname = 'tenant'
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p')
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
        AND a.attname = 'organization_id' AND NOT a.attisdropped)
    ORDER BY c.relname`;
  for (const table of tables) {
    const t = `${q}."${table.name}"`;
    if (!table.forced) {
      await owner.unsafe(`ALTER TABLE ${t} ENABLE ROW LEVEL SECURITY`);
      await owner.unsafe(`ALTER TABLE ${t} FORCE ROW LEVEL SECURITY`);
    }
    if (table.policy && table.condition === POLICY_CHECK) continue;
    const verb = table.policy ? "ALTER" : "CREATE";
    await owner.unsafe(
      `${verb} POLICY tenant ON ${t} USING (${POLICY_CHECK}) WITH CHECK (${POLICY_CHECK})`,
    );
    await owner.unsafe(
      `COMMENT ON POLICY tenant ON ${t} IS '${POLICY_CHECK.replaceAll("'", "''")}'`,
    );
  }
  await compositeKeys(owner, schema);
}

interface ForeignKey {
  name: string;
  table: string;
  columns: string[];
  parent: string;
  parentColumns: string[];
  onDelete: string;
  onUpdate: string;
  deferrable: boolean;
}

/** Foreign keys between tenant tables that do not carry the organisation: made to. */
async function compositeKeys(owner: Sql, schema: string): Promise<void> {
  const keys = await owner<ForeignKey[]>`
    SELECT con.conname AS name, child.relname AS table, parent.relname AS parent,
      ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)::text[]
        AS columns,
      ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)::text[]
        AS "parentColumns",
      con.confdeltype AS "onDelete", con.confupdtype AS "onUpdate",
      con.condeferrable AS deferrable
    FROM pg_constraint con
    JOIN pg_class child ON child.oid = con.conrelid
    JOIN pg_class parent ON parent.oid = con.confrelid
    JOIN pg_namespace n ON n.oid = child.relnamespace
    WHERE con.contype = 'f' AND n.nspname = ${schema}
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = child.oid
        AND a.attname = 'organization_id' AND NOT a.attisdropped)
      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = parent.oid
        AND a.attname = 'organization_id' AND NOT a.attisdropped)`;
  const q = `"${schema}"`;
  for (const key of keys) {
    if (key.columns.includes("organization_id")) continue;
    const parent = `${q}."${key.parent}"`;
    const parentColumns = ["organization_id", ...key.parentColumns];
    const uniqueName = `${key.parent}_${parentColumns.join("_")}_key`.slice(0, 63);
    const [unique] = await owner`
      SELECT 1 FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = ${schema} AND t.relname = ${key.parent} AND c.contype IN ('u', 'p')
        AND ARRAY(SELECT a.attname FROM unnest(c.conkey) k(n)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n)::text[]
          @> ${parentColumns}::text[]
        AND array_length(c.conkey, 1) = ${parentColumns.length}`;
    if (!unique) {
      await owner.unsafe(
        `ALTER TABLE ${parent} ADD CONSTRAINT "${uniqueName}" UNIQUE (${
          parentColumns.map((c) => `"${c}"`).join(", ")
        })`,
      );
    }
    // ON DELETE SET NULL on the key's own columns only: the row keeps its organisation.
    const setNull = key.onDelete === "n"
      ? `SET NULL (${key.columns.map((c) => `"${c}"`).join(", ")})`
      : null;
    const action = (code: string): string =>
      ({ a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" })[code] ??
        "NO ACTION";
    await owner.unsafe(`ALTER TABLE ${q}."${key.table}" DROP CONSTRAINT "${key.name}"`);
    await owner.unsafe(
      `ALTER TABLE ${q}."${key.table}" ADD CONSTRAINT "${key.name}" FOREIGN KEY (${
        ["organization_id", ...key.columns].map((c) => `"${c}"`).join(", ")
      }) REFERENCES ${parent} (${parentColumns.map((c) => `"${c}"`).join(", ")}) ON DELETE ${
        setNull ?? action(key.onDelete)
      } ON UPDATE ${action(key.onUpdate)}${key.deferrable ? " DEFERRABLE" : ""}`,
    );
  }
}

/**
 * Gives the owner role what an older version left to whoever ran its migrations (the
 * superuser): every schema of the database but the system's and `public`, and what is in them.
 * Run as a superuser by `task start` before the services start, so a data directory from before
 * the roles upgrades in place; an operator of an external server does the same once (README
 * "Database roles"). Idempotent.
 */
export async function handOver(admin: Sql): Promise<void> {
  const schemas = await admin<{ name: string }[]>`
    SELECT nspname AS name FROM pg_namespace
    WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
      AND pg_get_userbyid(nspowner) <> ${ROLES.owner}`;
  for (const { name } of schemas) {
    const q = `"${name}"`;
    await admin.begin(async (tx) => {
      await tx.unsafe(`ALTER SCHEMA ${q} OWNER TO ${ROLES.owner}`);
      const owned = await tx<{ kind: string; name: string }[]>`
        SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                 WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind,
               quote_ident(c.relname) AS name
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${name} AND c.relkind IN ('r', 'p', 'S', 'v', 'm')
          -- A sequence owned by a column follows its table.
          AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
            WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')))
        UNION ALL
        SELECT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
               p.oid::regprocedure::text
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ${name}
        UNION ALL
        SELECT 'TYPE', t.oid::regtype::text
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = ${name} AND t.typtype IN ('e', 'd', 'c')
          AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')`;
      for (const object of owned) {
        await tx.unsafe(
          `ALTER ${object.kind} ${
            object.kind === "FUNCTION" || object.kind === "PROCEDURE" || object.kind === "TYPE"
              ? object.name
              : `${q}.${object.name}`
          } OWNER TO ${ROLES.owner}`,
        );
      }
    });
  }
}

/**
 * Refuses a runtime pool whose role the policies would not hold: a superuser, a role with
 * BYPASSRLS, or the owner of the schema's tables. A process checks this at start, before it
 * serves anything, and stops with the reason.
 */
export async function assertRuntimeRole(sql: Sql, schema: string): Promise<void> {
  const [role] = await sql<{ name: string; superuser: boolean; bypass: boolean; owns: boolean }[]>`
    SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolbypassrls AS bypass,
      EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspname = ${schema}
        AND pg_has_role(r.oid, n.nspowner, 'USAGE')) AS owns
    FROM pg_roles r WHERE r.rolname = current_user`;
  if (!role) throw new Error("DATABASE_URL: the role it names was not found");
  const why = role.superuser
    ? "is a superuser"
    : role.bypass
    ? "has BYPASSRLS"
    : role.owns
    ? `owns the schema "${schema}" (or is a member of its owner)`
    : null;
  if (why) {
    throw new Error(
      `DATABASE_URL connects as "${role.name}", which ${why}: row-level security would not hold ` +
        `it. Connect as ${ROLES.app} and give the owner to MIGRATION_DATABASE_URL (README ` +
        `"Database roles").`,
    );
  }
}

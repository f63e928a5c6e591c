/**
 * Tenancy as the database holds it, read from its catalogue after every schema has migrated as
 * the processes migrate it (as the owner, then the tenancy pass): every table with an
 * `organization_id`, in every schema, has row-level security enabled and forced and the one
 * tenant policy; every foreign key between two such tables carries the organisation; every table
 * a store declares says `tenant` exactly when the database has it as one; and the role the
 * services run as can do none of what would step around the policies.
 *
 * What the policies let through, table by table with two organisations' rows in every one, is
 * checked by the route sweep (e2e/route_sweep_test.ts, `assertTenantVisibility`), which has
 * those rows.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect } from "@printshop/shared/db";
import { declaredTables } from "@printshop/shared/db/table";
import { ROLES } from "@printshop/shared/db/tenancy";
import { SERVICES } from "@printshop/shared/routes";
import { createTestDatabase } from "@printshop/shared/testing";
import { migrateEverySchema, SCHEMAS, tenantTables } from "./tenancy.ts";

const ROOT = new URL("../", import.meta.url);

/** Declared references that are deliberately no foreign key, each with why. */
const UNKEYED_REFERENCES: Readonly<Record<string, string>> = {
  "proofs.approval_links.proof_id → proofs":
    "a link outlives its proof, so that its page can say the proof was withdrawn (410)",
};

/**
 * The one policy every tenant table has: its rows are the organisation's the transaction set. As
 * PostgreSQL prints shared/db/tenancy.ts POLICY_CHECK: the setting read in a sub-select, once per
 * statement.
 */
const POLICY = "(organization_id = ( SELECT (NULLIF(current_setting('printshop.organization_id'" +
  `::text, true), ''::text))::uuid AS "nullif"))`;

Deno.test("tenancy in the catalogue: forced policies, composite keys, declarations, the runtime role", async (t) => {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  try {
    await migrateEverySchema(db);
    const tables = await tenantTables(admin);
    const schemas = new Set(tables.map((table) => table.schema));
    for (const { schema } of SCHEMAS) {
      assert(schemas.has(schema), `schema "${schema}" has no tenant table: is it migrated?`);
    }

    await t.step(
      "every table with organization_id has RLS enabled, forced, one tenant policy",
      async () => {
        const rows = await admin<
          {
            schema: string;
            table: string;
            enabled: boolean;
            forced: boolean;
            policies: {
              name: string;
              cmd: string;
              permissive: boolean;
              roles: string[];
              using: string | null;
              check: string | null;
            }[];
          }[]
        >`
        SELECT n.nspname AS schema, c.relname AS table, c.relrowsecurity AS enabled,
          c.relforcerowsecurity AS forced,
          coalesce((SELECT json_agg(json_build_object(
              'name', p.polname, 'cmd', p.polcmd, 'permissive', p.polpermissive,
              'roles', ARRAY(SELECT CASE WHEN r = 0 THEN 'public' ELSE pg_get_userbyid(r) END
                FROM unnest(p.polroles) r),
              'using', pg_get_expr(p.polqual, p.polrelid),
              'check', pg_get_expr(p.polwithcheck, p.polrelid)))
            FROM pg_policy p WHERE p.polrelid = c.oid), '[]') AS policies
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE (n.nspname, c.relname) IN (
          SELECT * FROM unnest(${tables.map((x) => x.schema)}::text[], ${
          tables.map((x) => x.table)
        }::text[]))
        ORDER BY 1, 2`;
        assertEquals(rows.length, tables.length);
        const wrong = rows.filter((row) =>
          !row.enabled || !row.forced || row.policies.length !== 1 ||
          row.policies[0]!.name !== "tenant" || row.policies[0]!.cmd !== "*" ||
          !row.policies[0]!.permissive || row.policies[0]!.roles.join() !== "public" ||
          row.policies[0]!.using !== POLICY || row.policies[0]!.check !== POLICY
        );
        assertEquals(
          wrong.map((row) => `${row.schema}.${row.table}`),
          [],
          `tables without exactly the forced tenant policy: ${JSON.stringify(wrong, null, 1)}`,
        );
      },
    );

    await t.step("every foreign key between tenant tables carries the organisation", async () => {
      const keys = await admin<
        {
          schema: string;
          table: string;
          name: string;
          columns: string[];
          parent: string;
          parentColumns: string[];
        }[]
      >`
        SELECT n.nspname AS schema, child.relname AS table, con.conname AS name,
          parent.relname AS parent,
          ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
            JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)::text[]
            AS columns,
          ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
            JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)::text[]
            AS "parentColumns"
        FROM pg_constraint con
        JOIN pg_class child ON child.oid = con.conrelid
        JOIN pg_class parent ON parent.oid = con.confrelid
        JOIN pg_namespace n ON n.oid = child.relnamespace
        WHERE con.contype = 'f'`;
      const tenant = new Set(tables.map((x) => `${x.schema}.${x.table}`));
      const between = keys.filter((key) =>
        tenant.has(`${key.schema}.${key.table}`) && tenant.has(`${key.schema}.${key.parent}`)
      );
      assert(between.length > 0, "no key between tenant tables was found: is the query right?");
      const loose = between.filter((key) =>
        key.columns[0] !== "organization_id" || key.parentColumns[0] !== "organization_id"
      );
      assertEquals(
        loose.map((key) => `${key.schema}.${key.table}.${key.name}`),
        [],
        "keys that can point at another organisation's row",
      );
      // A declared reference to a tenant table of the same schema is such a key.
      const missing: string[] = [];
      for (const declared of await declarations()) {
        const home = tables.find((x) => x.table === declared.name);
        if (!home || !declared.tenant) continue;
        for (const [column, target] of Object.entries(declared.references)) {
          if (!tenant.has(`${home.schema}.${target}`)) continue;
          const keyed = between.some((key) =>
            key.schema === home.schema && key.table === declared.name &&
            key.parent === target && key.columns.join() === `organization_id,${column}`
          );
          if (!keyed) missing.push(`${home.schema}.${declared.name}.${column} → ${target}`);
        }
      }
      assertEquals(
        missing.filter((reference) => !UNKEYED_REFERENCES[reference]),
        [],
        "declared references without a composite foreign key",
      );
    });

    await t.step(
      "each declared table says tenant exactly when the database has it so",
      async () => {
        const declared = await declarations();
        assert(declared.length >= 25, `only ${declared.length} declarations found`);
        const all = await admin<{ table: string; tenant: boolean }[]>`
        SELECT c.relname AS table,
          EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
            AND a.attname = 'organization_id' AND NOT a.attisdropped) AS tenant
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY(${SCHEMAS.map((s) => s.schema)})`;
        for (const table of declared) {
          const found = all.filter((x) => x.table === table.name);
          assert(found.length > 0, `declared table "${table.name}" is in no schema`);
          for (const x of found) {
            assertEquals(
              x.tenant,
              table.tenant,
              `"${table.name}": declared tenant ${table.tenant}`,
            );
          }
        }
      },
    );

    await t.step(
      "the runtime role is no superuser, bypasses nothing and owns nothing",
      async () => {
        const app = connect(db.appUrl, { schema: "public", max: 1 });
        try {
          const [me] = await app<{ name: string; superuser: boolean; bypass: boolean }[]>`
          SELECT rolname AS name, rolsuper AS superuser, rolbypassrls AS bypass
          FROM pg_roles WHERE rolname = current_user`;
          assertEquals(me, { name: ROLES.app, superuser: false, bypass: false });
          const [{ owned }] = await app<[{ owned: number }]>`
          SELECT count(*)::int AS owned FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE pg_get_userbyid(c.relowner) = current_user
            AND n.nspname = ANY(${SCHEMAS.map((s) => s.schema)})`;
          assertEquals(owned, 0);
          // And with no organisation set, a tenant table answers nothing but an empty set.
          await admin.unsafe(`INSERT INTO gateway.organizations (id, name)
          VALUES ('00000000-0000-7000-8000-000000000001', 'Seen by no one')`);
          await admin.unsafe(`INSERT INTO gateway.api_keys
            (id, organization_id, name, lookup, secret_hash, scopes)
          VALUES (gen_random_uuid(), '00000000-0000-7000-8000-000000000001', 'k', 'lookup',
            '\\x00', '{}')`);
          assertEquals((await app`SELECT id FROM gateway.api_keys`).length, 0);
          await assert.rejects(
            app`INSERT INTO gateway.api_keys (id, organization_id, name, lookup, secret_hash, scopes)
            VALUES (gen_random_uuid(), '00000000-0000-7000-8000-000000000001', 'k', 'other',
              '\\x00', '{}')`,
            /row-level security/,
          );
        } finally {
          await app.end();
        }
      },
    );
  } finally {
    await admin.end();
    await db.drop();
  }
});

/** Every table a store declares: each service's app imports all of its stores. */
async function declarations(): Promise<ReturnType<typeof declaredTables>> {
  for (const service of SERVICES) await import(new URL(`services/${service}/app.ts`, ROOT).href);
  return declaredTables();
}

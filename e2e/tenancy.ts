/**
 * What the tenancy checks share: the database's tenant tables, and what the runtime role sees of
 * them with one organisation set and with none.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  connect,
  openDatabase,
  pinnedOrganizations,
  type Queryable,
  read,
  type Sql,
  transaction,
  withOrganization,
} from "@printshop/shared/db";
import { SERVICES } from "@printshop/shared/routes";
import type { TestDatabase } from "@printshop/shared/testing";

const ROOT = new URL("../", import.meta.url);

/** Every schema a stack has, with the migrations that make it (as the processes open them). */
export const SCHEMAS: readonly { schema: string; migrations: URL; platform: boolean }[] = [
  { schema: "gateway", migrations: new URL("gateway/migrations/", ROOT), platform: true },
  ...SERVICES.map((service) => ({
    schema: service,
    migrations: new URL(`services/${service}/migrations/`, ROOT),
    platform: true,
  })),
  {
    schema: "eventbus",
    migrations: new URL("shared/events/embedded_migrations/", ROOT),
    platform: false,
  },
];

/** Migrates every schema of `db` as the processes do: as the owner, then the tenancy pass. */
export async function migrateEverySchema(db: TestDatabase): Promise<void> {
  for (const { schema, migrations, platform } of SCHEMAS) {
    const sql = await openDatabase(db.appUrl, schema, migrations, undefined, {
      migrationUrl: db.ownerUrl,
      platform,
      watch: false,
      max: 1,
    });
    await sql.end();
  }
}

export interface TenantTable {
  schema: string;
  table: string;
}

/** Every ordinary table with an `organization_id`, in every schema but the system's. */
export async function tenantTables(admin: Sql): Promise<TenantTable[]> {
  return [
    ...await admin<TenantTable[]>`
      SELECT n.nspname AS schema, c.relname AS table
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p')
        AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
          AND a.attname = 'organization_id' AND NOT a.attisdropped)
      ORDER BY 1, 2`,
  ];
}

/**
 * For every tenant table, as the runtime role (`appUrl`): with organisation `a` set, exactly the
 * rows the superuser (`superuserUrl`) counts for `a` and none of anyone else's; with none set,
 * nothing. `a` must hold rows in every table but those `empty` names (with why), and another
 * organisation must too, or the check proves nothing of that table: it says which.
 */
export async function assertTenantVisibility(
  superuserUrl: string,
  appUrl: string,
  a: string,
  empty: Readonly<Record<string, string>> = {},
): Promise<number> {
  const admin = connect(superuserUrl, { schema: "public", max: 1 });
  const app = connect(appUrl, { schema: "public", max: 1 });
  // Reads as the services make them where the organisation holds a pinned pool (pinned_pools.ts).
  const pinned = connect(appUrl, {
    schema: "public",
    max: 1,
    pinnedReads: { pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 },
  });
  try {
    const tables = await tenantTables(admin);
    const unproven: string[] = [];
    for (const { schema, table } of tables) {
      const name = `"${schema}"."${table}"`;
      const [counts] = await admin.unsafe<[{ mine: number; others: number }]>(
        `SELECT count(*) FILTER (WHERE organization_id = $1)::int AS mine,
           count(*) FILTER (WHERE organization_id <> $1)::int AS others FROM ${name}`,
        [a],
      );
      if ((counts.mine === 0 || counts.others === 0) && !empty[`${schema}.${table}`]) {
        unproven.push(`${schema}.${table} (${counts.mine} of a's, ${counts.others} of others')`);
      }
      const [none] = await app.unsafe<[{ n: number }]>(`SELECT count(*)::int AS n FROM ${name}`);
      assertEquals(none.n, 0, `${schema}.${table}: rows seen with no organisation set`);
      // a's rows and everyone else's, as the runtime role sees them on `q`.
      const mineAndOthers = (q: Queryable) =>
        q.unsafe<[{ mine: number; others: number }]>(
          `SELECT count(*) FILTER (WHERE organization_id = $1)::int AS mine,
             count(*) FILTER (WHERE organization_id IS DISTINCT FROM $1)::int AS others
           FROM ${name}`,
          [a],
        );
      const seen = await withOrganization(a, () => transaction(app, mineAndOthers));
      assertEquals(
        seen[0],
        { mine: counts.mine, others: 0 },
        `${schema}.${table}: with a set, a's rows and no one else's`,
      );
      const [onPinned] = await withOrganization(a, () => read(pinned, mineAndOthers));
      assertEquals(
        { ...onPinned, pinned: pinnedOrganizations(pinned) },
        { mine: counts.mine, others: 0, pinned: [a] },
        `${schema}.${table}: on a's pinned connections, a's rows and no one else's`,
      );
    }
    assert(
      unproven.length === 0,
      `tenant tables without rows of both organisations (give them some, or say why not): ${
        unproven.join(", ")
      }`,
    );
    return tables.length;
  } finally {
    await pinned.end();
    await app.end();
    await admin.end();
  }
}

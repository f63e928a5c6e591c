import { connect } from "../db/mod.ts";
import { ensureRoles, grantDatabase, ROLES, roleUrl } from "../db/tenancy.ts";
import { startThrowawayPostgres } from "../embedded_postgres.ts";

/**
 * Test databases. `deno task test` starts one throwaway PostgreSQL cluster and passes its
 * maintenance URL in TEST_DATABASE_URL; each test creates its own database on it, so test files
 * running in parallel never share tables. Run outside the task, the first call starts a cluster
 * for this process instead.
 *
 * The database roles (shared/db/tenancy.ts) belong to the cluster, not to a database: the first
 * test database of each process makes sure they are there (the roles' own lock keeps parallel
 * test files from racing), with the superuser's password, which every test process knows.
 */
let server: Promise<string> | undefined;
/** The roles made on each server this process used (they belong to the cluster). */
const roles = new Map<string, Promise<void>>();

function serverUrl(): Promise<string> {
  const given = Deno.env.get("TEST_DATABASE_URL");
  if (given) return Promise.resolve(given);
  server ??= (async () => {
    const pg = await startThrowawayPostgres("printshop-test-pg-");
    globalThis.addEventListener("unload", () => pg.stopOnExit());
    return pg.url;
  })();
  return server;
}

export interface TestDatabase {
  /** As the cluster's superuser: for a test's fixtures and for looking past the policies. */
  url: string;
  /** As the services run: `printshop_app`, held to the row-level policies. */
  appUrl: string;
  /** As the migrations run: `printshop_owner`. */
  ownerUrl: string;
  drop(): Promise<void>;
}

/**
 * A new database with the roles, on the shared test server, or on `onServer` (a superuser URL of
 * another cluster: the Deploy simulation's, whose many instances must not share a server's
 * connections with the rest of the suite).
 */
export async function createTestDatabase(onServer?: string): Promise<TestDatabase> {
  const adminUrl = onServer ?? await serverUrl();
  const password = decodeURIComponent(new URL(adminUrl).password);
  const name = `test_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = connect(adminUrl, { schema: "public", max: 1 });
  try {
    if (!roles.has(adminUrl)) roles.set(adminUrl, ensureRoles(admin, password));
    await roles.get(adminUrl);
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await grantDatabase(admin, name);
  } catch (error) {
    roles.delete(adminUrl);
    throw error;
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    appUrl: roleUrl(url.toString(), ROLES.app, password),
    ownerUrl: roleUrl(url.toString(), ROLES.owner, password),
    drop: async () => {
      const sql = connect(adminUrl, { schema: "public", max: 1 });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}

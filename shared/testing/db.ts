import { connect } from "../db/mod.ts";
import { startThrowawayPostgres } from "../embedded_postgres.ts";

/**
 * Test databases. `deno task test` starts one throwaway PostgreSQL cluster and passes its
 * maintenance URL in TEST_DATABASE_URL; each test creates its own database on it, so test files
 * running in parallel never share tables. Run outside the task, the first call starts a cluster
 * for this process instead.
 */
let server: Promise<string> | undefined;

function serverUrl(): Promise<string> {
  const given = Deno.env.get("TEST_DATABASE_URL");
  if (given) return Promise.resolve(given);
  server ??= (async () => {
    const pg = await startThrowawayPostgres("printshop-test-pg-");
    globalThis.addEventListener("unload", () => {
      void pg.stop();
    });
    return pg.url;
  })();
  return server;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = await serverUrl();
  const name = `test_${crypto.randomUUID().replaceAll("-", "")}`;
  const admin = connect(adminUrl, { schema: "public", max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
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

/**
 * The tenancy machinery on a real PostgreSQL, as the runtime role: what a transaction and a read
 * see with an organisation set and with none, what the platform functions see, the composite
 * keys the tenancy pass makes (keeping each key's delete rule), and the roles a process refuses
 * to run as.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  connect,
  openDatabase,
  platformRead,
  platformTransaction,
  read,
  type Sql,
  transaction,
} from "./mod.ts";
import { assertRuntimeRole, ensureTenancy, withOrganization } from "./tenancy.ts";
import { createTestDatabase, type TestDatabase } from "../testing/db.ts";

const A = "00000000-0000-7000-8000-00000000000a";
const B = "00000000-0000-7000-8000-00000000000b";

/** A schema with a parent and a child tenant table and a table of no organisation. */
async function migrated(db: TestDatabase): Promise<{ sql: Sql; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "tenancy-" });
  await Deno.writeTextFile(
    `${dir}/0001_tables.sql`,
    `CREATE TABLE parents (id uuid PRIMARY KEY, organization_id uuid NOT NULL, name text);
     CREATE TABLE children (id uuid PRIMARY KEY, organization_id uuid NOT NULL,
       parent_id uuid NOT NULL REFERENCES parents (id) ON DELETE CASCADE);
     CREATE TABLE notes (id serial PRIMARY KEY, parent_id uuid REFERENCES parents (id)
       ON DELETE SET NULL, organization_id uuid NOT NULL);
     CREATE TABLE shared_facts (id int PRIMARY KEY);`,
  );
  const sql = await openDatabase(db.appUrl, "tenancy", new URL(`file://${dir}/`), undefined, {
    migrationUrl: db.ownerUrl,
    platform: false,
    watch: false,
    max: 2,
  });
  return { sql, dir };
}

Deno.test("tenancy: policies, reads and transactions as the runtime role", async (t) => {
  const db = await createTestDatabase();
  const { sql, dir } = await migrated(db);
  const admin = connect(db.url, { schema: "tenancy", max: 1 });
  try {
    const p = { a: crypto.randomUUID(), b: crypto.randomUUID() };
    await admin`INSERT INTO parents (id, organization_id, name) VALUES
      (${p.a}, ${A}, 'a'), (${p.b}, ${B}, 'b')`;

    await t.step(
      "with no organisation set, nothing is seen and nothing can be written",
      async () => {
        assertEquals((await sql`SELECT id FROM parents`).length, 0);
        assertEquals((await read(sql, (q) => q`SELECT id FROM parents`)).length, 0);
        await assert.rejects(
          transaction(
            sql,
            (tx) =>
              tx`INSERT INTO parents (id, organization_id) VALUES (${crypto.randomUUID()}, ${A})`,
          ),
          /row-level security/,
        );
      },
    );

    await t.step("with A set, A's rows only, in a read and in a transaction", async () => {
      const seen = await withOrganization(
        A,
        () => read(sql, (q) => q<{ id: string }[]>`SELECT id FROM parents`),
      );
      assertEquals(seen.map((r) => r.id), [p.a]);
      const updated = await withOrganization(
        A,
        () => transaction(sql, (tx) => tx`UPDATE parents SET name = 'changed'`),
      );
      assertEquals(updated.count, 1, "B's row is not even seen by an unconditioned UPDATE");
      const [b] = await admin<{ name: string }[]>`SELECT name FROM parents WHERE id = ${p.b}`;
      assertEquals(b!.name, "b");
      // A's transaction cannot write a row of B's, nor point at B's parent.
      await assert.rejects(
        withOrganization(
          A,
          () =>
            transaction(
              sql,
              (tx) =>
                tx`INSERT INTO parents (id, organization_id) VALUES (${crypto.randomUUID()}, ${B})`,
            ),
        ),
        /row-level security/,
      );
      await assert.rejects(
        withOrganization(
          A,
          () =>
            transaction(
              sql,
              (tx) =>
                tx`INSERT INTO children (id, organization_id, parent_id) VALUES (${crypto.randomUUID()}, ${A}, ${p.b})`,
            ),
        ),
        /foreign key/,
      );
    });

    await t.step(
      "a read nested in a transaction shares its connection and organisation",
      async () => {
        const both = await withOrganization(A, () =>
          transaction(sql, async (tx) => {
            const [pid] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
            const inner = await read(
              sql,
              (q) => q<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`,
            );
            return [pid!.pid, inner[0]!.pid];
          }));
        assertEquals(both[0], both[1]);
      },
    );

    await t.step("the organisation is held to a UUID's shape before it reaches SQL", async () => {
      await assert.rejects(
        withOrganization("x', true); drop table parents; --", () => read(sql, (q) => q`SELECT 1`)),
        /UUID/,
      );
      assertEquals((await admin`SELECT count(*)::int AS n FROM parents`)[0]!.n, 2);
    });

    await t.step(
      "the platform functions see every organisation, for their transaction only",
      async () => {
        const all = await platformRead(
          sql,
          (q) => q<{ id: string }[]>`SELECT id FROM parents ORDER BY name`,
        );
        assertEquals(all.length, 2);
        await platformTransaction(sql, (tx) => tx`UPDATE parents SET name = name || '!'`);
        assertEquals((await admin`SELECT id FROM parents WHERE name LIKE '%!'`).length, 2);
        // The role was the transaction's: the connections the pool hands out next see nothing.
        for (let i = 0; i < 4; i++) assertEquals((await sql`SELECT id FROM parents`).length, 0);
      },
    );

    await t.step("composite keys keep each key's delete rule; the pass is idempotent", async () => {
      const owner = connect(db.ownerUrl, { schema: "tenancy", max: 1 });
      try {
        const before = await keys(admin);
        await ensureTenancy(owner, "tenancy");
        assertEquals(await keys(admin), before);
        assertEquals(before, [
          {
            table: "children",
            definition:
              "FOREIGN KEY (organization_id, parent_id) REFERENCES parents(organization_id, id) ON DELETE CASCADE",
          },
          {
            table: "notes",
            definition:
              "FOREIGN KEY (organization_id, parent_id) REFERENCES parents(organization_id, id) ON DELETE SET NULL (parent_id)",
          },
        ]);
        const [{ forced }] = await admin<[{ forced: boolean }]>`
          SELECT relforcerowsecurity AS forced FROM pg_class WHERE relname = 'shared_facts'`;
        assertEquals(forced, false, "a table of no organisation gets no policy");
      } finally {
        await owner.end();
      }
    });

    await t.step(
      "the policy reads the organisation once per statement; an older policy is replaced",
      async () => {
        /** Where the plan of a read of `children`, as the service runs it, reads the setting. */
        const settingReadBy = async (): Promise<{ scan: boolean; initPlan: boolean }> => {
          const [row] = await withOrganization(
            A,
            () =>
              read(sql, (q) =>
                q<{ "QUERY PLAN": unknown }[]>`
                EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON)
                SELECT id FROM children WHERE parent_id = ${p.a}`),
          );
          // The JSON plan as postgres.js parsed it; the scan is its top node without its children.
          const [explained] = row!["QUERY PLAN"] as { Plan: Record<string, unknown> }[];
          const scan = JSON.stringify(
            explained!.Plan,
            (key, value) => key === "Plans" ? undefined : value,
          );
          return {
            scan: scan.includes("current_setting"),
            initPlan: JSON.stringify(explained).includes("InitPlan"),
          };
        };
        assertEquals(await settingReadBy(), { scan: false, initPlan: true });
        // The policy an earlier version made, bare: the next pass gives it the current condition.
        const bare = `organization_id = nullif(current_setting('printshop.organization_id', ` +
          `true), '')::uuid`;
        await admin.unsafe(`ALTER POLICY tenant ON children USING (${bare}) WITH CHECK (${bare})`);
        await admin.unsafe(`COMMENT ON POLICY tenant ON children IS NULL`);
        assertEquals(await settingReadBy(), { scan: true, initPlan: false }, "read per row");
        const owner = connect(db.ownerUrl, { schema: "tenancy", max: 1 });
        try {
          await ensureTenancy(owner, "tenancy");
        } finally {
          await owner.end();
        }
        assertEquals(await settingReadBy(), { scan: false, initPlan: true });
        const seen = await withOrganization(
          A,
          () => read(sql, (q) => q<{ id: string }[]>`SELECT id FROM parents`),
        );
        assertEquals(seen.map((r) => r.id), [p.a], "and it still holds each to its own");
      },
    );

    await t.step("a process refuses to serve as a superuser or as the owner", async () => {
      await assertRuntimeRole(sql, "tenancy");
      for (const url of [db.url, db.ownerUrl]) {
        const wrong = connect(url, { schema: "tenancy", max: 1 });
        try {
          await assert.rejects(
            assertRuntimeRole(wrong, "tenancy"),
            /row-level security would not hold/,
          );
        } finally {
          await wrong.end();
        }
      }
    });
  } finally {
    await admin.end();
    await sql.end();
    await db.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

async function keys(admin: Sql): Promise<{ table: string; definition: string }[]> {
  return [
    ...await admin<{ table: string; definition: string }[]>`
      SELECT c.relname AS table, pg_get_constraintdef(con.oid) AS definition
      FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'tenancy' AND con.contype = 'f' ORDER BY 1`,
  ];
}

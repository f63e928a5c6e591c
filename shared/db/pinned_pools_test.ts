import assert from "node:assert/strict";
import { createTestDatabase, type TestDatabase } from "@printshop/shared/testing";
import {
  connect,
  isDatabaseUnavailable,
  oneStatement,
  pinnedOrganizations,
  read,
  type Sql,
  transaction,
  withOrganization,
} from "./mod.ts";
import type { PinnedPoolLimits } from "./pinned_pools.ts";
import { ORGANIZATION_SETTING } from "./tenancy.ts";

const A = "0193a9d5-0000-7000-8000-00000000000a";
const B = "0193a9d5-0000-7000-8000-00000000000b";
const C = "0193a9d5-0000-7000-8000-00000000000c";

/**
 * A database with one tenant table, held to the policy the services' tables have, with a row of
 * each of A, B and C; and a pool of the runtime role's with pinned reads as `limits` says, whose
 * every statement `sent` records.
 */
async function withPinned(
  limits: PinnedPoolLimits,
  fn: (sql: Sql, sent: string[], db: TestDatabase) => Promise<void>,
): Promise<void> {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  const sent: string[] = [];
  const sql = connect(db.appUrl, {
    schema: "public",
    max: 2,
    pinnedReads: limits,
    onQuery: (text) => sent.push(text.trim().toLowerCase()),
  });
  try {
    const check =
      `organization_id = nullif(current_setting('${ORGANIZATION_SETTING}', true), '')::uuid`;
    await admin.unsafe(`
      CREATE TABLE things (organization_id uuid NOT NULL, name text NOT NULL);
      ALTER TABLE things ENABLE ROW LEVEL SECURITY;
      ALTER TABLE things FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON things USING (${check}) WITH CHECK (${check});
      GRANT SELECT, INSERT ON things TO printshop_app;
      INSERT INTO things VALUES ('${A}', 'a'), ('${B}', 'b'), ('${C}', 'c');
    `);
    await fn(sql, sent, db);
  } finally {
    await sql.end({ timeout: 1 });
    await admin.end();
    await db.drop();
  }
}

/** What `organization` reads of the table, and whether it went in a transaction of its own. */
async function readAs(
  sql: Sql,
  sent: string[],
  organization: string,
): Promise<{ names: string[]; inTransaction: boolean }> {
  const before = sent.length;
  const rows = await withOrganization(
    organization,
    () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things ORDER BY name`),
  );
  return {
    names: rows.map((row) => row.name),
    inTransaction: sent.slice(before).some((text) => text.startsWith("begin")),
  };
}

Deno.test("pinned reads: an organisation with a pool reads in no transaction and sees its own rows only; one without reads in a transaction", async () => {
  await withPinned({ pools: 1, connections: 2, idleMs: 60_000 }, async (sql, sent) => {
    assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: false });
    assert.deepEqual(pinnedOrganizations(sql), [A]);
    // The one place is A's: B reads as every organisation can.
    assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: true });
    assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: false });
    // A read for no organisation: nothing pinned, nothing seen.
    const none = await read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things`);
    assert.deepEqual([...none], []);
    assert.deepEqual(pinnedOrganizations(sql), [A]);
  });
});

Deno.test("pinned reads: every connection of a pool is its organisation's, whichever serves the read", async () => {
  await withPinned({ pools: 2, connections: 3, idleMs: 60_000 }, async (sql) => {
    // More reads at once than connections, of two organisations interleaved.
    const reads = Array.from({ length: 24 }, (_, i) => {
      const organization = i % 2 === 0 ? A : B;
      return withOrganization(
        organization,
        () =>
          read(sql, (q) =>
            q<{ names: string[]; setting: string; pid: number }[]>`
            SELECT array_agg(name ORDER BY name) AS names,
              current_setting(${ORGANIZATION_SETTING}) AS setting, pg_backend_pid() AS pid
            FROM things, pg_sleep(0.01)`),
      )
        .then(([row]) => ({ organization, ...row! }));
    });
    const answers = await Promise.all(reads);
    const pidsOf = new Map<string, Set<number>>();
    for (const answer of answers) {
      assert.deepEqual(answer.names, [answer.organization === A ? "a" : "b"]);
      assert.equal(answer.setting, answer.organization);
      const pids = pidsOf.get(answer.organization) ?? new Set();
      pids.add(answer.pid);
      pidsOf.set(answer.organization, pids);
    }
    // No connection served both.
    const shared = [...pidsOf.get(A)!].filter((pid) => pidsOf.get(B)!.has(pid));
    assert.deepEqual(shared, []);
    assert.deepEqual([...pinnedOrganizations(sql)].sort(), [A, B]);
  });
});

Deno.test("pinned reads: a place goes to another organisation once its holder has been idle, never under a read", async () => {
  await withPinned({ pools: 1, connections: 1, idleMs: 300 }, async (sql, sent, db) => {
    const pidOf = async (organization: string): Promise<number> => {
      const [row] = await withOrganization(
        organization,
        () => read(sql, (q) => q<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`),
      );
      return row!.pid;
    };
    assert.equal((await readAs(sql, sent, A)).inTransaction, false);
    const pidOfA = await pidOf(A);
    // A's long read holds its place past the idle time.
    const long = withOrganization(
      A,
      () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things, pg_sleep(0.6)`),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: true });
    assert.deepEqual((await long).map((row) => row.name), ["a"]);
    assert.deepEqual(pinnedOrganizations(sql), [A]);
    // Idle for longer than idleMs: the place is B's, and A's pool is ended.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: false });
    assert.deepEqual(pinnedOrganizations(sql), [B]);
    assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: true });
    assert.notEqual(await pidOf(B), pidOfA);
    const admin = connect(db.url, { schema: "public", max: 1 });
    try {
      // A's connection is closed (in the background: given a moment).
      let open = true;
      for (let i = 0; i < 100 && open; i++) {
        const [row] = await admin<{ open: boolean }[]>`
          SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${pidOfA}) AS open`;
        open = row!.open;
        if (open) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(open, false);
    } finally {
      await admin.end();
    }
  });
});

Deno.test("pinned reads: a read nested in a pinned one stays on its pool; one that plans afresh, or in a transaction, does not pin", async () => {
  await withPinned({ pools: 1, connections: 1, idleMs: 60_000 }, async (sql, sent) => {
    const before = sent.length;
    const nested = await withOrganization(A, () =>
      read(sql, async (q) => {
        const [outer] = await q<{ name: string }[]>`SELECT name FROM things`;
        const [inner] = await read(q, (r) => r<{ name: string }[]>`SELECT name FROM things`);
        return [outer?.name, inner?.name];
      }));
    assert.deepEqual(nested, ["a", "a"]);
    assert.equal(sent.slice(before).some((text) => text.startsWith("begin")), false);
    const planned = sent.length;
    const custom = await withOrganization(
      B,
      () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things`, { customPlans: true }),
    );
    assert.deepEqual(custom.map((row) => row.name), ["b"]);
    assert(sent.slice(planned).some((text) => text.includes("plan_cache_mode")));
    // In C's transaction, a read is the transaction's: it sees what the transaction sees.
    const inTransaction = await withOrganization(C, () =>
      transaction(sql, async (tx) => {
        await tx`SET LOCAL application_name = 'in the transaction'`;
        return await read(sql, (q) =>
          q<{ name: string; app: string }[]>`
            SELECT name, current_setting('application_name') AS app FROM things`);
      }));
    assert.deepEqual([...inTransaction], [{ name: "c", app: "in the transaction" }]);
    assert.deepEqual(pinnedOrganizations(sql), [A]);
  });
});

Deno.test("pinned reads: an organisation id that is no UUID is refused before any pool is made", async () => {
  await withPinned({ pools: 2, connections: 1, idleMs: 60_000 }, async (sql) => {
    await assert.rejects(
      withOrganization("a' OR true --", () => read(sql, (q) => q`SELECT name FROM things`)),
      /UUID/,
    );
    assert.deepEqual(pinnedOrganizations(sql), []);
  });
});

Deno.test("pinned reads: the pool's end() ends its pinned pools, and no read pins after it", async () => {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  const sql = connect(db.appUrl, {
    schema: "public",
    max: 1,
    applicationName: "pinned-end",
    pinnedReads: { pools: 2, connections: 2, idleMs: 60_000 },
  });
  try {
    await withOrganization(A, () => read(sql, (q) => q`SELECT 1`));
    await withOrganization(B, () => read(sql, (q) => q`SELECT 1`));
    const count = async (): Promise<number> => {
      const [row] = await admin<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = 'pinned-end pinned'`;
      return row!.n;
    };
    assert(await count() >= 2);
    await sql.end({ timeout: 1 });
    let left = await count();
    for (let i = 0; i < 50 && left > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = await count();
    }
    assert.equal(left, 0);
    assert.deepEqual(pinnedOrganizations(sql), []);
  } finally {
    await admin.end();
    await db.drop();
  }
});

Deno.test("pinned reads: a read whose connection is killed fails as the database unavailable, and the next one reconnects as the same organisation", async () => {
  await withPinned({ pools: 1, connections: 2, idleMs: 60_000 }, async (sql, sent, db) => {
    assert.deepEqual((await readAs(sql, sent, A)).names, ["a"]);
    const admin = connect(db.url, { schema: "public", max: 1 });
    try {
      const killPinned = async (): Promise<number> => {
        const [row] = await admin<{ n: number }[]>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE application_name = 'public pinned'`;
        return row!.n;
      };
      // One read in flight when its connection goes: it fails, it does not hang.
      const inFlight = withOrganization(
        A,
        () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things, pg_sleep(5)`),
      );
      const failed = inFlight.then(() => null, (error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert((await killPinned()) >= 1);
      const error = await failed;
      assert(isDatabaseUnavailable(error), `a lost connection: ${String(error)}`);
      // The pool opens new connections, with the same start-up setting: a read sent before it
      // saw the close may fail as the one above did, and the next does not.
      await killPinned();
      let row: { names: string[]; setting: string } | undefined;
      for (let attempt = 1; row === undefined; attempt++) {
        try {
          [row] = await withOrganization(
            A,
            () =>
              read(sql, (q) =>
                q<{ names: string[]; setting: string }[]>`
                SELECT array_agg(name) AS names, current_setting(${ORGANIZATION_SETTING}) AS setting
                FROM things`),
          );
        } catch (error) {
          assert(isDatabaseUnavailable(error) && attempt < 3, String(error));
        }
      }
      assert.deepEqual(row, { names: ["a"], setting: A });
      assert.deepEqual(pinnedOrganizations(sql), [A]);
    } finally {
      await admin.end();
    }
  });
});

Deno.test("pinned reads: one statement that writes goes alone to the organisation's pool, held to the policy's check", async () => {
  await withPinned({ pools: 1, connections: 1, idleMs: 60_000 }, async (sql, sent) => {
    const insert = async (organization: string, owner: string): Promise<unknown> => {
      const rows = await withOrganization(
        organization,
        () =>
          oneStatement(sql, (tx) =>
            tx<{ name: string }[]>`
            INSERT INTO things VALUES (${owner}, ${"new of " + organization}) RETURNING name`),
      );
      return [...rows];
    };
    const before = sent.length;
    assert.deepEqual(await insert(A, A), [{ name: `new of ${A}` }]);
    assert.deepEqual(pinnedOrganizations(sql), [A]);
    assert.equal(sent.slice(before).some((text) => text.startsWith("begin")), false);
    // A row of another organisation's is refused on A's connection, and nothing is written.
    await assert.rejects(insert(A, B), /row-level security/);
    // B has no place: its statement is a transaction of its own, held to the same check.
    await assert.rejects(insert(B, A), /row-level security/);
    assert.deepEqual(await insert(B, B), [{ name: `new of ${B}` }]);
    assert.deepEqual((await readAs(sql, sent, A)).names, ["a", `new of ${A}`]);
    assert.deepEqual((await readAs(sql, sent, B)).names, ["b", `new of ${B}`]);
  });
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createTestDatabase } from "@printshop/shared/testing";
import {
  connect,
  oneStatement,
  pinnedOrganizations,
  read,
  type Sql,
  transaction,
  wakeAfterCommit,
  wakeAfterCommits,
  withOrganization,
} from "./mod.ts";

const A = "0193a9d5-0000-7000-8000-00000000000a";
const B = "0193a9d5-0000-7000-8000-00000000000b";

/** A pool with pinned reads for one organisation at a time (A earns it at its first read). */
async function withPool(fn: (sql: Sql) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  const sql = connect(db.url, {
    schema: "public",
    max: 2,
    pinnedReads: { pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 },
  });
  try {
    await sql`CREATE TABLE things (n int NOT NULL CHECK (n >= 0))`;
    await fn(sql);
  } finally {
    await sql.end({ timeout: 1 });
    await db.drop();
  }
}

Deno.test("commit wakes: a transaction's write that asked wakes its pool once committed, never after a rollback", async () => {
  await withPool(async (sql) => {
    let wakes = 0;
    const forget = wakeAfterCommits(sql, () => void wakes++);
    try {
      await transaction(sql, async (tx) => {
        assert(wakeAfterCommit(tx), "promised inside one of the module's transactions");
        await tx`INSERT INTO things VALUES (1)`;
        assertEquals(wakes, 0, "not before the commit");
      });
      assertEquals(wakes, 1);

      await transaction(sql, async (tx) => void await tx`INSERT INTO things VALUES (2)`);
      assertEquals(wakes, 1, "a write that did not ask wakes nothing");

      await assert.rejects(transaction(sql, async (tx) => {
        wakeAfterCommit(tx);
        await tx`INSERT INTO things VALUES (-1)`;
      }));
      assertEquals(wakes, 1, "a rolled-back write wakes nothing");

      // A second relay on the pool (a test's): both are woken, and each takes back its own.
      let second = 0;
      const forgetSecond = wakeAfterCommits(sql, () => void second++);
      await transaction(sql, (tx) => Promise.resolve(void wakeAfterCommit(tx)));
      forgetSecond();
      await transaction(sql, (tx) => Promise.resolve(void wakeAfterCommit(tx)));
      assertEquals([wakes, second], [3, 1]);

      // postgres.js's own transactions and the pool itself: no promise, the writer notifies.
      assertEquals(wakeAfterCommit(sql), false);
      await sql.begin((tx) => void assertEquals(wakeAfterCommit(tx), false));
    } finally {
      forget();
    }
    await transaction(sql, (tx) => Promise.resolve(assertEquals(wakeAfterCommit(tx), false)));
    assertEquals(wakes, 3, "nothing is promised once the wake is taken back");
  });
});

Deno.test("commit wakes: one statement that asked wakes once committed, on a pinned pool or in a transaction", async () => {
  await withPool(async (sql) => {
    let wakes = 0;
    const forget = wakeAfterCommits(sql, () => void wakes++);
    try {
      // A earns the one pinned pool; B then writes in a transaction of its own.
      await withOrganization(A, () => read(sql, (q) => q`SELECT 1`));
      assertEquals(pinnedOrganizations(sql), [A]);
      for (const organization of [A, B]) {
        const before = wakes;
        await withOrganization(organization, () =>
          oneStatement(sql, (q) => {
            assert(wakeAfterCommit(q), `promised to ${organization}'s statement`);
            return q`INSERT INTO things VALUES (3)`;
          }));
        assertEquals(wakes, before + 1, `${organization}'s statement woke the pool once`);
        await assert.rejects(withOrganization(organization, () =>
          oneStatement(sql, (q) => {
            wakeAfterCommit(q);
            return q`INSERT INTO things VALUES (-3)`;
          })));
        assertEquals(wakes, before + 1, `${organization}'s failed statement woke nothing`);
      }
      // Outside a statement being built, the pinned pool promises nothing to anyone.
      const [row] = await withOrganization(
        A,
        () => read(sql, (q) => q<{ pinned: boolean }[]>`SELECT ${wakeAfterCommit(q)} AS pinned`),
      );
      assertEquals(row?.pinned, false);
    } finally {
      forget();
    }
  });
});

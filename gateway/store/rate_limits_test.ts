/**
 * The shared token bucket against a real PostgreSQL: capacity, refill, and the row lock that
 * keeps concurrent requests (from one or several gateway replicas) within the policy.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, openDatabase, type Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { createTestDatabase, type TestDatabase } from "@printshop/shared/testing";
import { takeToken } from "./rate_limits.ts";

const MIGRATIONS = new URL("../migrations/", import.meta.url);

interface Harness extends AsyncDisposable {
  db: TestDatabase;
  sql: Sql;
  /** A second, independent pool on the same database, as another gateway replica has. */
  replica(): Sql;
}

async function harness(): Promise<Harness> {
  const db = await createTestDatabase();
  let sql: Sql;
  try {
    sql = await openDatabase(db.url, "gateway", MIGRATIONS);
  } catch (error) {
    await db.drop();
    throw error;
  }
  const pools: Sql[] = [sql];
  return {
    db,
    sql,
    replica() {
      const pool = connect(db.url, { schema: "gateway" });
      pools.push(pool);
      return pool;
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
      await db.drop();
    },
  };
}

/** Empties a bucket as of now, without waiting for requests to drain it. */
async function emptyBucket(sql: Sql, principal: string): Promise<void> {
  await sql`
    INSERT INTO rate_limit_buckets (principal, tokens, refreshed_at, admitted)
    VALUES (${principal}, 0, clock_timestamp(), false)
    ON CONFLICT (principal) DO UPDATE SET tokens = 0, refreshed_at = clock_timestamp()`;
}

Deno.test("takeToken", async (t) => {
  await using h = await harness();
  const { sql } = h;

  await t.step(
    "a fresh bucket admits requestsPerMinute requests back to back, then refuses",
    async () => {
      // 10/min refills one token every 6 s: nothing comes back during the run.
      const policy = { requestsPerMinute: 10 };
      const states = [];
      for (let i = 0; i < 10; i++) states.push(await takeToken(sql, "key:burst", policy));
      assert(states.every((s) => s.admitted), JSON.stringify(states));
      // Each admitted request leaves one token fewer (plus the sliver refilled in between).
      assert(Math.abs(states[0]!.tokens - 9) < 0.05, `first leaves 9, got ${states[0]!.tokens}`);
      for (let i = 1; i < states.length; i++) {
        assert(states[i]!.tokens < states[i - 1]!.tokens, "tokens go down");
      }
      assert(states[9]!.tokens >= 0 && states[9]!.tokens < 0.1, `last ${states[9]!.tokens}`);
      const refused = await takeToken(sql, "key:burst", policy);
      assertEquals(refused.admitted, false);
      assert(refused.tokens >= 0 && refused.tokens < 1, `refused leaves ${refused.tokens}`);
      const again = await takeToken(sql, "key:burst", policy);
      assertEquals(again.admitted, false);
    },
  );

  await t.step("the first request of a principal leaves capacity - 1 tokens", async () => {
    const state = await takeToken(sql, "key:first", { requestsPerMinute: 600 });
    assertEquals(state, { tokens: 599, admitted: true });
  });

  await t.step("separate principals do not share a bucket", async () => {
    const policy = { requestsPerMinute: 3 };
    for (let i = 0; i < 3; i++) assert((await takeToken(sql, "key:a", policy)).admitted);
    assertEquals((await takeToken(sql, "key:a", policy)).admitted, false);
    const b = await takeToken(sql, "key:b", policy);
    assertEquals(b.admitted, true);
    assert(Math.abs(b.tokens - 2) < 0.01, `b has its own bucket: ${b.tokens}`);
    // …and b's request did not put anything into a's.
    assertEquals((await takeToken(sql, "key:a", policy)).admitted, false);
  });

  await t.step(
    "a drained bucket refills continuously at requestsPerMinute / 60 per second",
    async () => {
      // 6000/min is 100 tokens a second: 100 ms gives back about 10.
      const policy = { requestsPerMinute: 6000 };
      const started = performance.now();
      await emptyBucket(sql, "key:refill");
      await sleep(100);
      let admitted = 0;
      for (;;) {
        const state = await takeToken(sql, "key:refill", policy);
        if (!state.admitted) break;
        admitted++;
        assert(admitted < 1000, "the bucket never ran dry");
      }
      const elapsed = performance.now() - started;
      // At least the 100 ms of sleep's worth; at most everything that can have refilled since the
      // bucket was emptied (the loop itself refills a little while it runs).
      assert(admitted >= 10, `admitted ${admitted} after 100 ms at 100/s`);
      assert(
        admitted <= Math.ceil(elapsed / 10) + 1,
        `admitted ${admitted} in ${elapsed.toFixed(0)} ms at 100/s`,
      );
    },
  );

  await t.step("refused requests do not hold back the refill", async () => {
    // 60/min: one token a second. Knocking on an empty bucket every 50 ms must not reset the
    // clock: a token is back about a second after the bucket was emptied.
    const policy = { requestsPerMinute: 60 };
    const started = performance.now();
    await emptyBucket(sql, "key:knock");
    let admittedAt = -1;
    while (performance.now() - started < 3000) {
      const state = await takeToken(sql, "key:knock", policy);
      if (state.admitted) {
        admittedAt = performance.now() - started;
        break;
      }
      await sleep(50);
    }
    assert(admittedAt >= 0, "a token came back within 3 s while being asked every 50 ms");
    assert(admittedAt >= 900 && admittedAt <= 2000, `a token was back after ${admittedAt} ms`);
  });

  await t.step("a bucket idle for long holds no more than its capacity", async () => {
    const policy = { requestsPerMinute: 5 };
    await sql`
      INSERT INTO rate_limit_buckets (principal, tokens, refreshed_at, admitted)
      VALUES ('key:idle', 0, clock_timestamp() - interval '1 day', false)`;
    const state = await takeToken(sql, "key:idle", policy);
    assertEquals(state, { tokens: 4, admitted: true });
    for (let i = 0; i < 4; i++) assert((await takeToken(sql, "key:idle", policy)).admitted);
    assertEquals((await takeToken(sql, "key:idle", policy)).admitted, false);
  });

  await t.step("a lowered limit caps a fuller bucket at once", async () => {
    assertEquals(await takeToken(sql, "key:lowered", { requestsPerMinute: 600 }), {
      tokens: 599,
      admitted: true,
    });
    const lowered = await takeToken(sql, "key:lowered", { requestsPerMinute: 3 });
    assertEquals(lowered, { tokens: 2, admitted: true });
    assert((await takeToken(sql, "key:lowered", { requestsPerMinute: 3 })).admitted);
    assert((await takeToken(sql, "key:lowered", { requestsPerMinute: 3 })).admitted);
    assertEquals((await takeToken(sql, "key:lowered", { requestsPerMinute: 3 })).admitted, false);
  });

  await t.step("tokens are never negative, however often a drained bucket is asked", async () => {
    const policy = { requestsPerMinute: 1 };
    const states = await Promise.all(
      Array.from({ length: 30 }, () => takeToken(sql, "key:never-negative", policy)),
    );
    assertEquals(states.filter((s) => s.admitted).length, 1);
    assert(states.every((s) => s.tokens >= 0), JSON.stringify(states.map((s) => s.tokens)));
  });

  await t.step(
    "concurrent requests through two pools (two replicas) admit exactly the capacity",
    async () => {
      // 20/min is one token every 3 s; allow one for a run that takes that long.
      const policy = { requestsPerMinute: 20 };
      const pools = [sql, h.replica()];
      const states = await Promise.all(
        Array.from({ length: 50 }, (_, i) => takeToken(pools[i % 2]!, "key:shared", policy)),
      );
      const admitted = states.filter((s) => s.admitted).length;
      assert(admitted >= 20 && admitted <= 21, `admitted ${admitted} of 50 with capacity 20`);
      assert(states.every((s) => s.tokens >= 0 && s.tokens <= 20));
      const [row] = await sql<{ tokens: number }[]>`
        SELECT tokens FROM rate_limit_buckets WHERE principal = 'key:shared'`;
      assert(row!.tokens < 1, `the bucket is drained: ${row!.tokens}`);
    },
  );

  await t.step("concurrent first requests of a new principal all see one bucket", async () => {
    const policy = { requestsPerMinute: 5 };
    const pools = [sql, h.replica()];
    const states = await Promise.all(
      Array.from({ length: 16 }, (_, i) => takeToken(pools[i % 2]!, "key:new-burst", policy)),
    );
    assertEquals(states.filter((s) => s.admitted).length, 5);
    const [{ count }] = await sql<[{ count: number }]>`
      SELECT count(*)::int AS count FROM rate_limit_buckets WHERE principal = 'key:new-burst'`;
    assertEquals(count, 1);
  });
});

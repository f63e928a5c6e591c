import assert from "node:assert/strict";
import { openDatabase } from "@printshop/shared/db";
import { createTestDatabase } from "@printshop/shared/testing";
import { LEASE_LIFETIME_MS, maxLease, RateLimiter } from "./rate_limiter.ts";

const MIGRATIONS = new URL("./migrations/", import.meta.url);

Deno.test("RateLimiter leases tokens to a busy principal and never admits more than the bucket holds", async () => {
  const db = await createTestDatabase();
  let statements = 0;
  const sql = await openDatabase(db.url, "gateway", MIGRATIONS, undefined, {
    platform: false,
    onQuery: () => statements++,
  });
  try {
    // 60_000/min refills 1000 tokens a second; a tiny clock keeps refill out of the count.
    let clock = 1_000_000;
    const limiter = new RateLimiter(sql, () => clock);
    const policy = { requestsPerMinute: 600 };
    assert.equal(maxLease(policy), 6);
    const before = statements;
    let admitted = 0;
    for (let i = 0; i < 700; i++) {
      if ((await limiter.take("key:busy", policy)).admitted) admitted++;
    }
    // Refill during the loop is real time (the database's clock), so allow a little slack.
    assert.ok(admitted >= 600 && admitted <= 610, `admitted ${admitted}`);
    assert.ok(statements - before < 350, `${statements - before} statements for 700 requests`);

    // A quiet principal gets one token per round trip, so nothing is held back from it.
    const quiet = new RateLimiter(sql, () => clock);
    for (let i = 0; i < 5; i++) {
      assert.ok((await quiet.take("key:quiet", policy)).admitted);
      clock += LEASE_LIFETIME_MS + 1;
    }
    const [row] = await sql<{ granted: number }[]>`
      SELECT granted FROM rate_limit_buckets WHERE principal = 'key:quiet'`;
    assert.equal(row!.granted, 1);
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("RateLimiter gives unspent leased tokens back to the shared bucket", async () => {
  const db = await createTestDatabase();
  const sql = await openDatabase(db.url, "gateway", MIGRATIONS, undefined, { platform: false });
  try {
    let clock = 0;
    const a = new RateLimiter(sql, () => clock);
    const policy = { requestsPerMinute: 6000 }; // leases of up to 60
    // Make the principal busy so its leases grow.
    for (let i = 0; i < 200; i++) await a.take("key:shared", policy);
    const [held] = await sql<{ tokens: number }[]>`
      SELECT tokens FROM rate_limit_buckets WHERE principal = 'key:shared'`;
    clock += LEASE_LIFETIME_MS + 1;
    await a.take("key:shared", policy);
    const [after] = await sql<{ tokens: number; granted: number }[]>`
      SELECT tokens, granted FROM rate_limit_buckets WHERE principal = 'key:shared'`;
    // The expired lease's leftovers came back before the new, smaller lease was taken.
    assert.ok(after!.tokens + after!.granted > held!.tokens, JSON.stringify({ held, after }));
  } finally {
    await sql.end();
    await db.drop();
  }
});

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { FailedLookupLimiter } from "./failed_lookup_limiter.ts";

const policy = { requestsPerMinute: 3 };

Deno.test("FailedLookupLimiter: each address group has a bucket of its own", () => {
  let now = 0;
  const limiter = new FailedLookupLimiter(policy, () => now);
  for (let i = 0; i < 3; i++) assertEquals(limiter.take("203.0.113.7"), null);
  // 3 a minute: one every 20 s.
  assertEquals(limiter.take("203.0.113.7"), 20);
  assertEquals(limiter.take("198.51.100.1"), null, "another address is unaffected");
  now = 20_000;
  assertEquals(limiter.take("203.0.113.7"), null);
});

Deno.test("FailedLookupLimiter: a look-up given back does not count", () => {
  const limiter = new FailedLookupLimiter(policy, () => 0);
  for (let i = 0; i < 10; i++) {
    assertEquals(limiter.take("203.0.113.7"), null);
    limiter.giveBack("203.0.113.7");
  }
  // A group back at a full bucket is not remembered at all.
  assertEquals(limiter.size, 0);
});

Deno.test("FailedLookupLimiter: memory is bounded however many addresses take part", () => {
  const limiter = new FailedLookupLimiter(policy, () => 0, 100);
  for (let i = 0; i < 10_000; i++) limiter.take(`10.0.${i >> 8}.${i & 255}`);
  assertEquals(limiter.size, 100);
  // The oldest went first; the newest are still limited.
  for (let i = 0; i < 2; i++) limiter.take("10.0.39.15");
  assertEquals(limiter.take("10.0.39.15"), 20);
  assertEquals(limiter.take("10.0.0.0"), null, "forgotten: a full bucket again");
});

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  isFull,
  type LookupBudget,
  reserveLookup,
  returnLookup,
  tokensAt,
} from "./failed_lookups.ts";

const policy = { requestsPerMinute: 30 };

/** Reserves `n` look-ups back to back at `now`: whether all were admitted, and the budget. */
function reserveMany(n: number, now: number): { admitted: boolean; budget?: LookupBudget } {
  let budget: LookupBudget | undefined;
  let admitted = true;
  for (let i = 0; i < n; i++) {
    const reservation = reserveLookup(policy, budget, now);
    if (reservation.admitted) budget = reservation.budget;
    else admitted = false;
  }
  return { admitted, budget };
}

Deno.test("reserveLookup: a fresh group has the whole burst, then waits for the refill", () => {
  const burst = reserveMany(30, 0);
  assertEquals(burst.admitted, true);
  assertEquals(burst.budget, { tokens: 0, at: 0 });
  // 30 a minute is one token every 2 s: an empty bucket says so.
  assertEquals(reserveLookup(policy, burst.budget, 0), { admitted: false, retryAfterSeconds: 2 });
  assertEquals(reserveLookup(policy, burst.budget, 1_500), {
    admitted: false,
    retryAfterSeconds: 1,
  });
  const later = reserveLookup(policy, burst.budget, 2_000);
  assertEquals(later, { admitted: true, budget: { tokens: 0, at: 2_000 } });
});

Deno.test("reserveLookup: a refusal takes nothing, so waiting is enough", () => {
  const empty: LookupBudget = { tokens: 0, at: 0 };
  for (let i = 0; i < 100; i++) reserveLookup(policy, empty, 1_000);
  assertEquals(reserveLookup(policy, empty, 2_000).admitted, true);
});

Deno.test("returnLookup: a look-up that found a credential gives its token back", () => {
  const { budget } = reserveMany(30, 0);
  const back = returnLookup(policy, budget, 0);
  assertEquals(back, { tokens: 1, at: 0 });
  assertEquals(reserveLookup(policy, back, 0).admitted, true);
  // Never beyond the burst.
  assertEquals(returnLookup(policy, undefined, 0), { tokens: 30, at: 0 });
  assertEquals(returnLookup(policy, { tokens: 29.5, at: 0 }, 0), { tokens: 30, at: 0 });
});

Deno.test("tokensAt and isFull: a bucket refills to the burst and no further", () => {
  assertEquals(tokensAt(policy, undefined, 5), 30);
  assertEquals(tokensAt(policy, { tokens: 0, at: 0 }, 10_000), 5);
  assertEquals(tokensAt(policy, { tokens: 0, at: 0 }, 3_600_000), 30);
  assertEquals(isFull(policy, { tokens: 0, at: 0 }, 59_999), false);
  assertEquals(isFull(policy, { tokens: 0, at: 0 }, 60_000), true);
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  rateLimitHeaders,
  refillPerSecond,
  retryAfterSeconds,
  secondsUntilFull,
} from "./token_bucket.ts";

const perMinute = (requestsPerMinute: number) => ({ requestsPerMinute });

Deno.test("refillPerSecond is a minute's allowance spread over 60 seconds", () => {
  assertEquals(refillPerSecond(perMinute(600)), 10);
  assertEquals(refillPerSecond(perMinute(60)), 1);
  assertEquals(refillPerSecond(perMinute(30)), 0.5);
});

Deno.test("retryAfterSeconds", async (t) => {
  await t.step("is 0 while a whole token is there", () => {
    assertEquals(retryAfterSeconds(perMinute(60), 1), 0);
    assertEquals(retryAfterSeconds(perMinute(60), 1.5), 0);
    assertEquals(retryAfterSeconds(perMinute(60), 59), 0);
    assertEquals(retryAfterSeconds(perMinute(1), 1), 0);
  });

  await t.step("is ceil((1 - tokens) / rate) otherwise", () => {
    // 60/min refills one token a second.
    assertEquals(retryAfterSeconds(perMinute(60), 0.2), 1);
    assertEquals(retryAfterSeconds(perMinute(60), 0), 1);
    assertEquals(retryAfterSeconds(perMinute(60), 0.999), 1);
    // 30/min: half a token a second, so an empty bucket waits two seconds.
    assertEquals(retryAfterSeconds(perMinute(30), 0), 2);
    assertEquals(retryAfterSeconds(perMinute(30), 0.5), 1);
    assertEquals(retryAfterSeconds(perMinute(30), 0.25), 2);
    // 1/min: a whole minute for an empty bucket.
    assertEquals(retryAfterSeconds(perMinute(1), 0), 60);
    assertEquals(retryAfterSeconds(perMinute(1), 0.5), 30);
    // 20/min (one token every 3 s).
    assertEquals(retryAfterSeconds(perMinute(20), 0), 3);
    // A fast bucket still answers a whole second: never 0 while no token is there.
    assertEquals(retryAfterSeconds(perMinute(600), 0), 1);
    assertEquals(retryAfterSeconds(perMinute(600), 0.95), 1);
    assertEquals(retryAfterSeconds(perMinute(1_000_000), 0.999999), 1);
  });

  await t.step("is never earlier than the moment a token is back", () => {
    for (const rpm of [1, 7, 20, 30, 59, 60, 61, 600, 6000]) {
      for (const tokens of [0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999]) {
        const seconds = retryAfterSeconds(perMinute(rpm), tokens);
        assert(Number.isInteger(seconds), `integer for ${rpm}/min, ${tokens}`);
        assert(seconds >= 1, `at least 1 s for ${rpm}/min, ${tokens}`);
        const refilled = tokens + seconds * refillPerSecond(perMinute(rpm));
        assert(refilled >= 1 - 1e-9, `a token is back after ${seconds} s (${rpm}/min, ${tokens})`);
        // …and not a whole second later than needed.
        const before = tokens + (seconds - 1) * refillPerSecond(perMinute(rpm));
        assert(before < 1 + 1e-9, `${seconds} s is not more than needed (${rpm}/min, ${tokens})`);
      }
    }
  });
});

Deno.test("secondsUntilFull", async (t) => {
  await t.step("is 0 for a full (or over-full) bucket", () => {
    assertEquals(secondsUntilFull(perMinute(60), 60), 0);
    assertEquals(secondsUntilFull(perMinute(60), 61), 0);
  });

  await t.step("is the whole seconds to refill what is missing", () => {
    assertEquals(secondsUntilFull(perMinute(60), 59), 1);
    assertEquals(secondsUntilFull(perMinute(60), 59.5), 1);
    assertEquals(secondsUntilFull(perMinute(60), 0), 60);
    assertEquals(secondsUntilFull(perMinute(600), 599), 1);
    assertEquals(secondsUntilFull(perMinute(600), 0), 60);
    assertEquals(secondsUntilFull(perMinute(600), 300), 30);
    assertEquals(secondsUntilFull(perMinute(30), 29), 2);
    assertEquals(secondsUntilFull(perMinute(30), 0), 60);
  });

  await t.step("never exceeds a window for a bucket that is not below empty", () => {
    for (const rpm of [1, 20, 60, 600]) {
      for (const tokens of [0, 0.5, rpm / 2, rpm - 1, rpm]) {
        const t = secondsUntilFull(perMinute(rpm), tokens);
        assert(Number.isInteger(t) && t >= 0 && t <= 60, `${rpm}/min, ${tokens} → ${t}`);
      }
    }
  });
});

Deno.test("rateLimitHeaders", async (t) => {
  await t.step("describe the policy and the remaining quota in the IETF syntax", () => {
    assertEquals(rateLimitHeaders(perMinute(600), { tokens: 599, admitted: true }), {
      "RateLimit-Policy": '"default";q=600;w=60',
      "RateLimit": '"default";r=599;t=1',
    });
    assertEquals(rateLimitHeaders(perMinute(60), { tokens: 59, admitted: true }), {
      "RateLimit-Policy": '"default";q=60;w=60',
      "RateLimit": '"default";r=59;t=1',
    });
    assertEquals(rateLimitHeaders(perMinute(60), { tokens: 60, admitted: true }), {
      "RateLimit-Policy": '"default";q=60;w=60',
      "RateLimit": '"default";r=60;t=0',
    });
  });

  await t.step("r is the whole tokens left, rounded down", () => {
    assertEquals(
      rateLimitHeaders(perMinute(600), { tokens: 599.7, admitted: true }).RateLimit,
      '"default";r=599;t=1',
    );
    assertEquals(
      rateLimitHeaders(perMinute(60), { tokens: 0.4, admitted: false }).RateLimit,
      '"default";r=0;t=60',
    );
    assertEquals(
      rateLimitHeaders(perMinute(60), { tokens: 0, admitted: false }).RateLimit,
      '"default";r=0;t=60',
    );
  });

  await t.step("r is never negative", () => {
    const field = rateLimitHeaders(perMinute(60), { tokens: -0.5, admitted: false }).RateLimit ??
      "";
    assert(/^"default";r=0;t=\d+$/.test(field), field);
    const worse = rateLimitHeaders(perMinute(60), { tokens: -3, admitted: false }).RateLimit ?? "";
    assert(/^"default";r=0;t=\d+$/.test(worse), worse);
  });

  await t.step("the policy field does not depend on the bucket state", () => {
    const a = rateLimitHeaders(perMinute(42), { tokens: 41, admitted: true });
    const b = rateLimitHeaders(perMinute(42), { tokens: 0, admitted: false });
    assertEquals(a["RateLimit-Policy"], '"default";q=42;w=60');
    assertEquals(b["RateLimit-Policy"], '"default";q=42;w=60');
  });
});

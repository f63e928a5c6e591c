import assert from "node:assert/strict";
import {
  type ConnectionClock,
  expiryAnswer,
  newClock,
  nextDeadline,
  sweepIntervalMs,
} from "./deadlines.ts";

const TIMEOUTS = { headerTimeoutMs: 10_000, bodyTimeoutMs: 30_000, idleTimeoutMs: 5_000 };
const clock = (changes: Partial<ConnectionClock>): ConnectionClock => ({
  ...newClock(1_000),
  ...changes,
});

Deno.test("nextDeadline: a new connection that sends nothing is closed after the idle timeout", () => {
  assert.deepEqual(nextDeadline(newClock(1_000), TIMEOUTS), { at: 6_000, reason: "idle" });
});

Deno.test("nextDeadline: a head is timed from its first byte, a body from the end of its head", () => {
  assert.deepEqual(nextDeadline(clock({ request: "head", since: 2_000 }), TIMEOUTS), {
    at: 12_000,
    reason: "head",
  });
  assert.deepEqual(nextDeadline(clock({ request: "body", since: 2_000, owed: 1 }), TIMEOUTS), {
    at: 32_000,
    reason: "body",
  });
});

Deno.test("nextDeadline: no deadline while only the app's answer is awaited", () => {
  assert.equal(nextDeadline(clock({ request: "idle", since: 2_000, owed: 1 }), TIMEOUTS), null);
});

Deno.test("nextDeadline: idle time counts from the later of the last request and the last answer", () => {
  const afterAnswer = clock({ request: "idle", since: 2_000, owed: 0, idleSince: 9_000 });
  assert.deepEqual(nextDeadline(afterAnswer, TIMEOUTS), { at: 14_000, reason: "idle" });
  const afterRequest = clock({ request: "idle", since: 9_500, owed: 0, idleSince: 9_000 });
  assert.deepEqual(nextDeadline(afterRequest, TIMEOUTS), { at: 14_500, reason: "idle" });
});

Deno.test("nextDeadline: a client that stops reading its answer is cut off too", () => {
  const stalled = clock({ request: "idle", since: 2_000, owed: 1, sendingSince: 3_000 });
  assert.deepEqual(nextDeadline(stalled, TIMEOUTS), { at: 33_000, reason: "send" });
  // Whichever comes first.
  const both = clock({ request: "head", since: 30_000, owed: 1, sendingSince: 3_000 });
  assert.deepEqual(nextDeadline(both, TIMEOUTS), { at: 33_000, reason: "send" });
});

Deno.test("nextDeadline: a refused connection gets the idle timeout to read its answer", () => {
  assert.deepEqual(nextDeadline(clock({ request: "closing", since: 4_000 }), TIMEOUTS), {
    at: 9_000,
    reason: "closing",
  });
});

Deno.test("expiryAnswer: 408 only when nothing else can be on the wire to the client", () => {
  const head = expiryAnswer("head", clock({ request: "head", owed: 0 }), false, TIMEOUTS);
  assert.equal(head?.status, 408);
  assert.equal(head?.code, "request_timeout");
  assert.match(head!.message, /10000 ms/);
  assert.equal(
    expiryAnswer("head", clock({ request: "head", owed: 1 }), false, TIMEOUTS),
    null,
    "an earlier request's answer is still owed",
  );
  assert.equal(
    expiryAnswer("body", clock({ request: "body", owed: 1 }), false, TIMEOUTS)?.status,
    408,
  );
  assert.equal(
    expiryAnswer("body", clock({ request: "body", owed: 1 }), true, TIMEOUTS),
    null,
    "the app's answer to it has begun",
  );
  assert.equal(expiryAnswer("body", clock({ request: "body", owed: 2 }), false, TIMEOUTS), null);
  assert.equal(expiryAnswer("idle", clock({}), false, TIMEOUTS), null, "idle closes silently");
  assert.equal(expiryAnswer("send", clock({ owed: 1 }), false, TIMEOUTS), null);
});

Deno.test("sweepIntervalMs: a quarter of the shortest timeout, within 10 ms and 1 s", () => {
  assert.equal(sweepIntervalMs(TIMEOUTS), 1_000);
  assert.equal(sweepIntervalMs({ ...TIMEOUTS, idleTimeoutMs: 800 }), 200);
  assert.equal(sweepIntervalMs({ ...TIMEOUTS, headerTimeoutMs: 1 }), 10);
});

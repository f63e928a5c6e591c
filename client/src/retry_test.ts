/**
 * The retrying fetch against a real local HTTP server that answers from a script, so each test
 * sees exactly what went over the wire on every attempt.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { backoffMs, retryAfterMs, withRetries } from "./retry.ts";

interface Seen {
  method: string;
  key: string | null;
  body: string;
  at: number;
}

type Answer = { status: number; headers?: Record<string, string>; body?: unknown };

/** A server answering the scripted answers in order (the last one from then on). */
function scripted(
  answers: Answer[],
): { url: string; seen: Seen[]; [Symbol.asyncDispose](): Promise<void> } {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({
      method: req.method,
      key: req.headers.get("idempotency-key"),
      body: await req.text(),
      at: performance.now(),
    });
    const answer = answers[Math.min(seen.length, answers.length) - 1]!;
    return Response.json(answer.body ?? { status: true }, {
      status: answer.status,
      headers: answer.headers ?? {},
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/quotes`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const send = (request: Request): Promise<Response> => fetch(request);
const post = (url: string, body: unknown, headers: HeadersInit = {}): Request =>
  new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

Deno.test("a write gets a random Idempotency-Key unless it has one", async () => {
  await using server = scripted([{ status: 201 }]);
  const fetchWith = withRetries(send);
  await (await fetchWith(post(server.url, {}))).body?.cancel();
  await (await fetchWith(post(server.url, {}))).body?.cancel();
  await (await fetchWith(post(server.url, {}, { "Idempotency-Key": "mine-1" }))).body?.cancel();
  await (await fetchWith(new Request(server.url))).body?.cancel();
  const [a, b, c, read] = server.seen;
  assert(/^[0-9a-f-]{36}$/.test(a!.key!), `a UUID, got ${a!.key}`);
  assert(a!.key !== b!.key, "a new key per write");
  assertEquals(c!.key, "mine-1");
  assertEquals(read!.key, null, "reads carry no key");
});

Deno.test("429 with Retry-After: 1 is retried after a second with the same key and body", async () => {
  await using server = scripted([
    { status: 429, headers: { "Retry-After": "1" }, body: { error: "rate_limited" } },
    { status: 201, body: { status: true, data: { id: "q1" } } },
  ]);
  const retries: number[] = [];
  const fetchWith = withRetries(send, { onRetry: (e) => retries.push(e.delayMs) });
  const response = await fetchWith(post(server.url, { reference: "PO-1" }));
  assertEquals(response.status, 201);
  assertEquals(await response.json(), { status: true, data: { id: "q1" } });
  assertEquals(server.seen.length, 2);
  const [first, second] = server.seen;
  assert(first!.key !== null);
  assertEquals(second!.key, first!.key);
  assertEquals(second!.body, JSON.stringify({ reference: "PO-1" }));
  assertEquals(second!.body, first!.body);
  assertEquals(retries, [1000]);
  assert(second!.at - first!.at >= 950, `waited ${second!.at - first!.at} ms`);
});

Deno.test("503 without Retry-After backs off with jitter, a bounded number of times", async () => {
  await using server = scripted([{ status: 503, body: { error: "service_unavailable" } }]);
  const delays: number[] = [];
  const fetchWith = withRetries(send, {
    retries: 3,
    retryBaseDelayMs: 20,
    onRetry: (e) => delays.push(e.delayMs),
  });
  const response = await fetchWith(new Request(server.url));
  assertEquals(response.status, 503, "the last answer is returned");
  assertEquals((await response.json()).error, "service_unavailable");
  assertEquals(server.seen.length, 4, "the first attempt and 3 retries");
  assertEquals(delays.length, 3);
  delays.forEach((delay, i) => {
    const ceiling = 20 * 2 ** i;
    assert(delay >= ceiling / 2 && delay <= ceiling, `retry ${i + 1} waited ${delay} ms`);
  });
});

Deno.test("409 idempotency_request_in_flight is retried; other 409s are not", async (t) => {
  await t.step("in flight", async () => {
    await using server = scripted([
      {
        status: 409,
        headers: { "Retry-After": "0" },
        body: { error: "idempotency_request_in_flight" },
      },
      { status: 201 },
    ]);
    const response = await withRetries(send)(post(server.url, { a: 1 }));
    await response.body?.cancel();
    assertEquals(response.status, 201);
    assertEquals(server.seen.map((s) => s.key).filter((k) => k === server.seen[0]!.key).length, 2);
  });
  for (const code of ["conflict", "idempotency_key_reused"]) {
    await t.step(code, async () => {
      await using server = scripted([{ status: 409, body: { error: code } }]);
      const response = await withRetries(send)(post(server.url, { a: 1 }));
      assertEquals(response.status, 409);
      assertEquals((await response.json()).error, code, "the body is still readable");
      assertEquals(server.seen.length, 1);
    });
  }
});

Deno.test("a write without a key is sent once: keys turned off", async () => {
  await using server = scripted([{ status: 429, headers: { "Retry-After": "0" } }]);
  const response = await withRetries(send, { idempotencyKeys: false })(post(server.url, {}));
  await response.body?.cancel();
  assertEquals(response.status, 429);
  assertEquals(server.seen.length, 1);
  assertEquals(server.seen[0]!.key, null);
});

Deno.test("a Retry-After beyond the cap returns the answer at once", async () => {
  await using server = scripted([{ status: 429, headers: { "Retry-After": "120" } }]);
  const started = performance.now();
  const response = await withRetries(send, { maxRetryDelayMs: 5_000 })(new Request(server.url));
  await response.body?.cancel();
  assertEquals(response.status, 429);
  assertEquals(server.seen.length, 1);
  assert(performance.now() - started < 1_000);
});

Deno.test("retries: 0 sends once", async () => {
  await using server = scripted([{ status: 503, headers: { "Retry-After": "0" } }]);
  const response = await withRetries(send, { retries: 0 })(new Request(server.url));
  await response.body?.cancel();
  assertEquals(response.status, 503);
  assertEquals(server.seen.length, 1);
});

Deno.test("aborting while waiting to retry rejects with the signal's reason", async () => {
  await using server = scripted([{ status: 503, headers: { "Retry-After": "5" } }]);
  const controller = new AbortController();
  const pending = withRetries(send)(new Request(server.url, { signal: controller.signal }));
  while (server.seen.length === 0) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  controller.abort(new Error("stopped"));
  await assert.rejects(pending, /stopped/);
  assertEquals(server.seen.length, 1);
});

Deno.test("Retry-After: seconds, an HTTP date, or nothing usable", () => {
  assertEquals(retryAfterMs("2"), 2000);
  assertEquals(retryAfterMs(" 0 "), 0);
  const now = Date.parse("2026-11-28T10:00:00Z");
  assertEquals(retryAfterMs("Sat, 28 Nov 2026 10:00:03 GMT", now), 3000);
  assertEquals(retryAfterMs("Sat, 28 Nov 2026 09:00:00 GMT", now), 0);
  assertEquals(retryAfterMs("soon"), null);
  assertEquals(retryAfterMs(null), null);
  for (let i = 0; i < 50; i++) {
    const delay = backoffMs(10, 500, 30_000);
    assert(delay >= 15_000 && delay <= 30_000, `capped: ${delay}`);
  }
});

/**
 * Idempotency-Key records against a real PostgreSQL: claiming, replaying, releasing, lapsed
 * claims, expiry, purging, and one winner among concurrent claims from several pools.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, openDatabase, type Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import { ApiError } from "@printshop/shared/http";
import { createTestDatabase, type TestDatabase } from "@printshop/shared/testing";
import { fingerprintOf, idempotencyKeyOf, withIdempotency } from "../idempotency.ts";
import {
  claimKey,
  type ClaimOutcome,
  type ClaimRequest,
  completeKey,
  purgeExpired,
  releaseKey,
} from "./idempotency.ts";

const MIGRATIONS = new URL("../migrations/", import.meta.url);
const LONG = 60 * 60_000;

interface Harness extends AsyncDisposable {
  db: TestDatabase;
  sql: Sql;
  /** Statements the main pool has run, for counting batches. */
  statements: string[];
  /** A second, independent pool on the same database, as another gateway replica has. */
  replica(): Sql;
}

async function harness(): Promise<Harness> {
  const db = await createTestDatabase();
  const statements: string[] = [];
  let sql: Sql;
  try {
    sql = await openDatabase(db.url, "gateway", MIGRATIONS, undefined, {
      onQuery: (text) => statements.push(text),
    });
  } catch (error) {
    await db.drop();
    throw error;
  }
  const pools: Sql[] = [sql];
  return {
    db,
    sql,
    statements,
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

const fp = (text: string) => new TextEncoder().encode(text.padEnd(32, "."));

const FP_A = fp("request A");
const FP_B = fp("request B");

let keys = 0;
/** A claim for a key of its own, lasting long unless told otherwise. */
function claim(overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    principal: "key:one",
    key: `k-${++keys}`,
    fingerprint: FP_A,
    lockMs: LONG,
    retentionMs: LONG,
    ...overrides,
  };
}

const kindOf = (outcome: ClaimOutcome) => outcome.kind;

Deno.test("idempotency records", async (t) => {
  await using h = await harness();
  const { sql } = h;

  await t.step("the first claim wins; the same request again is in flight", async () => {
    const request = claim();
    assertEquals(await claimKey(sql, request), { kind: "claimed" });
    assertEquals(await claimKey(sql, request), { kind: "in_flight" });
    assertEquals(await claimKey(sql, request), { kind: "in_flight" });
  });

  await t.step("a different request under a claimed key is reused", async () => {
    const request = claim();
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    assertEquals(await claimKey(sql, { ...request, fingerprint: FP_B }), { kind: "reused" });
    // A fingerprint that is a prefix of the other is still different.
    assertEquals(
      await claimKey(sql, { ...request, fingerprint: FP_A.subarray(0, 16) }),
      { kind: "reused" },
    );
    // …and the reuse attempt did not take the key over.
    assertEquals(await claimKey(sql, request), { kind: "in_flight" });
  });

  await t.step("a completed request is replayed byte for byte", async () => {
    const request = claim();
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    const body = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x7b, 0x22, 0x00, 0x80]);
    const headers = { "content-type": "application/json", location: "/v1/quotes/abc" };
    await completeKey(sql, request.principal, request.key, { status: 201, headers, body });
    const outcome = await claimKey(sql, request);
    assert(outcome.kind === "completed", outcome.kind);
    assertEquals(outcome.response.status, 201);
    assertEquals(outcome.response.headers, headers);
    assert(outcome.response.body instanceof Uint8Array);
    assertEquals([...outcome.response.body], [...body]);
    // Replaying again gives the same.
    const again = await claimKey(sql, request);
    assert(again.kind === "completed");
    assertEquals([...again.response.body], [...body]);
    // A different request under the completed key is reused, not replayed.
    assertEquals(await claimKey(sql, { ...request, fingerprint: FP_B }), { kind: "reused" });
  });

  await t.step("a completed record keeps an empty body and no headers", async () => {
    const request = claim();
    await claimKey(sql, request);
    await completeKey(sql, request.principal, request.key, {
      status: 204,
      headers: {},
      body: new Uint8Array(),
    });
    const outcome = await claimKey(sql, request);
    assert(outcome.kind === "completed");
    assertEquals(outcome.response.status, 204);
    assertEquals(outcome.response.headers, {});
    assertEquals(outcome.response.body.length, 0);
  });

  await t.step("a 4xx outcome is stored like any other", async () => {
    const request = claim();
    await claimKey(sql, request);
    const body = new TextEncoder().encode('{"error":"validation_error"}');
    await completeKey(sql, request.principal, request.key, {
      status: 400,
      headers: { "content-type": "application/json" },
      body,
    });
    const outcome = await claimKey(sql, request);
    assert(outcome.kind === "completed");
    assertEquals(outcome.response.status, 400);
    assertEquals(new TextDecoder().decode(outcome.response.body), '{"error":"validation_error"}');
  });

  await t.step("a released key can be claimed again, even by a different request", async () => {
    const request = claim();
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    await releaseKey(sql, request.principal, request.key);
    assertEquals(await claimKey(sql, request), { kind: "claimed" });
    await releaseKey(sql, request.principal, request.key);
    assertEquals(await claimKey(sql, { ...request, fingerprint: FP_B }), { kind: "claimed" });
  });

  await t.step("releasing does not remove a completed record", async () => {
    const request = claim();
    await claimKey(sql, request);
    await completeKey(sql, request.principal, request.key, {
      status: 201,
      headers: {},
      body: new TextEncoder().encode("{}"),
    });
    await releaseKey(sql, request.principal, request.key);
    assertEquals(kindOf(await claimKey(sql, request)), "completed");
  });

  await t.step("completing a key that is not claimed changes nothing", async () => {
    const request = claim();
    await completeKey(sql, request.principal, request.key, {
      status: 201,
      headers: {},
      body: new Uint8Array([1]),
    });
    assertEquals(await claimKey(sql, request), { kind: "claimed" });
    // And completing twice keeps the first response.
    await completeKey(sql, request.principal, request.key, {
      status: 201,
      headers: { "content-type": "text/plain" },
      body: new TextEncoder().encode("first"),
    });
    await completeKey(sql, request.principal, request.key, {
      status: 200,
      headers: {},
      body: new TextEncoder().encode("second"),
    });
    const outcome = await claimKey(sql, request);
    assert(outcome.kind === "completed");
    assertEquals(outcome.response.status, 201);
    assertEquals(new TextDecoder().decode(outcome.response.body), "first");
  });

  await t.step("keys are scoped to their principal", async () => {
    const request = claim({ principal: "key:alice" });
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    assertEquals(await claimKey(sql, { ...request, principal: "key:bob" }), { kind: "claimed" });
    assertEquals(
      await claimKey(sql, { ...request, principal: "key:carol", fingerprint: FP_B }),
      { kind: "claimed" },
    );
    await releaseKey(sql, "key:bob", request.key);
    assertEquals(await claimKey(sql, request), { kind: "in_flight" });
  });

  await t.step("a lapsed claim is taken over by the same request only", async () => {
    const request = claim({ lockMs: 50 });
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    assertEquals(kindOf(await claimKey(sql, request)), "in_flight");
    await sleep(150);
    assertEquals(await claimKey(sql, { ...request, fingerprint: FP_B }), { kind: "reused" });
    // The taker-over holds the key with its own (long) lock.
    assertEquals(await claimKey(sql, { ...request, lockMs: LONG }), { kind: "claimed" });
    await sleep(150);
    assertEquals(await claimKey(sql, request), { kind: "in_flight" });
  });

  await t.step("a lapsed claim of a completed request is still replayed", async () => {
    const request = claim({ lockMs: 50 });
    await claimKey(sql, request);
    await completeKey(sql, request.principal, request.key, {
      status: 201,
      headers: {},
      body: new TextEncoder().encode("done"),
    });
    await sleep(150);
    assertEquals(kindOf(await claimKey(sql, request)), "completed");
  });

  await t.step("an expired record is claimed afresh, even by a different request", async () => {
    const completed = claim({ retentionMs: 50 });
    await claimKey(sql, completed);
    await completeKey(sql, completed.principal, completed.key, {
      status: 201,
      headers: { "content-type": "application/json" },
      body: new TextEncoder().encode('{"old":true}'),
    });
    const inFlight = claim({ retentionMs: 50 });
    await claimKey(sql, inFlight);
    await sleep(150);
    const fresh = { ...completed, fingerprint: FP_B, retentionMs: LONG };
    assertEquals(await claimKey(sql, fresh), { kind: "claimed" });
    assertEquals(await claimKey(sql, { ...inFlight, fingerprint: FP_B }), { kind: "claimed" });
    // The fresh claim is a clean in-flight record with the new fingerprint and retention.
    const [row] = await sql<
      {
        state: string;
        fingerprint: Uint8Array;
        response_status: number | null;
        response_body: Uint8Array | null;
        response_headers: unknown;
        long_lived: boolean;
      }[]
    >`
      SELECT state, fingerprint, response_status, response_body, response_headers,
        expires_at > clock_timestamp() + interval '30 minutes' AS long_lived
      FROM idempotency_records WHERE principal = ${completed.principal} AND key = ${completed.key}`;
    assertEquals(row!.state, "in_flight");
    assertEquals([...new Uint8Array(row!.fingerprint)], [...FP_B]);
    assertEquals(
      [row!.response_status, row!.response_body, row!.response_headers],
      [null, null, null],
    );
    assertEquals(row!.long_lived, true);
    assertEquals(await claimKey(sql, { ...completed, retentionMs: LONG }), { kind: "reused" });
    assertEquals(await claimKey(sql, fresh), { kind: "in_flight" });
  });

  await t.step("purgeExpired deletes expired records only, in batches", async () => {
    await sql`DELETE FROM idempotency_records`;
    await sql`
      INSERT INTO idempotency_records (principal, key, fingerprint, state, locked_until, expires_at)
      SELECT 'key:purge', 'old-' || i, ${FP_A}, 'completed', clock_timestamp(),
        clock_timestamp() - interval '1 second'
      FROM generate_series(1, 1200) AS i`;
    const keep = [claim({ principal: "key:purge" }), claim({ principal: "key:purge" })];
    for (const request of keep) await claimKey(sql, request);
    await completeKey(sql, keep[0]!.principal, keep[0]!.key, {
      status: 201,
      headers: {},
      body: new Uint8Array([1]),
    });
    h.statements.length = 0;
    assertEquals(await purgeExpired(sql, 500), 1200);
    const deletes = h.statements.filter((s) => /^\s*DELETE FROM idempotency_records/.test(s));
    assertEquals(deletes.length, 3, "three batches: 500, 500, 200");
    const rows = await sql<{ key: string }[]>`
      SELECT key FROM idempotency_records ORDER BY key`;
    assertEquals(rows.map((r) => r.key), keep.map((r) => r.key).sort());
    assertEquals(kindOf(await claimKey(sql, keep[0]!)), "completed");
    assertEquals(kindOf(await claimKey(sql, keep[1]!)), "in_flight");
    assertEquals(await purgeExpired(sql, 500), 0);
  });

  await t.step("purgeExpired with an exact multiple of the batch size", async () => {
    await sql`
      INSERT INTO idempotency_records (principal, key, fingerprint, state, locked_until, expires_at)
      SELECT 'key:purge-exact', 'old-' || i, ${FP_A}, 'in_flight', clock_timestamp(),
        clock_timestamp() - interval '1 second'
      FROM generate_series(1, 20) AS i`;
    assertEquals(await purgeExpired(sql, 10), 20);
    const [{ count }] = await sql<[{ count: number }]>`
      SELECT count(*)::int AS count FROM idempotency_records WHERE principal = 'key:purge-exact'`;
    assertEquals(count, 0);
  });

  await t.step("purgeExpired skips a record another session holds, without waiting", async () => {
    await sql`
      INSERT INTO idempotency_records (principal, key, fingerprint, state, locked_until, expires_at)
      SELECT 'key:purge-locked', 'old-' || i, ${FP_A}, 'completed', clock_timestamp(),
        clock_timestamp() - interval '1 second'
      FROM generate_series(1, 5) AS i`;
    const other = h.replica();
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => locked = resolve);
    const transaction = other.begin(async (tx) => {
      await tx`
        SELECT 1 FROM idempotency_records
        WHERE principal = 'key:purge-locked' AND key = 'old-3' FOR UPDATE`;
      locked();
      await held;
    });
    try {
      await isLocked;
      const started = performance.now();
      assertEquals(await purgeExpired(sql, 500), 4);
      assert(performance.now() - started < 2000, "the purge did not wait for the lock");
    } finally {
      release();
      await transaction;
    }
    assertEquals(await purgeExpired(sql, 500), 1);
  });

  await t.step("20 concurrent claims of one key across two pools: exactly one wins", async () => {
    const pools = [sql, h.replica()];
    for (let round = 0; round < 5; round++) {
      const request = claim({ principal: "key:race" });
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => claimKey(pools[i % 2]!, request)),
      );
      const kinds = outcomes.map(kindOf);
      assertEquals(kinds.filter((k) => k === "claimed").length, 1, kinds.join(","));
      assertEquals(kinds.filter((k) => k === "in_flight").length, 19, kinds.join(","));
    }
  });

  await t.step(
    "concurrent claims of one key by different requests: one wins, none replays",
    async () => {
      const pools = [sql, h.replica()];
      const request = claim({ principal: "key:race-mixed" });
      const outcomes = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) => claimKey(pools[i % 2]!, { ...request, fingerprint: i % 4 === 0 ? FP_B : FP_A }),
        ),
      );
      const kinds = outcomes.map(kindOf);
      assertEquals(
        kinds.filter((k) => k === "claimed").length,
        1,
        kinds.join(","),
      );
      assert(kinds.every((k) => k !== "completed"), kinds.join(","));
      const winner = outcomes.findIndex((o) => o.kind === "claimed");
      const winnerFp = winner % 4 === 0 ? "B" : "A";
      outcomes.forEach((outcome, i) => {
        if (i === winner) return;
        const same = (i % 4 === 0 ? "B" : "A") === winnerFp;
        assertEquals(outcome.kind, same ? "in_flight" : "reused", `claim ${i}`);
      });
    },
  );

  await t.step("concurrent takeovers of a lapsed claim: exactly one wins", async () => {
    const pools = [sql, h.replica()];
    const request = claim({ principal: "key:race-lapsed", lockMs: 50 });
    assertEquals(kindOf(await claimKey(sql, request)), "claimed");
    await sleep(150);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => claimKey(pools[i % 2]!, { ...request, lockMs: LONG })),
    );
    const kinds = outcomes.map(kindOf);
    assertEquals(kinds.filter((k) => k === "claimed").length, 1, kinds.join(","));
    assertEquals(kinds.filter((k) => k === "in_flight").length, 19, kinds.join(","));
  });
});

/**
 * The middleware over the real store: what runs, what is kept, and what a retry gets. (Kept here
 * with the store because every case turns on what the records hold afterwards.)
 */
Deno.test("withIdempotency over the store", async (t) => {
  await using h = await harness();
  const { sql } = h;
  let n = 0;
  const options = (overrides: { key?: string; url?: string; method?: string; body?: string }) => {
    const method = overrides.method ?? "POST";
    const url = overrides.url ?? "http://gateway.test/v1/quotes";
    return {
      principal: "key:mw",
      key: overrides.key ?? `mw-${++n}`,
      request: new Request(url, { method }),
      body: overrides.body === undefined ? null : new TextEncoder().encode(overrides.body),
      lockMs: LONG,
    };
  };
  const counting = (make: () => Response | Promise<Response>) => {
    const execute = async () => {
      execute.calls++;
      return await make();
    };
    execute.calls = 0;
    return execute;
  };
  const apiErrorCode = async (promise: Promise<unknown>): Promise<string> => {
    try {
      await promise;
    } catch (error) {
      assert(error instanceof ApiError, String(error));
      return error.code;
    }
    throw new Error("expected an ApiError");
  };

  await t.step("idempotencyKeyOf: writes only, 1 to 200 characters", () => {
    const req = (method: string, key?: string) =>
      new Request("http://gateway.test/v1/quotes", {
        method,
        headers: key === undefined ? {} : { "idempotency-key": key },
      });
    assertEquals(idempotencyKeyOf(req("GET", "abc")), null);
    assertEquals(idempotencyKeyOf(req("HEAD", "")), null);
    assertEquals(idempotencyKeyOf(req("POST")), null);
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      assertEquals(idempotencyKeyOf(req(method, "abc")), "abc");
    }
    assertEquals(idempotencyKeyOf(req("POST", "k".repeat(200))), "k".repeat(200));
    for (const bad of ["", "k".repeat(201)]) {
      assert.throws(
        () => idempotencyKeyOf(req("POST", bad)),
        (error: unknown) => error instanceof ApiError && error.code === "validation_error",
      );
    }
  });

  await t.step("fingerprintOf tells method, path, query and body apart", async () => {
    const of = (method: string, url: string, body: string | null) =>
      fingerprintOf(
        new Request(`http://gateway.test${url}`, { method }),
        body === null ? null : new TextEncoder().encode(body),
      ).then((bytes) => [...bytes].join(","));
    const base = await of("POST", "/v1/quotes", "{}");
    assertEquals(await of("POST", "/v1/quotes", "{}"), base);
    const others = await Promise.all([
      of("PUT", "/v1/quotes", "{}"),
      of("POST", "/v1/quotes/x", "{}"),
      of("POST", "/v1/quotes?a=1", "{}"),
      of("POST", "/v1/quotes", "{ }"),
      of("POST", "/v1/quotes", null),
    ]);
    assertEquals(new Set([base, ...others]).size, 6);
    // The host is not part of it: two replicas behind different names agree.
    assertEquals(
      [...await fingerprintOf(new Request("http://a.test/v1/quotes", { method: "POST" }), null)],
      [...await fingerprintOf(new Request("http://b.test:81/v1/quotes", { method: "POST" }), null)],
    );
  });

  await t.step("a success runs once and is replayed with its body and headers", async () => {
    const request = options({ body: '{"reference":"x"}' });
    const execute = counting(() =>
      new Response('{"data":{"id":"q1"}}', {
        status: 201,
        headers: { "content-type": "application/json", location: "/v1/quotes/q1" },
      })
    );
    const first = await withIdempotency(sql, request, execute);
    assertEquals([first.status, await first.text()], [201, '{"data":{"id":"q1"}}']);
    assertEquals(first.headers.get("idempotency-replayed"), null);
    const second = await withIdempotency(sql, request, execute);
    assertEquals([second.status, await second.text()], [201, '{"data":{"id":"q1"}}']);
    assertEquals(second.headers.get("idempotency-replayed"), "true");
    assertEquals(second.headers.get("content-type"), "application/json");
    assertEquals(second.headers.get("location"), "/v1/quotes/q1");
    assertEquals(execute.calls, 1);
  });

  await t.step("an empty 204 is replayed as an empty 204", async () => {
    const request = options({ method: "DELETE", url: "http://gateway.test/v1/quotes/q1" });
    const execute = counting(() => new Response(null, { status: 204 }));
    await (await withIdempotency(sql, request, execute)).body?.cancel();
    const replay = await withIdempotency(sql, request, execute);
    assertEquals([replay.status, replay.body, replay.headers.get("idempotency-replayed")], [
      204,
      null,
      "true",
    ]);
    assertEquals(execute.calls, 1);
  });

  await t.step("a 4xx from the service is kept and replayed", async () => {
    const request = options({ body: '{"surprise":true}' });
    const execute = counting(() => Response.json({ error: "validation_error" }, { status: 400 }));
    assertEquals((await withIdempotency(sql, request, execute)).status, 400);
    const replay = await withIdempotency(sql, request, execute);
    assertEquals([replay.status, await replay.json()], [400, { error: "validation_error" }]);
    assertEquals(execute.calls, 1);
  });

  await t.step("a 5xx response is passed on and not kept: the retry runs again", async () => {
    const request = options({ body: "{}" });
    let status = 500;
    const execute = counting(() => Response.json({ n: execute.calls }, { status }));
    const failed = await withIdempotency(sql, request, execute);
    assertEquals([failed.status, failed.headers.get("idempotency-replayed")], [500, null]);
    await failed.body?.cancel();
    status = 503;
    const again = await withIdempotency(sql, request, execute);
    assertEquals(again.status, 503);
    await again.body?.cancel();
    status = 201;
    const ok = await withIdempotency(sql, request, execute);
    assertEquals([ok.status, await ok.json()], [201, { n: 3 }]);
    assertEquals(execute.calls, 3);
    const replay = await withIdempotency(sql, request, execute);
    assertEquals([replay.status, await replay.json()], [201, { n: 3 }]);
    assertEquals(execute.calls, 3);
  });

  await t.step("a thrown failure is passed on and not kept: the retry runs again", async () => {
    const request = options({ body: "{}" });
    let fail = true;
    const execute = counting(() => {
      if (fail) throw new ApiError("service_unavailable", "down");
      return Response.json({ ok: true }, { status: 201 });
    });
    assertEquals(await apiErrorCode(withIdempotency(sql, request, execute)), "service_unavailable");
    fail = false;
    const ok = await withIdempotency(sql, request, execute);
    assertEquals(ok.status, 201);
    await ok.body?.cancel();
    assertEquals(execute.calls, 2);
  });

  await t.step(
    "while the first runs, the same request is in flight, another is reused",
    async () => {
      const request = options({ body: '{"a":1}' });
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => finish = resolve);
      let started!: () => void;
      const running = new Promise<void>((resolve) => started = resolve);
      const execute = counting(async () => {
        started();
        await gate;
        return Response.json({ done: true }, { status: 201 });
      });
      const first = withIdempotency(sql, request, execute);
      await running;
      try {
        assertEquals(
          await apiErrorCode(withIdempotency(sql, request, execute)),
          "idempotency_request_in_flight",
        );
        try {
          await withIdempotency(sql, request, execute);
          assert.fail("expected a 409");
        } catch (error) {
          assert(error instanceof ApiError);
          assertEquals(error.headers, { "Retry-After": "1" });
        }
        assertEquals(
          await apiErrorCode(
            withIdempotency(
              sql,
              { ...request, body: new TextEncoder().encode('{"a":2}') },
              execute,
            ),
          ),
          "idempotency_key_reused",
        );
      } finally {
        finish();
      }
      assertEquals((await first).status, 201);
      await (await first).body?.cancel();
      assertEquals(execute.calls, 1);
    },
  );

  await t.step(
    "a response whose body fails to arrive is not kept either: the retry runs again",
    async () => {
      // The service answered 201 and then its body broke off (it crashed, or the proxy timeout
      // fired while the body was still streaming). The client gets an error, so, as after a
      // thrown failure or a 5xx, the key must be given back for the retry.
      const request = options({ body: "{}" });
      let broken = true;
      const execute = counting(() => {
        if (!broken) return Response.json({ ok: true }, { status: 201 });
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"data":'));
            controller.error(new TypeError("connection reset"));
          },
        });
        return new Response(body, {
          status: 201,
          headers: { "content-type": "application/json" },
        });
      });
      await assert.rejects(withIdempotency(sql, request, execute));
      broken = false;
      let retry: Response | undefined;
      try {
        retry = await withIdempotency(sql, request, execute);
      } catch (error) {
        assert.fail(
          `the retry after a broken response got ${
            error instanceof ApiError ? `409 ${error.code}` : String(error)
          } instead of running again (the claim was left in flight for lockMs)`,
        );
      }
      assertEquals(retry.status, 201);
      await retry.body?.cancel();
      assertEquals(execute.calls, 2);
    },
  );
});

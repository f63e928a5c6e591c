/**
 * Idempotency-Key and rate limiting through real gateway processes: replays, conflicts,
 * concurrency on one gateway and across two replicas sharing the database, failures that must
 * not be stored, and the shared token bucket.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  type Envelope,
  startTestStack,
  type Tenant,
  type TestStack,
} from "@printshop/shared/testing";

/** A response read to the end: status, headers and the exact body text. */
interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json<T = Record<string, unknown>>(): Envelope<T>;
}

async function read(res: Response): Promise<Reply> {
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: <T>() => JSON.parse(text) as Envelope<T>,
  };
}

/** Sends a request to a given gateway (primary or replica) and reads the whole answer. */
async function send(
  gatewayUrl: string,
  apiKey: string,
  method: string,
  path: string,
  options: { body?: unknown; idempotencyKey?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers = new Headers(options.headers);
  headers.set("x-api-key", apiKey);
  if (options.idempotencyKey !== undefined) headers.set("idempotency-key", options.idempotencyKey);
  let body: string | undefined;
  if (options.body !== undefined) {
    headers.set("content-type", "application/json");
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  return await read(await fetch(`${gatewayUrl}${path}`, { method, headers, body }));
}

function expectError(reply: Reply, status: number, code: string): Envelope {
  const envelope = reply.json();
  assertEquals(
    [reply.status, envelope.error, envelope.status],
    [status, code, false],
    `expected ${status} ${code}, got ${reply.status} ${reply.text}`,
  );
  assert(typeof envelope.message === "string" && envelope.message.length > 0);
  return envelope;
}

async function quoteCount(stack: TestStack, tenant: Tenant): Promise<number> {
  const reply = await send(stack.gatewayUrl, tenant.apiKey, "GET", "/v1/quotes?limit=200");
  assertEquals(reply.status, 200, reply.text);
  return reply.json<{ totalCount: number }>().data.totalCount;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isReplay = (reply: Reply) => reply.headers.get("idempotency-replayed") === "true";

Deno.test("Idempotency-Key through the gateway", async (t) => {
  await using stack: TestStack = await startTestStack();
  const gateway = stack.gatewayUrl;

  await t.step("a repeated keyed POST is replayed, not executed again", async () => {
    const shop = await stack.tenant();
    const request = { body: { reference: "PO-IDEM-1" }, idempotencyKey: "k1" };
    const first = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
    assertEquals(first.status, 201, first.text);
    assertEquals(first.headers.get("idempotency-replayed"), null);
    const second = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
    assertEquals(second.status, 201, second.text);
    assertEquals(second.headers.get("idempotency-replayed"), "true");
    assertEquals(second.text, first.text, "the replay is the very same body");
    assertEquals(second.json().data.id, first.json().data.id);
    assertEquals(second.headers.get("content-type"), first.headers.get("content-type"));
    // A replay still reports the rate limit, like every response.
    assert(second.headers.get("ratelimit-policy"));
    assert(second.headers.get("ratelimit"));
    const third = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
    assertEquals([third.status, isReplay(third), third.text], [201, true, first.text]);
    assertEquals(await quoteCount(stack, shop), 1);
  });

  await t.step("the same key for a different request is 409 idempotency_key_reused", async () => {
    const shop = await stack.tenant();
    const created = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-A" },
      idempotencyKey: "reuse-me",
    });
    assertEquals(created.status, 201, created.text);
    const quoteId = created.json().data.id as string;
    // A different body.
    expectError(
      await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
        body: { reference: "PO-B" },
        idempotencyKey: "reuse-me",
      }),
      409,
      "idempotency_key_reused",
    );
    // The same body and path, but a different query string.
    expectError(
      await send(gateway, shop.apiKey, "POST", "/v1/quotes?x=1", {
        body: { reference: "PO-A" },
        idempotencyKey: "reuse-me",
      }),
      409,
      "idempotency_key_reused",
    );
    // The same body to a different endpoint.
    expectError(
      await send(gateway, shop.apiKey, "POST", `/v1/quotes/${quoteId}/groups`, {
        body: { reference: "PO-A" },
        idempotencyKey: "reuse-me",
      }),
      409,
      "idempotency_key_reused",
    );
    // None of those ran, and the original is still replayed.
    assertEquals(await quoteCount(stack, shop), 1);
    const replay = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-A" },
      idempotencyKey: "reuse-me",
    });
    assertEquals([replay.status, isReplay(replay), replay.text], [201, true, created.text]);
  });

  await t.step("keys are scoped to the credential, not to the organisation", async () => {
    const shop = await stack.tenant();
    const second = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${shop.organizationId}/api-keys`,
      { scopes: ["quotes.read", "quotes.write"] },
    );
    const request = { body: { reference: "PO-SHARED" }, idempotencyKey: "same-key" };
    const a = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
    const b = await send(gateway, second.data.apiKey, "POST", "/v1/quotes", request);
    assertEquals([a.status, b.status], [201, 201], `${a.text} ${b.text}`);
    assertEquals([isReplay(a), isReplay(b)], [false, false]);
    assert(a.json().data.id !== b.json().data.id, "two quotes were created");
    assertEquals(await quoteCount(stack, shop), 2);
    // Another organisation's key with the same Idempotency-Key is independent as well.
    const other = await stack.tenant();
    const c = await send(gateway, other.apiKey, "POST", "/v1/quotes", request);
    assertEquals([c.status, isReplay(c)], [201, false]);
    assertEquals(await quoteCount(stack, other), 1);
  });

  await t.step("Idempotency-Key must be 1 to 200 characters", async () => {
    const shop = await stack.tenant();
    for (const key of ["", "k".repeat(201), "k".repeat(1000)]) {
      const envelope = expectError(
        await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
          body: { reference: "PO-LEN" },
          idempotencyKey: key,
        }),
        400,
        "validation_error",
      );
      assertEquals(envelope.details?.[0]?.path, "Idempotency-Key");
    }
    assertEquals(await quoteCount(stack, shop), 0, "a refused key runs nothing");
    const longest = "k".repeat(200);
    const ok = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-LEN" },
      idempotencyKey: longest,
    });
    assertEquals([ok.status, isReplay(ok)], [201, false], ok.text);
    const again = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-LEN" },
      idempotencyKey: longest,
    });
    assertEquals([again.status, isReplay(again), again.text], [201, true, ok.text]);
    const one = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-LEN-1" },
      idempotencyKey: "x",
    });
    assertEquals(one.status, 201, one.text);
    assertEquals(await quoteCount(stack, shop), 2);
  });

  await t.step("GET requests ignore Idempotency-Key", async () => {
    const shop = await stack.tenant();
    // Even a value a write would refuse.
    for (const key of ["", "k".repeat(201), "read-key"]) {
      const reply = await send(gateway, shop.apiKey, "GET", "/v1/quotes", { idempotencyKey: key });
      assertEquals(reply.status, 200, reply.text);
      assertEquals(reply.headers.get("idempotency-replayed"), null);
    }
    // Nothing was stored under the key: a GET after a change sees the change, and a POST with
    // the same key runs.
    const created = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-AFTER-GET" },
      idempotencyKey: "read-key",
    });
    assertEquals([created.status, isReplay(created)], [201, false], created.text);
    const list = await send(gateway, shop.apiKey, "GET", "/v1/quotes", {
      idempotencyKey: "read-key",
    });
    assertEquals([list.status, isReplay(list)], [200, false]);
    assertEquals(list.json<{ totalCount: number }>().data.totalCount, 1);
  });

  await t.step("of concurrent identical keyed requests, exactly one executes", async () => {
    const shop = await stack.tenant();
    const request = { body: { reference: "PO-RACE" }, idempotencyKey: "race-1" };
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => send(gateway, shop.apiKey, "POST", "/v1/quotes", request)),
    );
    const originals = replies.filter((r) => r.status === 201 && !isReplay(r));
    const replays = replies.filter((r) => r.status === 201 && isReplay(r));
    const inFlight = replies.filter((r) => r.status === 409);
    assertEquals(
      originals.length + replays.length + inFlight.length,
      12,
      replies.map((r) => `${r.status} ${r.text}`).join("\n"),
    );
    assertEquals(originals.length, 1, "exactly one request executed");
    for (const replay of replays) assertEquals(replay.text, originals[0]!.text);
    for (const busy of inFlight) {
      expectError(busy, 409, "idempotency_request_in_flight");
      assertEquals(busy.headers.get("retry-after"), "1");
    }
    assertEquals(await quoteCount(stack, shop), 1);
    // Once done, every retry is a replay.
    const later = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
    assertEquals([later.status, isReplay(later), later.text], [201, true, originals[0]!.text]);
  });

  await t.step("two gateway replicas share the records", async () => {
    const replica = await stack.startGatewayReplica();
    const shop = await stack.tenant();
    const gateways = [gateway, replica.gatewayUrl];

    const request = { body: { reference: "PO-TWO-GATEWAYS" }, idempotencyKey: "across" };
    const replies = await Promise.all(
      Array.from(
        { length: 12 },
        (_, i) => send(gateways[i % 2]!, shop.apiKey, "POST", "/v1/quotes", request),
      ),
    );
    const originals = replies.filter((r) => r.status === 201 && !isReplay(r));
    assertEquals(originals.length, 1, replies.map((r) => `${r.status} ${r.text}`).join("\n"));
    for (const reply of replies) {
      if (reply.status === 201) assertEquals(reply.text, originals[0]!.text);
      else expectError(reply, 409, "idempotency_request_in_flight");
    }
    assertEquals(await quoteCount(stack, shop), 1);

    const done = { body: { reference: "PO-PRIMARY" }, idempotencyKey: "done-on-primary" };
    const first = await send(gateway, shop.apiKey, "POST", "/v1/quotes", done);
    assertEquals([first.status, isReplay(first)], [201, false], first.text);
    const onReplica = await send(replica.gatewayUrl, shop.apiKey, "POST", "/v1/quotes", done);
    assertEquals(
      [onReplica.status, onReplica.headers.get("idempotency-replayed"), onReplica.text],
      [201, "true", first.text],
    );
    expectError(
      await send(replica.gatewayUrl, shop.apiKey, "POST", "/v1/quotes", {
        ...done,
        body: { reference: "PO-OTHER" },
      }),
      409,
      "idempotency_key_reused",
    );
    assertEquals(await quoteCount(stack, shop), 2);
  });

  await t.step(
    "a 5xx is not stored: the same key runs again once the service is back",
    async () => {
      const shop = await stack.tenant();
      const request = { body: { reference: "PO-OUTAGE" }, idempotencyKey: "during-outage" };
      await stack.kill("quotes");
      try {
        const down = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
        expectError(down, 503, "service_unavailable");
        assertEquals(down.headers.get("idempotency-replayed"), null);
        assertEquals(down.headers.get("ratelimit-policy"), '"default";q=600;w=60');
        // Still down: the retry runs again (and fails again) rather than replaying or 409.
        const stillDown = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
        expectError(stillDown, 503, "service_unavailable");
        assertEquals(stillDown.headers.get("idempotency-replayed"), null);
      } finally {
        await stack.restart("quotes");
      }
      const retried = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
      assertEquals([retried.status, isReplay(retried)], [201, false], retried.text);
      const quoteId = retried.json().data.id as string;
      const fetched = await send(gateway, shop.apiKey, "GET", `/v1/quotes/${quoteId}`);
      assertEquals(fetched.status, 200, fetched.text);
      assertEquals(fetched.json().data.reference, "PO-OUTAGE");
      assertEquals(await quoteCount(stack, shop), 1);
      const replay = await send(gateway, shop.apiKey, "POST", "/v1/quotes", request);
      assertEquals([replay.status, isReplay(replay), replay.text], [201, true, retried.text]);
    },
  );
});

const RATE_LIMIT_FIELD = /^"default";r=(\d+);t=(\d+)$/;

Deno.test("rate limits through the gateway", async (t) => {
  await using stack: TestStack = await startTestStack();
  const gateway = stack.gatewayUrl;

  await t.step("a 60/min organisation: headers on every response, then 429", async (step) => {
    const shop = await stack.tenant();
    await stack.admin("PUT", `/admin/organizations/${shop.organizationId}/limits`, {
      requestsPerMinute: 60,
    });
    let admitted = 0;
    const started = performance.now();
    const check = (reply: Reply, what: string): void => {
      assertEquals(reply.headers.get("ratelimit-policy"), '"default";q=60;w=60', what);
      const field = reply.headers.get("ratelimit") ?? "";
      const match = field.match(RATE_LIMIT_FIELD);
      assert(match, `${what}: RateLimit is ${JSON.stringify(field)}`);
      assert(Number(match[1]) <= 60 && Number(match[2]) <= 60, `${what}: ${field}`);
      if (reply.status !== 429) admitted++;
    };

    const limits = await send(gateway, shop.apiKey, "GET", "/v1/reference/limits");
    assertEquals(limits.status, 200, limits.text);
    check(limits, "GET /v1/reference/limits");
    assertEquals(
      limits.json<{ rateLimit: { requestsPerMinute: number } }>().data.rateLimit.requestsPerMinute,
      60,
    );
    // The first request of a fresh bucket leaves 59.
    assertEquals(limits.headers.get("ratelimit"), '"default";r=59;t=1');

    const listed = await send(gateway, shop.apiKey, "GET", "/v1/quotes");
    assertEquals(listed.status, 200);
    check(listed, "200 from a service");
    const created = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-RL" },
      idempotencyKey: "rl-1",
    });
    assertEquals(created.status, 201, created.text);
    check(created, "201");
    const replayed = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-RL" },
      idempotencyKey: "rl-1",
    });
    assert(isReplay(replayed));
    check(replayed, "replayed 201");
    const reused = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-RL-2" },
      idempotencyKey: "rl-1",
    });
    expectError(reused, 409, "idempotency_key_reused");
    check(reused, "409");
    const missing = await send(gateway, shop.apiKey, "GET", "/v1/nothing-here");
    expectError(missing, 404, "route_not_found");
    check(missing, "404 route_not_found");
    const notFound = await send(
      gateway,
      shop.apiKey,
      "GET",
      "/v1/quotes/0190b1c2-3d4e-7f00-8a00-00000000dead",
    );
    expectError(notFound, 404, "not_found");
    check(notFound, "404 from a service");
    const badJson = await send(gateway, shop.apiKey, "POST", "/v1/quotes", { body: "{oops" });
    expectError(badJson, 400, "invalid_json");
    check(badJson, "400 invalid_json");
    const invalid = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { surprise: true },
    });
    expectError(invalid, 400, "validation_error");
    check(invalid, "400 from a service");
    const badKey = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
      body: { reference: "x" },
      idempotencyKey: "",
    });
    expectError(badKey, 400, "validation_error");
    check(badKey, "400 Idempotency-Key");
    const foreign = await send(gateway, shop.apiKey, "GET", "/v1/me", {
      headers: { "x-service-organization-id": crypto.randomUUID() },
    });
    // Refused before a token is taken: the organisation header is part of authentication.
    expectError(foreign, 403, "organization_not_allowed");

    let limited: Reply | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const reply = await send(gateway, shop.apiKey, "GET", "/v1/me");
      check(reply, `request ${i}`);
      if (reply.status === 429) limited = reply;
      else assertEquals(reply.status, 200, reply.text);
    }
    assert(limited, "a 429 came within 200 requests");
    expectError(limited, 429, "rate_limited");
    // 60 from the full bucket, plus one a second while the requests ran: under a second here,
    // so fewer than 62 (the allowance only grows if the machine is slow).
    const elapsedSeconds = (performance.now() - started) / 1000;
    assert(
      admitted < Math.max(62, 61 + Math.ceil(elapsedSeconds)),
      `${admitted} requests were admitted under 60/min in ${elapsedSeconds.toFixed(2)} s`,
    );
    assert(admitted >= 60, `only ${admitted} requests were admitted under 60/min`);
    const retryAfter = limited.headers.get("retry-after") ?? "";
    assert(/^\d+$/.test(retryAfter), `Retry-After is an integer: ${JSON.stringify(retryAfter)}`);
    assertEquals(Number(retryAfter), 1, "at 60/min a token is back within a second");
    assert(limited.headers.get("ratelimit")?.startsWith('"default";r=0;'));

    await step.step("a keyed POST refused with 429 is not stored", async () => {
      // Right after the 429 the bucket is still (almost surely) empty; should a token have come
      // back in between, try again with a new key until one is refused.
      let refused: { key: string; body: unknown; reply: Reply } | undefined;
      for (let attempt = 0; attempt < 5 && !refused; attempt++) {
        const key = `rl-limited-${attempt}`;
        const body = { reference: `PO-LIMITED-${attempt}` };
        const reply = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
          body,
          idempotencyKey: key,
        });
        if (reply.status === 429) refused = { key, body, reply };
      }
      assert(refused, "a keyed POST was refused while the bucket was empty");
      expectError(refused.reply, 429, "rate_limited");
      const wait = Number(refused.reply.headers.get("retry-after"));
      assert(Number.isInteger(wait) && wait >= 0);
      await sleep(wait * 1000);
      const retried = await send(gateway, shop.apiKey, "POST", "/v1/quotes", {
        body: refused.body,
        idempotencyKey: refused.key,
      });
      assertEquals(
        [retried.status, retried.headers.get("idempotency-replayed")],
        [201, null],
        `after Retry-After the same request runs: ${retried.text}`,
      );
      assertEquals(
        retried.json().data.reference,
        (refused.body as { reference: string }).reference,
      );
    });

    await step.step("GET /v1/reference/limits reports the organisation's limit", async () => {
      await sleep(1100);
      const reply = await send(gateway, shop.apiKey, "GET", "/v1/reference/limits");
      assertEquals(reply.status, 200, reply.text);
      const data = reply.json<{ rateLimit: { requestsPerMinute: number; burst: number } }>().data;
      assertEquals(data.rateLimit, { requestsPerMinute: 60, burst: 60 });
    });
  });

  await t.step("another organisation keeps its own bucket and the default policy", async () => {
    const other = await stack.tenant();
    const reply = await send(gateway, other.apiKey, "GET", "/v1/me");
    assertEquals(reply.status, 200);
    assertEquals(reply.headers.get("ratelimit-policy"), '"default";q=600;w=60');
    assertEquals(reply.headers.get("ratelimit"), '"default";r=599;t=1');
  });

  await t.step("a second key of the same organisation has a bucket of its own", async () => {
    const shop = await stack.tenant();
    await stack.admin("PUT", `/admin/organizations/${shop.organizationId}/limits`, {
      requestsPerMinute: 5,
    });
    const second = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${shop.organizationId}/api-keys`,
      { scopes: ["quotes.read"] },
    );
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await send(gateway, shop.apiKey, "GET", "/v1/me")).status);
    }
    assertEquals(statuses, [200, 200, 200, 200, 200, 429]);
    const other = await send(gateway, second.data.apiKey, "GET", "/v1/me");
    assertEquals(other.status, 200);
    assertEquals(other.headers.get("ratelimit"), '"default";r=4;t=12');
    const forbidden = await send(gateway, second.data.apiKey, "POST", "/v1/quotes", {
      body: { reference: "PO-NO-SCOPE" },
    });
    expectError(forbidden, 403, "insufficient_scope");
    assertEquals(forbidden.headers.get("ratelimit-policy"), '"default";q=5;w=60');
    assert(forbidden.headers.get("ratelimit")?.startsWith('"default";r=3;'));
  });

  await t.step("two gateway replicas share one bucket", async () => {
    const replica = await stack.startGatewayReplica();
    const shop = await stack.tenant();
    await stack.admin("PUT", `/admin/organizations/${shop.organizationId}/limits`, {
      requestsPerMinute: 30,
    });
    const gateways = [gateway, replica.gatewayUrl];
    const replies: { gateway: number; reply: Reply }[] = [];
    const started = performance.now();
    for (let batch = 0; batch < 5; batch++) {
      replies.push(
        ...await Promise.all(Array.from({ length: 8 }, async (_, i) => {
          const which = (batch * 8 + i) % 2;
          return {
            gateway: which,
            reply: await send(gateways[which]!, shop.apiKey, "GET", "/v1/me"),
          };
        })),
      );
    }
    const elapsedSeconds = (performance.now() - started) / 1000;
    for (const { reply } of replies) {
      assert(reply.status === 200 || reply.status === 429, reply.text);
      assertEquals(reply.headers.get("ratelimit-policy"), '"default";q=30;w=60');
    }
    const admitted = replies.filter((r) => r.reply.status === 200).length;
    const allowance = 30 + Math.ceil(elapsedSeconds * 0.5);
    assert(
      admitted >= 30 && admitted <= allowance,
      `admitted ${admitted} of 40 in ${elapsedSeconds.toFixed(2)} s (at most ${allowance})`,
    );
    // Each gateway saw only 20 requests, fewer than the limit: a gateway refusing any means it
    // counted the other's requests too.
    for (const which of [0, 1]) {
      assert(
        replies.some((r) => r.gateway === which && r.reply.status === 429),
        `gateway ${which} refused none of its 20 requests`,
      );
    }

    // A large limit, where each replica leases several tokens per round trip: the sum of what
    // both admit still stays within the bucket.
    const busy = await stack.tenant();
    await stack.admin("PUT", `/admin/organizations/${busy.organizationId}/limits`, {
      requestsPerMinute: 300,
    });
    const busyStarted = performance.now();
    let busyAdmitted = 0;
    for (let batch = 0; batch < 40; batch++) {
      const statuses = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
        const reply = await send(gateways[i % 2]!, busy.apiKey, "GET", "/v1/me");
        return reply.status;
      }));
      busyAdmitted += statuses.filter((status) => status === 200).length;
    }
    const busySeconds = (performance.now() - busyStarted) / 1000;
    const busyAllowance = 300 + Math.ceil(busySeconds * 5);
    assert(
      busyAdmitted >= 300 && busyAdmitted <= busyAllowance,
      `admitted ${busyAdmitted} of 400 in ${busySeconds.toFixed(2)} s (at most ${busyAllowance})`,
    );
  });
});

import assert from "node:assert/strict";
import {
  type AttemptOutcome,
  keptSender,
  type KeptSenderOptions,
  sendWebhook,
  USER_AGENT,
  type WebhookRequest,
} from "./sender.ts";

interface Received {
  method: string;
  path: string;
  headers: Headers;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
}

/** A real HTTP endpoint on 127.0.0.1 for the length of `run`, recording every request. */
async function withReceiver(
  respond: (request: Request) => Response | Promise<Response>,
  run: (receiver: Receiver) => Promise<void>,
): Promise<void> {
  const received: Received[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      received.push({
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers: request.headers,
        body: await request.text(),
      });
      return respond(request);
    },
  );
  try {
    const port = server.addr.port;
    await run({ url: `http://127.0.0.1:${port}`, port, received });
  } finally {
    await server.shutdown();
  }
}

const BODY = JSON.stringify({ type: "quote.sent", data: { quoteId: "q_1", note: "Café ✓" } });

function attempt(url: string, overrides: Partial<WebhookRequest> = {}): Promise<AttemptOutcome> {
  return sendWebhook({
    url,
    headers: { "webhook-id": "msg_1" },
    body: BODY,
    timeoutMs: 2_000,
    allowPrivateTargets: true,
    ...overrides,
  });
}

/** A port nothing listens on: bound by the system, then released. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

Deno.test("sendWebhook() counts any 2xx as success, with its status and duration", async (t) => {
  for (const status of [200, 201, 202, 204]) {
    await t.step(`HTTP ${status}`, async () => {
      await withReceiver(
        () => new Response(status === 204 ? null : "ok", { status }),
        async ({ url, received }) => {
          const outcome = await attempt(`${url}/hooks`);
          assert.equal(outcome.succeeded, true);
          assert.equal(outcome.httpStatus, status);
          assert.equal(outcome.failureReason, null);
          assert.ok(Number.isInteger(outcome.durationMs));
          assert.ok(outcome.durationMs >= 0 && outcome.durationMs < 2_000, `${outcome.durationMs}`);
          assert.equal(received.length, 1);
        },
      );
    });
  }
});

Deno.test("sendWebhook() sends the exact body and headers", async () => {
  await withReceiver(() => new Response(null, { status: 204 }), async ({ url, received }) => {
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": "1772360430",
      "Webhook-Signature": "v1,abc= v1,def=",
      // The sender owns these; a caller's values are ignored.
      "Content-Type": "text/plain",
      "content-length": "1",
      "host": "evil.test",
      "user-agent": "curl/8",
    };
    const outcome = await attempt(`${url}/hooks/in?tenant=7`, { headers });
    assert.equal(outcome.succeeded, true);
    assert.equal(received.length, 1);
    const [request] = received;
    assert.ok(request !== undefined);
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/hooks/in?tenant=7");
    assert.equal(request.body, BODY);
    assert.equal(request.headers.get("content-type"), "application/json");
    assert.equal(
      request.headers.get("content-length"),
      String(new TextEncoder().encode(BODY).length),
    );
    assert.equal(request.headers.get("user-agent"), USER_AGENT);
    assert.equal(request.headers.get("host"), new URL(url).host);
    assert.equal(request.headers.get("webhook-id"), "msg_1");
    assert.equal(request.headers.get("webhook-timestamp"), "1772360430");
    assert.equal(request.headers.get("webhook-signature"), "v1,abc= v1,def=");
  });
});

Deno.test("sendWebhook() reports a non-2xx status as a failure from the endpoint", async (t) => {
  for (const status of [400, 404, 410, 500, 503]) {
    await t.step(`HTTP ${status}`, async () => {
      await withReceiver(
        () => new Response("internal details", { status }),
        async ({ url }) => {
          const outcome = await attempt(url);
          assert.deepEqual({ ...outcome, durationMs: 0 }, {
            succeeded: false,
            httpStatus: status,
            durationMs: 0,
            failureReason: `HTTP ${status} from endpoint`,
          });
        },
      );
    });
  }
});

Deno.test("sendWebhook() never follows a redirect", async (t) => {
  await t.step("301 with a Location: the target is never requested", async () => {
    await withReceiver(
      (request) =>
        new URL(request.url).pathname === "/moved"
          ? Response.redirect(new URL("/elsewhere", request.url), 301)
          : new Response("ok"),
      async ({ url, received }) => {
        const outcome = await attempt(`${url}/moved`);
        assert.equal(outcome.succeeded, false);
        assert.equal(outcome.httpStatus, 301);
        assert.equal(
          outcome.failureReason,
          `redirect not followed (HTTP 301 to ${url}/elsewhere)`,
        );
        assert.deepEqual(received.map((r) => r.path), ["/moved"]);
      },
    );
  });
  await t.step("307 without a Location", async () => {
    await withReceiver(() => new Response(null, { status: 307 }), async ({ url }) => {
      const outcome = await attempt(url);
      assert.equal(outcome.httpStatus, 307);
      assert.equal(outcome.failureReason, "redirect not followed (HTTP 307 to no location)");
    });
  });
  await t.step("a Location with non-ASCII characters is made printable", async () => {
    await withReceiver(
      () => new Response(null, { status: 302, headers: { location: "/a\u00e9b" } }),
      async ({ url }) => {
        const outcome = await attempt(url);
        assert.match(
          outcome.failureReason ?? "",
          /^redirect not followed \(HTTP 302 to \/a\?+b\)$/,
        );
      },
    );
  });
});

Deno.test("sendWebhook() gives up after timeoutMs when the endpoint never answers", async () => {
  let release = (): void => {};
  const released = new Promise<void>((resolve) => release = resolve);
  await withReceiver(async () => {
    await released;
    return new Response("too late");
  }, async ({ url, received }) => {
    const started = performance.now();
    const outcome = await attempt(url, { timeoutMs: 200 });
    const wall = performance.now() - started;
    release();
    assert.deepEqual({ ...outcome, durationMs: 0 }, {
      succeeded: false,
      httpStatus: null,
      durationMs: 0,
      failureReason: "timed out after 200 ms",
    });
    assert.ok(outcome.durationMs >= 195 && outcome.durationMs < 600, `${outcome.durationMs}`);
    assert.ok(wall < 1_000, `${wall}`);
    assert.equal(received.length, 1);
  });
});

Deno.test("sendWebhook() judges by the status when a 2xx body never ends", async () => {
  let stop = (): void => {};
  await withReceiver(() => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("partial"));
        stop = () => controller.close();
      },
    });
    return new Response(body, { status: 200 });
  }, async ({ url }) => {
    const outcome = await attempt(url, { timeoutMs: 300 });
    stop();
    assert.equal(outcome.succeeded, true);
    assert.equal(outcome.httpStatus, 200);
    assert.ok(outcome.durationMs >= 295, `${outcome.durationMs}`);
  });
});

Deno.test("sendWebhook() never returns the response body", async (t) => {
  const marker = "RESPONSE-BODY-MARKER";
  await t.step("of a success", async () => {
    await withReceiver(() => new Response(marker), async ({ url }) => {
      const outcome = await attempt(url);
      assert.deepEqual(Object.keys(outcome).sort(), [
        "durationMs",
        "failureReason",
        "httpStatus",
        "succeeded",
      ]);
      assert.ok(!JSON.stringify(outcome).includes(marker));
    });
  });
  await t.step("of a failure", async () => {
    await withReceiver(() => new Response(marker, { status: 500 }), async ({ url }) => {
      const outcome = await attempt(url);
      assert.equal(outcome.failureReason, "HTTP 500 from endpoint");
      assert.ok(!JSON.stringify(outcome).includes(marker));
    });
  });
  await t.step("of a large body, which is cut off rather than read whole", async () => {
    const chunk = new TextEncoder().encode(marker.repeat(1_000));
    let sent = 0;
    await withReceiver(() => {
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // Far more than the sender reads: 100 MB if it were all pulled.
          if (sent >= 5_000) return controller.close();
          sent += 1;
          controller.enqueue(chunk);
        },
      });
      return new Response(body, { status: 200 });
    }, async ({ url }) => {
      const outcome = await attempt(url);
      assert.equal(outcome.succeeded, true);
      assert.ok(!JSON.stringify(outcome).includes(marker));
      assert.ok(sent < 5_000, `${sent} chunks were pulled`);
    });
  });
});

Deno.test("sendWebhook() reports a closed port as connection refused", async () => {
  const outcome = await attempt(`http://127.0.0.1:${closedPort()}/hooks`);
  assert.deepEqual({ ...outcome, durationMs: 0 }, {
    succeeded: false,
    httpStatus: null,
    durationMs: 0,
    failureReason: "connection refused",
  });
});

Deno.test("sendWebhook() reports a name that does not resolve", async () => {
  const outcome = await attempt("http://nonexistent.invalid/hooks");
  assert.equal(outcome.succeeded, false);
  assert.equal(outcome.httpStatus, null);
  assert.equal(outcome.failureReason, 'DNS lookup failed for "nonexistent.invalid"');
});

Deno.test("sendWebhook() reports https to a plain-HTTP listener as a TLS error", async () => {
  await withReceiver(() => new Response("ok"), async ({ port, received }) => {
    const outcome = await attempt(`https://127.0.0.1:${port}/hooks`);
    assert.equal(outcome.succeeded, false);
    assert.equal(outcome.httpStatus, null);
    assert.match(outcome.failureReason ?? "", /^TLS error: \S/);
    assert.equal(received.length, 0);
  });
});

Deno.test("sendWebhook() reports a connection closed without an answer as reset", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const connection of listener) {
      const buffer = new Uint8Array(1024);
      await connection.read(buffer);
      connection.close();
    }
  })();
  try {
    const outcome = await attempt(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`);
    assert.equal(outcome.succeeded, false);
    assert.equal(outcome.httpStatus, null);
    assert.equal(outcome.failureReason, "connection reset");
  } finally {
    listener.close();
    await accepting;
  }
});

Deno.test("sendWebhook() refuses forbidden targets unless private targets are allowed", async (t) => {
  await t.step("an IP literal: refused before any connection", async () => {
    await withReceiver(() => new Response("ok"), async ({ port, received }) => {
      const outcome = await attempt(`http://127.0.0.1:${port}/hooks`, {
        allowPrivateTargets: false,
      });
      assert.deepEqual({ ...outcome, durationMs: 0 }, {
        succeeded: false,
        httpStatus: null,
        durationMs: 0,
        failureReason: "refused: loopback address 127.0.0.1",
      });
      assert.equal(received.length, 0);
    });
  });
  await t.step("an IPv4-mapped IPv6 literal", async () => {
    const outcome = await attempt("http://[::ffff:127.0.0.1]:9/", { allowPrivateTargets: false });
    assert.equal(outcome.failureReason, "refused: IPv4-mapped private address ::ffff:7f00:1");
  });
  await t.step("the metadata address", async () => {
    const outcome = await attempt("http://169.254.169.254/latest/meta-data/", {
      allowPrivateTargets: false,
    });
    assert.equal(outcome.failureReason, "refused: metadata address 169.254.169.254");
  });
  await t.step("a name: refused by the lookup the request connects through", async () => {
    await withReceiver(() => new Response("ok"), async ({ port, received }) => {
      const outcome = await attempt(`http://localhost:${port}/hooks`, {
        allowPrivateTargets: false,
      });
      assert.equal(outcome.succeeded, false);
      assert.equal(outcome.httpStatus, null);
      assert.match(outcome.failureReason ?? "", /^refused: loopback address (127\.0\.0\.1|::1)$/);
      assert.equal(received.length, 0);
    });
  });
  await t.step("the same name is reached when private targets are allowed", async () => {
    await withReceiver(() => new Response("ok"), async ({ port, received }) => {
      const outcome = await attempt(`http://localhost:${port}/hooks`);
      assert.equal(outcome.succeeded, true);
      assert.equal(received.length, 1);
    });
  });
});

Deno.test("sendWebhook() never throws, whatever it is given", async (t) => {
  await t.step("a URL that does not parse", async () => {
    const outcome = await attempt("not a url");
    assert.equal(outcome.failureReason, "network error: invalid URL");
  });
  await t.step("a scheme other than http and https", async () => {
    const outcome = await attempt("ftp://example.com/");
    assert.equal(outcome.failureReason, "network error: unsupported scheme ftp:");
  });
  await t.step("a header value node refuses", async () => {
    await withReceiver(() => new Response("ok"), async ({ url, received }) => {
      const outcome = await attempt(url, { headers: { "webhook-id": "a\r\nb" } });
      assert.equal(outcome.succeeded, false);
      assert.match(outcome.failureReason ?? "", /^network error: /);
      assert.equal(received.length, 0);
    });
  });
});

/** What a raw endpoint does with one request: answer 204 and keep the connection, or cut it. */
type RawAnswer = "204" | "cut" | "big";

/**
 * A bare HTTP/1.1 endpoint on 127.0.0.1 that counts its connections and, for the n-th request
 * on the c-th connection (both from 0), does what `answer(c, n)` says.
 */
async function withRawEndpoint(
  answer: (connection: number, request: number) => RawAnswer,
  run: (url: string, connections: () => number) => Promise<void>,
): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let accepted = 0;
  const open = new Set<Deno.Conn>();
  const serve = async (connection: Deno.Conn, index: number): Promise<void> => {
    const decoder = new TextDecoder();
    let pending = "";
    let served = 0;
    const chunk = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const headEnd = pending.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(pending)?.[1] ?? 0);
        // Content-Length counts bytes; the sender writes one request at a time.
        const bodyBytes = new TextEncoder().encode(pending.slice(headEnd + 4)).length;
        if (headEnd >= 0 && bodyBytes >= length) {
          pending = "";
          const what = answer(index, served++);
          if (what === "cut") return;
          const body = what === "big" ? "x".repeat(200 * 1024) : "";
          const status = what === "big" ? "200 OK" : "204 No Content";
          const head = `HTTP/1.1 ${status}\r\n` +
            (body === "" ? "" : `content-length: ${body.length}\r\n`) + "\r\n";
          await connection.write(new TextEncoder().encode(head + body));
          continue;
        }
        const read = await connection.read(chunk);
        if (read === null) return;
        pending += decoder.decode(chunk.subarray(0, read));
      }
    } catch {
      // The sender closed its side first.
    } finally {
      open.delete(connection);
      try {
        connection.close();
      } catch {
        // Already closed.
      }
    }
  };
  const serving: Promise<void>[] = [];
  const accepting = (async () => {
    for await (const connection of listener) {
      open.add(connection);
      serving.push(serve(connection, accepted++));
    }
  })();
  try {
    await run(`http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/hooks`, () => accepted);
  } finally {
    listener.close();
    await accepting;
    await Promise.all(serving);
  }
}

function keptAttempt(
  send: (request: WebhookRequest) => Promise<AttemptOutcome>,
  url: string,
): Promise<AttemptOutcome> {
  return send({
    url,
    headers: { "webhook-id": "msg_1" },
    body: BODY,
    timeoutMs: 2_000,
    allowPrivateTargets: true,
  });
}

/** A kept sender for the length of `run`, which sends attempts to a URL; closed after. */
async function withKeptSender(
  options: KeptSenderOptions,
  run: (attempt: (url: string) => Promise<AttemptOutcome>) => Promise<void>,
): Promise<void> {
  const sender = keptSender(options);
  try {
    await run((url) => keptAttempt(sender.send, url));
  } finally {
    await sender.close();
  }
}

Deno.test("keptSender() sends one endpoint's attempts over the connection it kept", async () => {
  await withRawEndpoint(() => "204", async (url, connections) => {
    await withKeptSender({ connectionsPerTarget: 4 }, async (attempt) => {
      for (let i = 0; i < 10; i++) {
        assert.equal((await attempt(url)).httpStatus, 204);
      }
      // One after another: the pool may open a second connection while the first is being
      // released, never one per attempt.
      assert.ok(connections() <= 2, `${connections()} connections for 10 attempts`);
    });
  });
});

Deno.test("keptSender() sends again over a new connection when a kept one is cut unanswered", async () => {
  // The endpoint answers the first request of each connection and cuts the second, as one that
  // closes an idle connection just as the next attempt arrives.
  await withRawEndpoint((_, request) => request === 0 ? "204" : "cut", async (url, connections) => {
    await withKeptSender({ connectionsPerTarget: 1 }, async (attempt) => {
      assert.equal((await attempt(url)).httpStatus, 204);
      const second = await attempt(url);
      assert.deepEqual([second.succeeded, second.httpStatus], [true, 204]);
      assert.equal(connections(), 2);
    });
  });
});

Deno.test("keptSender() reports a new connection cut unanswered as reset, sent once", async () => {
  await withRawEndpoint(() => "cut", async (url, connections) => {
    await withKeptSender({ connectionsPerTarget: 1 }, async (attempt) => {
      const outcome = await attempt(url);
      assert.deepEqual(
        [outcome.succeeded, outcome.httpStatus, outcome.failureReason],
        [false, null, "connection reset"],
      );
      // Cut on its first exchange, the connection was the endpoint's answer: not sent again.
      assert.equal(connections(), 1);
    });
  });
});

Deno.test("keptSender() sends a kept connection's cut attempt again once, and reports the second cut", async () => {
  await withRawEndpoint(
    (connection, request) => connection === 0 && request === 0 ? "204" : "cut",
    async (url, connections) => {
      await withKeptSender({ connectionsPerTarget: 1 }, async (attempt) => {
        assert.equal((await attempt(url)).httpStatus, 204);
        const second = await attempt(url);
        assert.deepEqual([second.succeeded, second.failureReason], [false, "connection reset"]);
        assert.equal(connections(), 2);
      });
    },
  );
});

Deno.test("keptSender() drops a connection whose answer was too long to read", async () => {
  await withRawEndpoint(
    (connection) => connection === 0 ? "big" : "204",
    async (url, connections) => {
      await withKeptSender({ connectionsPerTarget: 1 }, async (attempt) => {
        assert.equal((await attempt(url)).httpStatus, 200);
        assert.equal((await attempt(url)).httpStatus, 204);
        assert.equal(connections(), 2);
      });
    },
  );
});

Deno.test("keptSender() still refuses a forbidden target, and keeps nothing past close()", async () => {
  await withRawEndpoint(() => "204", async (url, connections) => {
    const sender = keptSender({ connectionsPerTarget: 1 });
    const refused = await sender.send({
      url,
      headers: {},
      body: BODY,
      timeoutMs: 2_000,
      allowPrivateTargets: false,
    });
    assert.equal(refused.succeeded, false);
    assert.match(refused.failureReason ?? "", /loopback|private|not allowed|refused/i);
    assert.equal(connections(), 0);
    assert.equal((await keptAttempt(sender.send, url)).httpStatus, 204);
    await sender.close();
    // After close, an attempt still goes out, over a connection of its own that it closes.
    assert.equal((await keptAttempt(sender.send, url)).httpStatus, 204);
    assert.equal(connections(), 2);
  });
});

Deno.test("keptSender() lets an evicted target's attempt under way finish", async () => {
  await withReceiver(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return new Response(null, { status: 204 });
  }, async (slow) => {
    await withRawEndpoint(() => "204", async (other) => {
      await withKeptSender({ connectionsPerTarget: 1, maxTargets: 1 }, async (attempt) => {
        const underWay = attempt(`${slow.url}/hooks`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        // A second target evicts the first while its attempt waits for the answer.
        assert.equal((await attempt(other)).httpStatus, 204);
        const outcome = await underWay;
        assert.deepEqual([outcome.succeeded, outcome.httpStatus], [true, 204]);
      });
    });
  });
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ApiError } from "@printshop/shared/http";
import {
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  verifyInternalContext,
} from "@printshop/shared/internal-context";
import { proxyToService } from "./proxy.ts";

const context: InternalContext = {
  organizationId: crypto.randomUUID(),
  credentialKind: "tenant_key",
  credentialId: crypto.randomUUID(),
  scopes: ["quotes.read"],
  requestId: "req-1",
  issuedAt: Date.now(),
};

Deno.test("proxyToService() forwards a signed context, never the credential, and relays the answer", async () => {
  const key = await importContextKey("k".repeat(32));
  let seen: Headers | undefined;
  let verified = false;
  await using server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req) => {
      seen = req.headers;
      const url = new URL(req.url);
      verified = (await verifyInternalContext(
        key,
        req.method,
        url.pathname + url.search,
        req.headers.get(INTERNAL_CONTEXT_HEADER),
      )).ok;
      return Response.json({ status: true, message: "OK", data: url.search }, {
        status: 201,
        headers: { "set-cookie": "a=b", location: "/v1/quotes/1" },
      });
    },
  );
  const request = new Request("http://gateway.test/v1/quotes?limit=2", {
    method: "POST",
    headers: { "x-api-key": "psk_secret", "content-type": "application/json", cookie: "c=d" },
  });
  const res = await proxyToService(
    { service: "quotes", baseUrl: `http://127.0.0.1:${server.addr.port}` },
    request,
    new TextEncoder().encode("{}"),
    context,
    { contextKey: key, timeoutMs: 2000 },
  );
  assertEquals(res.status, 201);
  assertEquals((await res.json()).data, "?limit=2");
  assertEquals(res.headers.get("location"), "/v1/quotes/1");
  assertEquals(res.headers.get("set-cookie"), null);
  assert(verified, "the service can verify the context");
  assertEquals(seen?.get("x-api-key"), null);
  assertEquals(seen?.get("cookie"), null);
  assertEquals(seen?.get("x-request-id"), "req-1");
});

Deno.test("proxyToService() answers 503 with Retry-After when the service hangs past the timeout", async () => {
  const key = await importContextKey("k".repeat(32));
  const never = Promise.withResolvers<Response>();
  await using server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => never.promise,
  );
  const started = performance.now();
  const error = await proxyToService(
    { service: "quotes", baseUrl: `http://127.0.0.1:${server.addr.port}` },
    new Request("http://gateway.test/v1/quotes"),
    null,
    context,
    { contextKey: key, timeoutMs: 200 },
  ).then(() => null, (e: unknown) => e);
  never.resolve(new Response("late"));
  assert(error instanceof ApiError);
  assertEquals([error.status, error.code], [503, "service_unavailable"]);
  assertEquals(error.headers?.["Retry-After"], "5");
  assert(error.message.includes("200 ms"));
  assert(performance.now() - started < 5000, "it gave up at the timeout, not later");
});

Deno.test("proxyToService() answers 503 when nothing listens at the service's address", async () => {
  const key = await importContextKey("k".repeat(32));
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const error = await proxyToService(
    { service: "crm", baseUrl: `http://127.0.0.1:${port}` },
    new Request("http://gateway.test/v1/customers"),
    null,
    context,
    { contextKey: key, timeoutMs: 2000 },
  ).then(() => null, (e: unknown) => e);
  assert(error instanceof ApiError);
  assertEquals(error.code, "service_unavailable");
  assert(error.message.includes("crm"));
  // Nothing listening: a service being started again, worth trying again in a second.
  assertEquals(error.headers?.["Retry-After"], "1");
});

Deno.test("proxyToService() passes an answer's length on with its bytes, never a compressed one's", async () => {
  const key = await importContextKey("k".repeat(32));
  const json = JSON.stringify({ status: true, message: "OK", data: "x".repeat(40_000) });
  await using server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req) => {
      if (new URL(req.url).pathname === "/plain") {
        return new Response(json, { headers: { "content-type": "application/json" } });
      }
      const gzipped = await new Response(
        new Blob([json]).stream().pipeThrough(new CompressionStream("gzip")),
      ).arrayBuffer();
      return new Response(gzipped, {
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
      });
    },
  );
  const relay = (path: string): Promise<Response> =>
    proxyToService(
      { service: "quotes", baseUrl: `http://127.0.0.1:${server.addr.port}` },
      new Request(`http://gateway.test${path}`),
      null,
      context,
      { contextKey: key, timeoutMs: 2000 },
    );
  // Framed by its length, so the edge and the client need not follow chunks.
  const plain = await relay("/plain");
  assertEquals(plain.headers.get("content-length"), String(json.length));
  assertEquals(await plain.text(), json);
  // fetch hands over the decoded bytes: the compressed length would cut the answer short.
  const decoded = await relay("/gzip");
  assertEquals(decoded.headers.get("content-length"), null);
  assertEquals(await decoded.text(), json);
});

Deno.test("proxyToService() turns a platform's 502 or 504 for the service into 503, keeping a service's own 503", async () => {
  const key = await importContextKey("k".repeat(32));
  for (const [status, expected] of [[502, "service_unavailable"], [504, "service_unavailable"]]) {
    // What Deno Deploy answers when the instance went away under the request: not an envelope.
    const server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen: () => {} },
      () => new Response("Bad Gateway", { status: status as number }),
    );
    const error = await proxyToService(
      { service: "quotes", baseUrl: `http://127.0.0.1:${server.addr.port}` },
      new Request("http://gateway.test/v1/quotes", { method: "POST" }),
      null,
      context,
      { contextKey: key, timeoutMs: 2000 },
    ).then(() => null, (e: unknown) => e);
    await server.shutdown();
    assert(error instanceof ApiError, `${status}`);
    assertEquals(error.code, expected);
    assertEquals(error.headers?.["Retry-After"], "1");
  }
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    () => Response.json({ status: false, error: "service_unavailable" }, { status: 503 }),
  );
  const relayed = await proxyToService(
    { service: "quotes", baseUrl: `http://127.0.0.1:${server.addr.port}` },
    new Request("http://gateway.test/v1/quotes"),
    null,
    context,
    { contextKey: key, timeoutMs: 2000 },
  );
  assertEquals(relayed.status, 503);
  await relayed.body?.cancel();
  await server.shutdown();
});

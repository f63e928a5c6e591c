/**
 * The whole request path through real processes: the gateway and every service started by the
 * launcher on their own ports, against a fresh database, over real HTTP.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Envelope, startTestStack, type TestStack } from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";
import { cLibraryPath } from "@printshop/shared/launcher";
import { jemallocMissingMessage, jemallocPath } from "@printshop/shared/allocator";
import { parseApiKey } from "../gateway/domain/api_key.ts";

const body = async <T = Record<string, unknown>>(res: Response): Promise<Envelope<T>> =>
  await res.json() as Envelope<T>;

async function expectError(res: Response, status: number, code: string): Promise<Envelope> {
  const envelope = await body(res);
  assertEquals([res.status, envelope.error, envelope.status], [status, code, false]);
  assert(typeof envelope.message === "string" && envelope.message.length > 0);
  return envelope;
}

Deno.test("the platform serves tenants through the gateway, isolated from one another", async (t) => {
  await using stack: TestStack = await startTestStack();
  const shopA = await stack.tenant();
  const shopB = await stack.tenant();
  let quoteId = "";

  await t.step("only the services may call into the C library, and only to trim", async () => {
    const libc = await cLibraryPath();
    for (const process of stack.processes) {
      const args = (await Deno.readTextFile(`/proc/${process.child.pid}/cmdline`)).split("\0");
      const grants = args.filter((arg) => arg.startsWith("--allow-ffi"));
      const expected = process.name === "gateway" || libc === null ? [] : [`--allow-ffi=${libc}`];
      assertEquals(grants, expected, process.name);
    }
  });

  await t.step("the gateway allocates with jemalloc, the services with the C library", async () => {
    const jemalloc = await jemallocPath();
    assert.ok(jemalloc !== null, jemallocMissingMessage());
    for (const process of stack.processes) {
      const maps = await Deno.readTextFile(`/proc/${process.child.pid}/maps`);
      assertEquals(maps.includes(jemalloc), process.name === "gateway", process.name);
    }
  });

  await t.step("an admin-issued key creates and lists a quote", async () => {
    const created = await stack.call(shopA.apiKey, "POST", "/v1/quotes", {
      reference: "PO-1001",
      salesRepEmail: "sam@shop.test",
    });
    assertEquals(created.status, 201);
    const quote = (await body(created)).data;
    quoteId = quote.id as string;
    assertEquals(quote.status, "draft");
    const list = await stack.call(shopA.apiKey, "GET", "/v1/quotes?limit=20");
    assertEquals(list.status, 200);
    const page = (await body<{ items: { id: string }[]; totalCount: number }>(list)).data;
    assertEquals(page.totalCount, 1);
    assertEquals(page.items[0]?.id, quoteId);
  });

  await t.step("a group is added through the gateway", async () => {
    const res = await stack.call(shopA.apiKey, "POST", `/v1/quotes/${quoteId}/groups`, {
      name: "Staff tees",
    });
    assertEquals(res.status, 201);
    assertEquals((await body(res)).data.sortOrder, 1);
  });

  await t.step(
    "another organisation's key gets 404 for that quote, and an empty list",
    async () => {
      await expectError(
        await stack.call(shopB.apiKey, "GET", `/v1/quotes/${quoteId}`),
        404,
        "not_found",
      );
      await expectError(
        await stack.call(shopB.apiKey, "POST", `/v1/quotes/${quoteId}/groups`, { name: "x" }),
        404,
        "not_found",
      );
      const list = await body<{ totalCount: number }>(
        await stack.call(shopB.apiKey, "GET", "/v1/quotes"),
      );
      assertEquals(list.data.totalCount, 0);
      const facets = await body(await stack.call(shopB.apiKey, "GET", "/v1/quotes/facets"));
      assertEquals(facets.data, { salesReps: [] });
    },
  );

  await t.step("GET /v1/me describes the caller", async () => {
    const me = await body<
      { organization: { id: string }; credential: { kind: string; id: string }; scopes: string[] }
    >(
      await stack.call(shopA.apiKey, "GET", "/v1/me"),
    );
    assertEquals(me.data.organization.id, shopA.organizationId);
    assertEquals(me.data.credential, { kind: "tenant_key", id: shopA.keyId });
    assert(me.data.scopes.includes("quotes.write"));
  });

  await t.step(
    "GET /v1/reference/limits reports live values, including an admin override",
    async () => {
      await stack.admin("PUT", `/admin/organizations/${shopA.organizationId}/limits`, {
        requestsPerMinute: 42,
      });
      const limits = (await body<Record<string, unknown>>(
        await stack.call(shopA.apiKey, "GET", "/v1/reference/limits"),
      )).data;
      assertEquals(limits.pageSizeMax, 200);
      assertEquals(limits.bulkMaxRows, 1000);
      assertEquals(limits.maxBodyBytes, 1_048_576);
      assertEquals(limits.idempotencyKeyMaxLength, 200);
      assertEquals(limits.webhookSecretOverlapHours, 48);
      assertEquals((limits.rateLimit as { requestsPerMinute: number }).requestsPerMinute, 42);
      const other = (await body<{ rateLimit: { requestsPerMinute: number } }>(
        await stack.call(shopB.apiKey, "GET", "/v1/reference/limits"),
      )).data;
      assertEquals(other.rateLimit.requestsPerMinute, 600);
    },
  );

  await t.step("credentials: missing, wrong, bearer, revoked", async () => {
    const missing = await stack.call(null, "GET", "/v1/quotes");
    await expectError(missing, 401, "unauthenticated");
    assert(missing.headers.get("www-authenticate"));
    await expectError(await stack.call("psk_wrong", "GET", "/v1/quotes"), 401, "unauthenticated");
    const forged = shopA.apiKey.slice(0, -4) + "AAAA";
    await expectError(await stack.call(forged, "GET", "/v1/quotes"), 401, "unauthenticated");
    const bearer = await stack.call(null, "GET", "/v1/quotes", undefined, {
      authorization: `Bearer ${shopA.apiKey}`,
    });
    await expectError(bearer, 401, "unauthenticated");
    assert(bearer.headers.get("www-authenticate")?.includes("X-API-Key"));
    const otherScheme = await stack.call(null, "GET", "/v1/quotes", undefined, {
      authorization: `ApiKey ${shopA.apiKey}`,
    });
    const told = await expectError(otherScheme, 401, "unauthenticated");
    assert.match(told.message, /not "ApiKey …".*X-API-Key/);
    assert(!told.message.includes(shopA.apiKey), "the key is never echoed");
    const temp = await stack.admin<{ data: { id: string; apiKey: string } }>(
      "POST",
      `/admin/organizations/${shopA.organizationId}/api-keys`,
      { scopes: ["quotes.read"] },
    );
    assertEquals((await stack.call(temp.data.apiKey, "GET", "/v1/quotes")).status, 200);
    await stack.admin("DELETE", `/admin/api-keys/${temp.data.id}`);
    await expectError(
      await stack.call(temp.data.apiKey, "GET", "/v1/quotes"),
      401,
      "unauthenticated",
    );
  });

  await t.step("X-Service-Organization-Id must name the key's own organisation", async () => {
    const own = await stack.call(shopA.apiKey, "GET", "/v1/me", undefined, {
      "x-service-organization-id": shopA.organizationId,
    });
    assertEquals(own.status, 200);
    await expectError(
      await stack.call(shopA.apiKey, "GET", "/v1/me", undefined, {
        "x-service-organization-id": shopB.organizationId,
      }),
      403,
      "organization_not_allowed",
    );
    await expectError(
      await stack.call(shopA.apiKey, "GET", "/v1/me", undefined, {
        "x-service-organization-id": "not-a-uuid",
      }),
      403,
      "organization_not_allowed",
    );
  });

  await t.step("a missing scope is 403 naming the scope", async () => {
    const reader = await stack.tenant(["quotes.read"]);
    const res = await stack.call(reader.apiKey, "POST", "/v1/quotes", {});
    const envelope = await expectError(res, 403, "insufficient_scope");
    assert(envelope.message.includes("quotes.write"));
    assertEquals((await stack.call(reader.apiKey, "GET", "/v1/quotes")).status, 200);
  });

  await t.step(
    "unknown endpoints are 404 route_not_found; a known path's other methods 405",
    async () => {
      await expectError(
        await stack.call(shopA.apiKey, "GET", "/v1/nothing-here"),
        404,
        "route_not_found",
      );
      const put = await stack.call(shopA.apiKey, "PUT", "/v1/quotes");
      assertEquals(put.headers.get("allow"), "GET, POST");
      await expectError(put, 405, "method_not_allowed");
      const quote = await stack.call(shopA.apiKey, "PUT", `/v1/quotes/${crypto.randomUUID()}`);
      assertEquals(quote.headers.get("allow"), "GET, PATCH, DELETE");
      assert.match(
        (await expectError(quote, 405, "method_not_allowed")).message,
        /takes GET, PATCH/,
      );
      await expectError(await stack.call(null, "GET", "/elsewhere"), 404, "route_not_found");
    },
  );

  await t.step("HEAD is answered as GET without a body", async () => {
    const get = await stack.call(shopA.apiKey, "GET", `/v1/quotes/${quoteId}`);
    const getText = await get.text();
    const head = await stack.call(shopA.apiKey, "HEAD", `/v1/quotes/${quoteId}`);
    assertEquals(head.status, 200);
    assertEquals(await head.text(), "");
    assertEquals(head.headers.get("content-type"), get.headers.get("content-type"));
    assertEquals(
      Number(head.headers.get("content-length")),
      new TextEncoder().encode(getText).length,
    );
    const missing = await stack.call(shopA.apiKey, "HEAD", `/v1/quotes/${crypto.randomUUID()}`);
    assertEquals([missing.status, await missing.text()], [404, ""]);
    const list = await stack.call(shopA.apiKey, "HEAD", "/v1/quotes?limit=1");
    assertEquals(list.status, 200);
    await list.body?.cancel();
  });

  await t.step("a compressed body is 415, never decompressed", async () => {
    const json = new TextEncoder().encode(JSON.stringify({ reference: "gzipped" }));
    const gzipped = await new Response(
      new Blob([json]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    for (const encoding of ["gzip", "deflate", "br"]) {
      const res = await stack.call(shopA.apiKey, "POST", "/v1/quotes", new Uint8Array(gzipped), {
        "content-encoding": encoding,
      });
      const error = await expectError(res, 415, "unsupported_media_type");
      assert.match(error.message, new RegExp(encoding));
    }
    const plain = await stack.call(shopA.apiKey, "POST", "/v1/quotes", { reference: "plain" }, {
      "content-encoding": "identity",
    });
    assertEquals(plain.status, 201);
    await plain.body?.cancel();
  });

  await t.step("bad input is a 4xx envelope at every endpoint of the slice", async () => {
    await expectError(
      await stack.call(shopA.apiKey, "POST", "/v1/quotes", "{not json"),
      400,
      "invalid_json",
    );
    await expectError(
      await stack.call(shopA.apiKey, "POST", `/v1/quotes/${quoteId}/groups`, "[1,"),
      400,
      "invalid_json",
    );
    const unknown = await expectError(
      await stack.call(shopA.apiKey, "POST", "/v1/quotes", { surprise: true }),
      400,
      "validation_error",
    );
    assertEquals(unknown.details?.[0]?.path, "surprise");
    await expectError(
      await stack.call(shopA.apiKey, "POST", `/v1/quotes/${quoteId}/groups`, { name: 7 }),
      400,
      "validation_error",
    );
    await expectError(
      await stack.call(shopA.apiKey, "GET", "/v1/quotes/12345"),
      400,
      "validation_error",
    );
    await expectError(
      await stack.call(shopA.apiKey, "GET", "/v1/quotes?limit=-5"),
      400,
      "validation_error",
    );
    await expectError(
      await stack.call(shopA.apiKey, "GET", "/v1/quotes/facets?x=1"),
      400,
      "validation_error",
    );
  });

  await t.step("a body over MAX_BODY_BYTES is 413, declared or streamed without end", async () => {
    const big = "x".repeat(1_048_577);
    await expectError(
      await stack.call(shopA.apiKey, "POST", "/v1/quotes", big),
      413,
      "payload_too_large",
    );
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 65_536;
        controller.enqueue(new Uint8Array(65_536).fill(32));
      },
    });
    const res = await fetch(`${stack.gatewayUrl}/v1/quotes`, {
      method: "POST",
      headers: { "x-api-key": shopA.apiKey, "content-type": "application/json" },
      body: endless,
    });
    await expectError(res, 413, "payload_too_large");
    assert(sent < 64 * 1_048_576, `the gateway kept reading: ${sent} bytes sent`);
  });

  await t.step(
    "the gateway propagates request ids and traceparent, and logs with organisation",
    async () => {
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      const res = await stack.call(shopA.apiKey, "GET", `/v1/quotes/${quoteId}`, undefined, {
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        "x-request-id": "e2e-trace-check-1",
      });
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("x-request-id"), "e2e-trace-check-1");
      await res.body?.cancel();
      // Child output reaches the log file asynchronously.
      const requestLine = async (): Promise<Record<string, unknown> | undefined> => {
        const quotesLog = await Deno.readTextFile(`${stack.logDir}/quotes.log`);
        return quotesLog.split("\n").filter((l) => l.includes("e2e-trace-check-1")).map((l) =>
          JSON.parse(l) as Record<string, unknown>
        ).find((l) => l.msg === "request");
      };
      await waitFor("the quotes service's request line", async () => !!await requestLine(), 5_000);
      const line = await requestLine();
      assert(line, "the quotes service logged the request under the gateway's request id");
      assertEquals(line.traceId, traceId);
      assertEquals(line.organizationId, shopA.organizationId);
    },
  );

  await t.step("no API key or admin token appears in any log", async () => {
    const logs = await stack.logs();
    assert(logs.length > 0);
    for (const secret of [shopA.apiKey, shopB.apiKey, stack.adminToken]) {
      assert(!logs.includes(secret), "a secret was logged");
    }
    for (const key of [shopA.apiKey, shopB.apiKey]) {
      const secretPart = parseApiKey(key)?.secret;
      assert(secretPart && !logs.includes(secretPart), "a key's secret part was logged");
    }
  });

  await t.step(
    "/healthz reports every service; a service that is down gives 503, not a hang",
    async () => {
      const healthy = await body<{ services: Record<string, string> }>(
        await fetch(`${stack.gatewayUrl}/healthz`),
      );
      assertEquals(healthy.data.services, {
        quotes: "up",
        catalogue: "up",
        crm: "up",
        proofs: "up",
        webhooks: "up",
      });
      await stack.kill("quotes");
      const down = await stack.call(shopA.apiKey, "GET", "/v1/quotes");
      await expectError(down, 503, "service_unavailable");
      assert(Number(down.headers.get("retry-after")) >= 0);
      const health = await fetch(`${stack.gatewayUrl}/healthz`);
      const report = await expectError(health, 503, "service_unavailable");
      assert(report.details?.some((d) => d.path === "services.quotes"));
      await stack.restart("quotes");
      assertEquals((await stack.call(shopA.apiKey, "GET", "/v1/quotes")).status, 200);
    },
  );
});

Deno.test("services refuse calls that bypass the gateway", async () => {
  await using stack: TestStack = await startTestStack();
  const direct = await fetch(`${stack.serviceUrls.quotes}/v1/quotes`);
  await expectError(direct, 401, "unauthenticated");
  const forged = await fetch(`${stack.serviceUrls.quotes}/v1/quotes`, {
    headers: { "x-internal-context": "eyJvcmdhbml6YXRpb25JZCI6IngifQ.AAAA" },
  });
  await expectError(forged, 401, "unauthenticated");
});

Deno.test("the OpenAPI document and the reference page are public on the gateway", async () => {
  await using stack: TestStack = await startTestStack();
  const doc = await fetch(`${stack.gatewayUrl}/openapi.json`);
  assertEquals(doc.status, 200);
  const openapi = await doc.json();
  assertEquals(openapi.openapi, "3.1.0");
  assert(openapi.paths["/v1/quotes/{quoteId}/groups"].post);
  const page = await fetch(`${stack.gatewayUrl}/docs`);
  assertEquals(page.status, 200);
  assert((page.headers.get("content-type") ?? "").includes("text/html"));
  const html = await page.text();
  const bundle = html.match(/src="(docs\/assets\/[^"]+)"/)?.[1];
  assert(bundle, "the page loads its renderer from the gateway itself");
  const script = await fetch(`${stack.gatewayUrl}/${bundle}`);
  assertEquals(script.status, 200);
  assert((await script.text()).length > 100_000);
});

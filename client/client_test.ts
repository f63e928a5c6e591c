/**
 * The client driving real processes: the gateway and the five services on a fresh database,
 * through `createPrintShopClient` only. A quote tree priced to the README's first session, every
 * paging style walked across several pages, a delivered webhook verified with `verifyWebhook`,
 * typed errors, and the idempotency key doing its job at the gateway. Then retries against a
 * small local server that refuses once with `Retry-After`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, startWebhookReceiver } from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";
import {
  createPrintShopClient,
  PrintShopApiError,
  type PrintShopClient,
  unwrap,
  verifyWebhook,
  WebhookVerificationError,
} from "./src/mod.ts";

/** A client whose every request is also recorded (method and URL), to count pages. */
function recordingClient(
  baseUrl: string,
  apiKey: string,
): { client: PrintShopClient; sent: URL[] } {
  const sent: URL[] = [];
  const client = createPrintShopClient({
    baseUrl,
    apiKey,
    fetch: (request) => {
      sent.push(new URL(request.url));
      return fetch(request);
    },
  });
  return { client, sent };
}

const pagesOf = (sent: URL[], path: string): URL[] => sent.filter((url) => url.pathname === path);

Deno.test("the client against a running stack", async (t) => {
  await using stack = await startTestStack();
  await using receiver = await startWebhookReceiver();
  const shop = await stack.tenant();
  const { client, sent } = recordingClient(stack.gatewayUrl, shop.apiKey);

  await t.step("the tenant key goes in X-API-Key", async () => {
    const me = unwrap(await client.GET("/v1/me"));
    assertEquals(me.data.organization.id, shop.organizationId);
    assertEquals(me.data.credential.kind, "tenant_key");
  });

  let secret = "";
  await t.step("subscribing to quote.created answers the secret", async () => {
    const { data, error, response } = await client.POST("/v1/webhooks", {
      body: { url: receiver.url, event: "quote.created" },
    });
    assertEquals(response.status, 201, JSON.stringify(error));
    secret = data?.data.secret ?? "";
    assert(secret.startsWith("whsec_"), "the secret is answered once");
  });

  let quoteId = "";
  await t.step("a quote tree is priced as the README's first session says", async () => {
    const quote = unwrap(await client.POST("/v1/quotes", { body: { reference: "PO-1001" } }));
    quoteId = quote.data.id;
    const group = unwrap(
      await client.POST("/v1/quotes/{quoteId}/groups", {
        params: { path: { quoteId } },
        body: { name: "Team tees" },
      }),
    );
    const line = unwrap(
      await client.POST("/v1/quote-groups/{groupId}/lines", {
        params: { path: { groupId: group.data.id } },
        body: { lineType: "Garment", productName: "Heavy tee" },
      }),
    );
    const lineId = line.data.id;
    for (
      const body of [
        {
          size: "M",
          colour: "Black",
          quantity: 10,
          buyPrice: 5,
          extraCost: 0.5,
          markupType: "percentage",
          markupValue: 40,
        },
        {
          size: "L",
          colour: "Black",
          quantity: 5,
          buyPrice: 5,
          markupType: "fixed",
          markupValue: 3,
        },
      ] as const
    ) {
      const { response, error } = await client.POST("/v1/quote-lines/{lineId}/variants", {
        params: { path: { lineId } },
        body,
      });
      assertEquals(response.status, 201, JSON.stringify(error));
    }
    const decoration = await client.POST("/v1/quote-groups/{groupId}/decorations", {
      params: { path: { groupId: group.data.id } },
      body: {
        method: "ScreenPrinting",
        position: "Front",
        quantity: 15,
        unitCost: 1.2,
        markupType: "percentage",
        markupValue: 50,
      },
    });
    assertEquals(decoration.response.status, 201, JSON.stringify(decoration.error));
    const read = unwrap(
      await client.GET("/v1/quotes/{quoteId}", { params: { path: { quoteId } } }),
    );
    assertEquals([read.data.subtotalExGst, read.data.totalIncGst], [144, 158.4]);
    assertEquals(read.data.groups[0]?.lines[0]?.variants.length, 2);
  });

  await t.step("the delivery verifies with verifyWebhook and is typed by event", async () => {
    const [delivery] = await receiver.waitFor(1, { timeoutMs: 10_000 });
    const event = verifyWebhook(secret, delivery!.headers, delivery!.body);
    assertEquals(event.type, "quote.created");
    if (event.type !== "quote.created") throw new Error("unreachable");
    // Narrowed: `data` is a Quote here.
    assertEquals([event.data.id, event.data.reference], [quoteId, "PO-1001"]);
    // As Node gives headers (a plain object) and as raw bytes.
    const plain = Object.fromEntries(delivery!.headers);
    const bytes = new TextEncoder().encode(delivery!.body);
    assertEquals(verifyWebhook(secret, plain, bytes), event);
    assert.throws(
      () => verifyWebhook(secret, delivery!.headers, delivery!.body.replace("PO-1001", "PO-1002")),
      WebhookVerificationError,
    );
    const otherSecret = "whsec_" + btoa("0123456789abcdef0123456789abcdef");
    assert.throws(
      () => verifyWebhook(otherSecret, delivery!.headers, delivery!.body),
      WebhookVerificationError,
    );
    const { "webhook-signature": _, ...unsigned } = plain;
    assert.throws(() => verifyWebhook(secret, unsigned, delivery!.body), WebhookVerificationError);
  });

  await t.step("paginate walks an offset list page by page", async () => {
    for (let i = 2; i <= 5; i++) {
      unwrap(await client.POST("/v1/quotes", { body: { reference: `PO-100${i}` } }));
    }
    sent.length = 0;
    const references: (string | null)[] = [];
    for await (
      const quote of client.paginate("/v1/quotes", {
        query: { limit: "2", sortField: "reference", sortDirection: "asc" },
      })
    ) {
      references.push(quote.reference);
    }
    assertEquals(references, ["PO-1001", "PO-1002", "PO-1003", "PO-1004", "PO-1005"]);
    assertEquals(
      pagesOf(sent, "/v1/quotes").map((url) => url.searchParams.get("offset")),
      ["0", "2", "4"],
    );
    // A walk has no use for the count: every page is asked without it, and ends on hasMore.
    assertEquals(
      pagesOf(sent, "/v1/quotes").map((url) => url.searchParams.get("count")),
      ["false", "false", "false"],
    );
  });

  await t.step("paginate walks a cursor list page by page", async () => {
    for (let i = 1; i <= 5; i++) {
      unwrap(
        await client.POST("/v1/catalogue", { body: { styleCode: `TEE-${i}`, name: `Tee ${i}` } }),
      );
    }
    sent.length = 0;
    const codes: string[] = [];
    for await (
      const item of client.paginate("/v1/catalogue", {
        query: { limit: "2", sortField: "styleCode", sortDirection: "asc" },
      })
    ) {
      codes.push(item.styleCode);
    }
    assertEquals(codes, ["TEE-1", "TEE-2", "TEE-3", "TEE-4", "TEE-5"]);
    const pages = pagesOf(sent, "/v1/catalogue");
    assertEquals(pages.length, 3);
    assertEquals(pages[0]!.searchParams.has("cursor"), false);
    assert(pages.slice(1).every((url) => url.searchParams.get("cursor")));
  });

  await t.step("paginate walks the event log by `after` while hasMore", async () => {
    const everything = async (): Promise<string[]> => {
      const page = unwrap(
        await client.GET("/v1/event-log", { params: { query: { limit: "200" } } }),
      );
      return page.data.items.map((e) => e.id);
    };
    // The webhooks service records events a moment after their writes.
    let all: string[] = [];
    await waitFor(
      "the catalogue items' events in the log",
      async () => {
        all = await everything();
        return all.length >= 11;
      },
      10_000,
      100,
    );
    sent.length = 0;
    const walked: string[] = [];
    for await (const entry of client.paginate("/v1/event-log", { query: { limit: "4" } })) {
      walked.push(entry.id);
    }
    assertEquals(walked.slice(0, all.length), all);
    const pages = pagesOf(sent, "/v1/event-log");
    assert(pages.length >= Math.ceil(all.length / 4), `${pages.length} pages`);
    assertEquals(pages[1]!.searchParams.get("after"), walked[3]);
  });

  await t.step("paginate needs and fills in path ids", async () => {
    const webhooks = unwrap(await client.GET("/v1/webhooks"));
    const webhookId = webhooks.data.items[0]!.id;
    const deliveries = [];
    for await (
      const delivery of client.paginate("/v1/webhooks/{webhookId}/deliveries", {
        path: { webhookId },
        query: { limit: "1" },
      })
    ) {
      deliveries.push(delivery);
    }
    // One quote.created per quote made above.
    assertEquals(deliveries.length, 5);
    assert(deliveries.every((d) => d.eventType === "quote.created"));
  });

  await t.step("errors are typed envelopes; unwrap and paginate throw them", async () => {
    const missing = crypto.randomUUID();
    const { data, error, response } = await client.GET("/v1/quotes/{quoteId}", {
      params: { path: { quoteId: missing } },
    });
    assertEquals([data, response.status, error?.error], [undefined, 404, "not_found"]);
    const thrown = await (async () => {
      try {
        unwrap(
          await client.GET("/v1/quotes/{quoteId}", { params: { path: { quoteId: missing } } }),
        );
      } catch (e) {
        return e;
      }
    })();
    assert(thrown instanceof PrintShopApiError);
    assertEquals([thrown.status, thrown.code], [404, "not_found"]);
    assert(thrown.requestId);
    await assert.rejects(async () => {
      for await (
        const _ of client.paginate("/v1/quotes", { query: { sortField: "nope" as never } })
      ) {
        // never reached
      }
    }, (e: unknown) => e instanceof PrintShopApiError && e.code === "validation_error");
  });

  await t.step("the same Idempotency-Key is replayed, not run twice", async () => {
    const key = crypto.randomUUID();
    const send = () =>
      client.POST("/v1/quotes", {
        params: { header: { "Idempotency-Key": key } },
        body: { reference: "Once" },
      });
    const first = await send();
    const again = await send();
    assertEquals(again.response.headers.get("Idempotency-Replayed"), "true");
    assertEquals(again.data?.data.id, first.data?.data.id);
    const onlyOnce = unwrap(
      await client.GET("/v1/quotes", { params: { query: { search: "Once", limit: "0" } } }),
    );
    assertEquals(onlyOnce.data.totalCount, 1);
  });

  await t.step("a tenant key sent as a bearer token is refused, as the README says", async () => {
    const res = await fetch(`${stack.gatewayUrl}/v1/me`, {
      headers: { authorization: `Bearer ${shop.apiKey}` },
    });
    await res.body?.cancel();
    assertEquals(res.status, 401);
  });
});

Deno.test("the client waits Retry-After and resends the same key and body", async () => {
  const seen: { key: string | null; apiKey: string | null; body: string; at: number }[] = [];
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      seen.push({
        key: req.headers.get("idempotency-key"),
        apiKey: req.headers.get("x-api-key"),
        body: await req.text(),
        at: performance.now(),
      });
      if (seen.length === 1) {
        return Response.json(
          { error: "rate_limited", message: "Slow down", status: false },
          { status: 429, headers: { "Retry-After": "1" } },
        );
      }
      return Response.json({ status: true, message: "OK", data: { id: "q-1" } }, { status: 201 });
    },
  );
  const client = createPrintShopClient({
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    apiKey: "psk_test",
  });
  const { data, response } = await client.POST("/v1/quotes", { body: { reference: "PO-9" } });
  assertEquals(response.status, 201);
  assertEquals((data as unknown as { data: { id: string } }).data.id, "q-1");
  assertEquals(seen.length, 2);
  const [first, second] = seen;
  assert(first!.key && /^[0-9a-f-]{36}$/.test(first!.key));
  assertEquals(second!.key, first!.key);
  assertEquals([first!.body, second!.body], [JSON.stringify({ reference: "PO-9" }), first!.body]);
  assertEquals([first!.apiKey, second!.apiKey], ["psk_test", "psk_test"]);
  assert(second!.at - first!.at >= 950, `resent after ${second!.at - first!.at} ms`);
});

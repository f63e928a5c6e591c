/**
 * Webhooks end to end: real processes, a real receiver on loopback, deliveries verified with the
 * `standardwebhooks` package (never with the project's own signing code).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  type WebhookReceiver,
} from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { PUBLIC_EVENT_TYPES } from "@printshop/shared/events";
import { data, eventually, type Json, openDb, send, verify } from "./_webhooks.ts";

Deno.test("webhooks through the gateway", async (t) => {
  await using stack: TestStack = await startTestStack();
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const shop = await stack.tenant();

  let secret = "";
  let webhookId = "";

  await t.step("the catalogue lists past-tense names and a note", async () => {
    const catalogue = data(await send(stack, shop.apiKey, 200, "GET", "/v1/reference/events"));
    assertEquals(catalogue.events, [...PUBLIC_EVENT_TYPES]);
    assert((catalogue.events as string[]).includes("quote.created"));
    assert(typeof catalogue.note === "string" && catalogue.note.length > 0);
  });

  await t.step("subscribing returns the secret once; again gives 200 without it", async () => {
    const first = await send(stack, shop.apiKey, 201, "POST", "/v1/webhooks", {
      url: receiver.url,
      event: "quote.created",
    });
    const sub = data(first);
    assert(typeof sub.secret === "string" && sub.secret.startsWith("whsec_"));
    secret = sub.secret as string;
    webhookId = sub.id as string;
    const again = data(
      await send(stack, shop.apiKey, 200, "POST", "/v1/webhooks", {
        url: receiver.url,
        event: "quote.created",
      }),
    );
    assertEquals(again.id, webhookId);
    assertEquals(again.secret, undefined);
    const list = data(await send(stack, shop.apiKey, 200, "GET", "/v1/webhooks?limit=10"));
    assertEquals((list.items as Json[]).map((s) => s.id), [webhookId]);
    assertEquals(list.totalCount, 1);
    assertEquals(JSON.stringify(list).includes("whsec_"), false);
  });

  await t.step("creating a quote delivers a verifiable, signed event within a second", async () => {
    const created = Date.now();
    const quote = data(
      await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: "Webhook" }),
    );
    const [delivery] = await receiver.waitFor(1, { timeoutMs: 5_000 });
    assert(delivery!.receivedAt - created < 1_000, "delivered within a second");
    const payload = verify(secret, delivery!);
    assertEquals(payload.type, "quote.created");
    assertEquals((payload.data as Json).id, quote.id);
    assert(typeof payload.timestamp === "string");
    // Anything but the signed bytes fails verification.
    assert.throws(() => verify(secret, { ...delivery!, body: delivery!.body + " " }));
  });

  await t.step("the delivery history records the attempt and no response body", async () => {
    // The receiver can hold the request before the worker has recorded the response.
    const history = await eventually("the attempt's outcome in the history", async () => {
      const page = data(
        await send(stack, shop.apiKey, 200, "GET", `/v1/webhooks/${webhookId}/deliveries`),
      );
      const [first] = page.items as Json[];
      return first && first.status !== "pending" ? page : undefined;
    }, 10_000);
    assertEquals(history.totalCount, 1);
    const [delivery] = history.items as Json[];
    assertEquals(delivery!.status, "succeeded");
    const attempts = delivery!.attempts as Json[];
    assertEquals(attempts.length, 1);
    assertEquals(attempts[0]!.httpStatus, 204);
    assertEquals(attempts[0]!.failureReason, null);
    assertEquals("body" in delivery! || "responseBody" in delivery!, false);
  });

  await t.step("an unknown event name is 400; a missing read scope is 403", async () => {
    const unknown = await send(stack, shop.apiKey, 400, "POST", "/v1/webhooks", {
      url: receiver.url,
      event: "quote.exploded",
    });
    assertEquals(unknown.error, "validation_error");
    const narrow = await stack.tenant(["webhooks.read", "webhooks.write"]);
    const refused = await send(stack, narrow.apiKey, 403, "POST", "/v1/webhooks", {
      url: receiver.url,
      event: "quote.created",
    });
    assertEquals(refused.error, "insufficient_scope");
    assert(String(refused.message).includes("quotes.read"));
  });

  await t.step("another credential neither sees nor deletes the subscription", async () => {
    const otherKey = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${shop.organizationId}/api-keys`,
      { scopes: ALL_SCOPES },
    );
    await send(stack, otherKey.data.apiKey, 404, "GET", `/v1/webhooks/${webhookId}`);
    assertEquals(data(await send(stack, otherKey.data.apiKey, 200, "GET", "/v1/webhooks")), {
      items: [],
      totalCount: 0,
      hasMore: false,
    });
    await send(stack, otherKey.data.apiKey, 200, "DELETE", `/v1/webhooks/${webhookId}`);
    await send(stack, shop.apiKey, 200, "GET", `/v1/webhooks/${webhookId}`);
  });

  await t.step("rotation: both secrets verify for now; the new one is shown once", async () => {
    const rotated = data(
      await send(stack, shop.apiKey, 200, "POST", `/v1/webhooks/${webhookId}/rotate-secret`),
    );
    const newSecret = rotated.secret as string;
    assert(newSecret.startsWith("whsec_") && newSecret !== secret);
    const expires = Date.parse(rotated.previousSecretExpiresAt as string);
    assert(Math.abs(expires - Date.now() - 48 * 3_600_000) < 60_000, "old secret lasts 48 h");
    const before = receiver.received.length;
    await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference: "Rotated" });
    const [delivery] = (await receiver.waitFor(before + 1)).slice(before);
    assertEquals(delivery!.headers.get("webhook-signature")!.split(" ").length, 2);
    assertEquals(verify(newSecret, delivery!).type, "quote.created");
    assertEquals(verify(secret, delivery!).type, "quote.created");
    assertEquals(
      data(await send(stack, shop.apiKey, 200, "GET", `/v1/webhooks/${webhookId}`)).secret,
      undefined,
    );
    secret = newSecret;
  });

  await t.step("cost fields reach only a subscriber that holds costs.read", async () => {
    const noCosts = await stack.tenant(ALL_SCOPES.filter((s) => s !== "costs.read"));
    const sub = data(
      await send(stack, noCosts.apiKey, 201, "POST", "/v1/webhooks", {
        url: receiver.url,
        event: "quote_variant.created",
      }),
    );
    assertEquals(sub.includesCosts, false);
    const quote = data(await send(stack, noCosts.apiKey, 201, "POST", "/v1/quotes", {}));
    const group = data(
      await send(stack, noCosts.apiKey, 201, "POST", `/v1/quotes/${quote.id}/groups`, {
        name: "G",
      }),
    );
    const line = data(
      await send(stack, noCosts.apiKey, 201, "POST", `/v1/quote-groups/${group.id}/lines`, {
        lineType: "Garment",
        productName: "Tee",
      }),
    );
    await send(stack, noCosts.apiKey, 201, "POST", `/v1/quote-lines/${line.id}/variants`, {
      size: "M",
      quantity: 2,
    });
    const [delivery] = await receiver.waitFor(1, {
      filter: (r) => r.body.includes('"quote_variant.created"'),
    });
    const payload = verify(sub.secret as string, delivery!);
    assertEquals("buyPrice" in (payload.data as Json), false);
    assertEquals("extraCost" in (payload.data as Json), false);
    assert("quantity" in (payload.data as Json));
  });

  await t.step("the event log lists this organisation's events in order", async () => {
    const all = data(await send(stack, shop.apiKey, 200, "GET", "/v1/event-log"));
    const types = (all.items as Json[]).map((e) => e.type);
    assertEquals(types.filter((type) => type === "quote.created").length, 2);
    assert(types.includes("tax_rate.created"), "the default tax rate came with the first quote");
    assertEquals(all.hasMore, false);
    // Paging one at a time with `after` walks the same events in the same order.
    const walked: unknown[] = [];
    let after = "";
    for (;;) {
      const page = data(
        await send(stack, shop.apiKey, 200, "GET", `/v1/event-log?limit=1${after}`),
      );
      walked.push(...(page.items as Json[]).map((e) => e.id));
      if (!page.hasMore) break;
      after = `&after=${page.lastEventId}`;
    }
    assertEquals(walked, (all.items as Json[]).map((e) => e.id));
    const bad = await send(
      stack,
      shop.apiKey,
      400,
      "GET",
      `/v1/event-log?after=${crypto.randomUUID()}`,
    );
    assertEquals(bad.error, "validation_error");
    const blind = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${shop.organizationId}/api-keys`,
      { scopes: ["webhooks.read"] },
    );
    const hidden = data(await send(stack, blind.data.apiKey, 200, "GET", "/v1/event-log"));
    assertEquals(hidden.items, [], "quote events need quotes.read");
  });

  await t.step("unsubscribing is idempotent", async () => {
    await send(stack, shop.apiKey, 200, "DELETE", `/v1/webhooks/${webhookId}`);
    await send(stack, shop.apiKey, 200, "DELETE", `/v1/webhooks/${webhookId}`);
    await send(stack, shop.apiKey, 200, "DELETE", `/v1/webhooks/${crypto.randomUUID()}`);
    await send(stack, shop.apiKey, 404, "GET", `/v1/webhooks/${webhookId}`);
  });

  await t.step("a revoked key's subscriptions stop delivering", async () => {
    await using db = openDb(stack);
    const key = await stack.admin<{ data: { id: string; apiKey: string } }>(
      "POST",
      `/admin/organizations/${shop.organizationId}/api-keys`,
      { scopes: ALL_SCOPES },
    );
    const sub = data(
      await send(stack, key.data.apiKey, 201, "POST", "/v1/webhooks", {
        url: receiver.url,
        event: "quote.updated",
      }),
    );
    await stack.admin("DELETE", `/admin/api-keys/${key.data.id}`);
    // The revocation reaches the webhooks service as an event from the gateway.
    await eventually("the subscription to be marked revoked", async () => {
      const [row] = await db.sql<{ revoked: boolean }[]>`
        SELECT credential_revoked_at IS NOT NULL AS revoked
        FROM webhooks.subscriptions WHERE id = ${sub.id as string}`;
      return row?.revoked ? true : undefined;
    }, 30_000);
    const quote = data(await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", {}));
    await send(stack, shop.apiKey, 200, "PATCH", `/v1/quotes/${quote.id}`, { reference: "x" });
    // Deliveries are queued in the transaction that records the event in the log.
    await eventually("the change in the event log", async () => {
      const log = data(await send(stack, shop.apiKey, 200, "GET", "/v1/event-log?limit=100"));
      const items = log.items as Json[];
      return items.some((e) => e.type === "quote.updated" && e.aggregateId === quote.id)
        ? true
        : undefined;
    }, 30_000);
    const [queued] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = ${sub
      .id as string}`;
    assertEquals(queued!.n, 0, "nothing queued for the revoked key's subscription");
    assertEquals(receiver.received.filter((r) => r.body.includes('"quote.updated"')).length, 0);
  });
});

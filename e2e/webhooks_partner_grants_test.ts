/**
 * A partner app's webhook subscriptions follow the organisation's grant, end to end: the admin
 * API narrows the grant, the gateway records `partner_grant.updated`, and the webhooks service
 * stops sending cost fields (costs.read gone) or stops the subscription (its area's read scope
 * gone) until the grant gives the scope back. Real processes, a real receiver on loopback, a
 * test identity provider; every wait polls for a state, never a fixed sleep.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import {
  type ReceivedRequest,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  type WebhookReceiver,
} from "@printshop/shared/testing";
import { data, eventually, type Json, openDb, send, verify } from "./_webhooks.ts";

const ISSUER = "https://idp.test/";
const AUDIENCE = "printshop-api";
const FULL = ["quotes.read", "quotes.write", "costs.read", "webhooks.read", "webhooks.write"];
const WITHOUT_COSTS = FULL.filter((s) => s !== "costs.read");
const WITHOUT_QUOTES = ["quotes.write", "webhooks.read", "webhooks.write"];
const WAIT_MS = 15_000;

Deno.test("a partner's webhooks lose cost fields and stop with its grant, and resume with it", async (t) => {
  // The identity provider: one RS256 key, published as a JWKS on loopback.
  const keys = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(keys.publicKey), kid: "rsa-1", alg: "RS256", use: "sig" };
  await using jwks = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ keys: [jwk] }),
  );
  await using stack: TestStack = await startTestStack({
    processEnv: {
      gateway: {
        PARTNER_JWKS_URL: `http://127.0.0.1:${jwks.addr.port}/jwks.json`,
        PARTNER_TOKEN_ISSUER: ISSUER,
        PARTNER_TOKEN_AUDIENCE: AUDIENCE,
      },
      // A failed attempt waits an hour for its retry, so it is still queued when the grant narrows.
      webhooks: { WEBHOOK_RETRY_SCHEDULE: "1h" },
    },
  });
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  await using db = openDb(stack);
  const shop = await stack.tenant(undefined, "Partnered Print Shop");
  const app = (await stack.admin<{ data: { id: string; clientId: string; clientSecret: string } }>(
    "POST",
    "/admin/partner-apps",
    { name: "Storefront Connector", scopes: FULL },
  )).data;
  const grant = (scopes: string[]): Promise<unknown> =>
    stack.admin("POST", `/admin/partner-apps/${app.id}/grants`, {
      organizationId: shop.organizationId,
      scopes,
    });
  await grant(FULL);

  const token = async (): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return await new SignJWT({
      iss: ISSUER,
      aud: AUDIENCE,
      iat: now,
      exp: now + 300,
      client_id: app.clientId,
    }).setProtectedHeader({ alg: "RS256", kid: "rsa-1", typ: "JWT" }).sign(keys.privateKey);
  };
  /** Calls the gateway as the partner acting for the shop; asserts the status. */
  const asPartner = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Json> => {
    const res = await stack.call(app.clientId, method, path, body, {
      "x-api-secret": app.clientSecret,
      authorization: `Bearer ${await token()}`,
      "x-service-organization-id": shop.organizationId,
    });
    const json = await res.json() as Json;
    assertEquals(res.status, status, `${method} ${path}: ${JSON.stringify(json)}`);
    return data(json);
  };
  /** Polls the partner's view of a subscription until `ready` holds for it. */
  const subscriptionWhen = (id: string, what: string, ready: (s: Json) => boolean) =>
    eventually(what, async () => {
      const subscription = await asPartner(200, "GET", `/v1/webhooks/${id}`);
      return ready(subscription) ? subscription : undefined;
    }, WAIT_MS);

  // Quotes are written with the shop's own key, which holds every scope throughout.
  const quote = async (reference: string): Promise<string> =>
    data(await send(stack, shop.apiKey, 201, "POST", "/v1/quotes", { reference })).id as string;
  let lineId = "";
  const variant = async (buyPrice: number): Promise<string> =>
    data(
      await send(stack, shop.apiKey, 201, "POST", `/v1/quote-lines/${lineId}/variants`, {
        size: "M",
        quantity: 2,
        buyPrice,
      }),
    ).id as string;
  const deliveryOf = (id: string) => (r: ReceivedRequest): boolean => r.body.includes(`"${id}"`);
  /** The event of `type` about `id`, once the webhooks service has recorded it. */
  const recordedEvent = (type: string, id: string): Promise<string> =>
    eventually(`${type} of ${id} in the event log`, async () => {
      let after = "";
      for (;;) {
        const page = data(
          await send(stack, shop.apiKey, 200, "GET", `/v1/event-log?limit=200${after}`),
        );
        const found = (page.items as Json[]).find((e) =>
          e.type === type && (e.data as Json).id === id
        );
        if (found) return found.id as string;
        if (!page.hasMore) return undefined;
        after = `&after=${page.lastEventId}`;
      }
    }, WAIT_MS);
  const deliveriesOfEvent = async (eventId: string) =>
    await db.sql<{ subscription_id: string; status: string; last_failure_reason: string | null }[]>`
      SELECT subscription_id, status, last_failure_reason FROM webhooks.deliveries
      WHERE event_id = ${eventId}`;

  let quotesSub = { id: "", secret: "" };
  let variantsSub = { id: "", secret: "" };

  await t.step(
    "with costs.read the partner subscribes, and deliveries carry cost fields",
    async () => {
      for (const event of ["quote.created", "quote_variant.created"]) {
        const sub = await asPartner(201, "POST", "/v1/webhooks", { url: receiver.url, event });
        assertEquals([sub.includesCosts, sub.active], [true, true]);
        const made = { id: sub.id as string, secret: sub.secret as string };
        if (event === "quote.created") quotesSub = made;
        else variantsSub = made;
      }
      const quoteId = await quote("Grant 1");
      const group = data(
        await send(stack, shop.apiKey, 201, "POST", `/v1/quotes/${quoteId}/groups`, { name: "G" }),
      );
      lineId = data(
        await send(stack, shop.apiKey, 201, "POST", `/v1/quote-groups/${group.id}/lines`, {
          lineType: "Garment",
          productName: "Tee",
        }),
      ).id as string;
      const variantId = await variant(4);
      const [created] = await receiver.waitFor(1, { filter: deliveryOf(quoteId) });
      assertEquals(verify(quotesSub.secret, created!).type, "quote.created");
      const [delivered] = await receiver.waitFor(1, { filter: deliveryOf(variantId) });
      const payload = verify(variantsSub.secret, delivered!);
      assertEquals(payload.type, "quote_variant.created");
      assert("buyPrice" in (payload.data as Json), JSON.stringify(payload.data));
    },
  );

  await t.step("the grant loses costs.read: the next delivery has no cost fields", async () => {
    await grant(WITHOUT_COSTS);
    const sub = await subscriptionWhen(
      variantsSub.id,
      "the subscription to stop including costs",
      (s) => s.includesCosts === false,
    );
    assertEquals(sub.active, true);
    const variantId = await variant(5);
    const [delivered] = await receiver.waitFor(1, { filter: deliveryOf(variantId) });
    const payload = verify(variantsSub.secret, delivered!);
    assertEquals(payload.type, "quote_variant.created");
    const fields = payload.data as Json;
    assert("quantity" in fields, JSON.stringify(fields));
    for (const cost of ["buyPrice", "extraCost", "setupCost", "unitCost"]) {
      assertEquals(cost in fields, false, `${cost} left out`);
    }
  });

  await t.step(
    "the grant loses quotes.read: subscriptions stop, the queued delivery fails, nothing new is queued",
    async () => {
      // The endpoint fails, so the next quote's delivery waits for its retry.
      receiver.respondWith(503);
      const waitingQuote = await quote("Grant 3");
      const waitingEvent = await recordedEvent("quote.created", waitingQuote);
      await eventually("the delivery to be waiting for its retry", async () => {
        const rows = await deliveriesOfEvent(waitingEvent);
        return rows[0]?.status === "retrying" ? rows : undefined;
      }, WAIT_MS);
      receiver.respondWith(204);

      await grant(WITHOUT_QUOTES);
      await subscriptionWhen(quotesSub.id, "the subscription to stop", (s) => s.active === false);
      const variants = await asPartner(200, "GET", `/v1/webhooks/${variantsSub.id}`);
      assertEquals(variants.active, false);
      // Failed in the transaction that stopped the subscription.
      assertEquals(
        (await deliveriesOfEvent(waitingEvent)).map((d) => [d.status, d.last_failure_reason]),
        [["failed", "scope withdrawn: quotes.read"]],
      );

      // Deliveries are queued in the transaction that records the event, so once the event is
      // in the log, a delivery for it would already exist.
      const unseenQuote = await quote("Grant 4");
      const unseenEvent = await recordedEvent("quote.created", unseenQuote);
      assertEquals((await deliveriesOfEvent(unseenEvent)).length, 0, "no delivery was queued");
    },
  );

  await t.step("the grant gives quotes.read back: new events are delivered again", async () => {
    await grant(FULL);
    const sub = await subscriptionWhen(
      quotesSub.id,
      "the subscription to resume",
      (s) => s.active === true,
    );
    // Cost fields, once dropped, stay off until the partner subscribes again.
    assertEquals(sub.includesCosts, false);
    const variants = await asPartner(200, "GET", `/v1/webhooks/${variantsSub.id}`);
    assertEquals([variants.active, variants.includesCosts], [true, false]);

    const quoteId = await quote("Grant 5");
    const [delivered] = await receiver.waitFor(1, { filter: deliveryOf(quoteId) });
    const payload = verify(quotesSub.secret, delivered!);
    assertEquals([payload.type, (payload.data as Json).id], ["quote.created", quoteId]);
    // What failed while the scope was gone stays failed.
    const failed = await db.sql<{ status: string }[]>`
      SELECT status FROM webhooks.deliveries
      WHERE subscription_id = ${quotesSub.id} AND last_failure_reason LIKE 'scope withdrawn:%'`;
    assertEquals(failed.map((d) => d.status), ["failed"]);
  });
});

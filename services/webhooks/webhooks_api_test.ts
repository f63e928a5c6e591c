/**
 * The webhooks API in-process, through `app.request` on a fresh database: validation, ownership,
 * idempotent subscribing, secret rotation, delivery history and replay, and the event log. The
 * happy path through real processes is e2e/webhooks_test.ts; these are the edges.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  type Envelope,
  type ServiceHarness,
  startWebhookReceiver,
  type WebhookReceiver,
} from "@printshop/shared/testing";
import type {
  EventLogPage,
  WebhookDelivery,
  WebhookSubscription,
} from "@printshop/shared/contracts/webhooks";
import { type BusEvent, EVENT_DEFINITIONS, PUBLIC_EVENT_TYPES } from "@printshop/shared/events";
import type { Config } from "./config.ts";
import { createSecretBox } from "./delivery/secret_box.ts";
import { recordEvents } from "./store/events.ts";
import { revokeCredential, signingSecrets } from "./store/subscriptions.ts";
import { busEvent, webhooksHarness } from "./test_fixtures.ts";
import { withOrganization } from "@printshop/shared/db/tenancy";

type Subscription = WebhookSubscription;
type Delivery = WebhookDelivery;
type LogPage = EventLogPage;

interface SubscriptionPage {
  items: Subscription[];
  totalCount: number;
}

/** Who is calling: one credential of one organisation. */
interface Caller {
  organizationId: string;
  credentialId: string;
  scopes?: readonly string[];
}

const newCaller = (organizationId: string = crypto.randomUUID()): Caller => ({
  organizationId,
  credentialId: crypto.randomUUID(),
});

async function call<T = unknown>(
  h: ServiceHarness<Config>,
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Envelope<T> }> {
  const res = await h.request(method, path, {
    organizationId: caller.organizationId,
    credentialId: caller.credentialId,
    ...(caller.scopes ? { scopes: caller.scopes } : {}),
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, body: await res.json() as Envelope<T> };
}

/** Calls and insists on the status, showing the answer when it differs. */
async function expect<T = unknown>(
  h: ServiceHarness<Config>,
  caller: Caller,
  status: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<Envelope<T>> {
  const res = await call<T>(h, caller, method, path, body);
  assertEquals(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function subscribeTo(
  h: ServiceHarness<Config>,
  caller: Caller,
  url: string,
  event = "quote.created",
): Promise<Subscription> {
  return (await expect<Subscription>(h, caller, 201, "POST", "/v1/webhooks", { url, event })).data;
}

/** Asserts a 400 validation_error whose details name `path`. */
function assertValidationError(res: { status: number; body: Envelope }, path: string): void {
  const shown = JSON.stringify(res.body);
  assertEquals(res.status, 400, shown);
  assertEquals(res.body.error, "validation_error", shown);
  assertEquals(res.body.status, false);
  assert(res.body.details?.some((d) => d.path === path), `details should name "${path}": ${shown}`);
}

async function count(h: ServiceHarness<Config>, table: string): Promise<number> {
  const [row] = await h.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${h.sql(table)}`;
  return Number(row?.n);
}

/** A public address that needs no DNS, so nothing here depends on the network. */
const PUBLIC = "http://93.184.216.34";

/** Records one event (as the consumer does) and returns the delivery it queued for `webhookId`. */
async function recordFor(
  h: ServiceHarness<Config>,
  caller: Caller,
  webhookId: string,
  type = "quote.created",
): Promise<{ event: BusEvent; deliveryId: string }> {
  const event = busEvent(caller.organizationId, type);
  await recordEvents(h.deps.sql, [event]);
  const [row] = await h.sql<{ id: string }[]>`
    SELECT id FROM deliveries WHERE subscription_id = ${webhookId} AND event_id = ${event.id}`;
  assert(row, "recordEvents should have queued a delivery");
  return { event, deliveryId: row.id };
}

async function markFailed(h: ServiceHarness<Config>, deliveryId: string): Promise<void> {
  await h.sql`
    UPDATE deliveries SET status = 'failed', next_attempt_at = NULL,
           last_failure_reason = 'HTTP 503 from endpoint', last_http_status = 503
    WHERE id = ${deliveryId}`;
}

/** A port nothing listens on: a receiver's, after it stopped. */
async function closedPort(): Promise<number> {
  const receiver = await startWebhookReceiver();
  await receiver.stop();
  return receiver.port;
}

// ---------------------------------------------------------------------------------------------
// POST /v1/webhooks

Deno.test("POST /v1/webhooks refuses bad input with a 400 naming the field and stores nothing", async (t) => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const url = `${PUBLIC}/hooks`;
  const cases: [string, unknown, string][] = [
    ["no fields", {}, "url"],
    ["no url", { event: "quote.created" }, "url"],
    ["no event", { url }, "event"],
    ["an extra field", { url, event: "quote.created", secret: "mine" }, "secret"],
    ["an empty url", { url: "", event: "quote.created" }, "url"],
    ["a blank url", { url: "   ", event: "quote.created" }, "url"],
    ["a url that is not a string", { url: 42, event: "quote.created" }, "url"],
    [
      "a url over 2048 characters",
      { url: `${PUBLIC}/${"a".repeat(2048)}`, event: "quote.created" },
      "url",
    ],
    ["a relative url", { url: "/hooks", event: "quote.created" }, "url"],
    ["an ftp: url", { url: "ftp://93.184.216.34/hooks", event: "quote.created" }, "url"],
    ["a javascript: url", { url: "javascript:alert(1)", event: "quote.created" }, "url"],
    ["a file: url", { url: "file:///etc/passwd", event: "quote.created" }, "url"],
    ["a url with a username and password", {
      url: "https://user:pass@93.184.216.34/hooks",
      event: "quote.created",
    }, "url"],
    [
      "a url with only a username",
      { url: "https://user@93.184.216.34/", event: "quote.created" },
      "url",
    ],
    ["an empty event", { url, event: "" }, "event"],
    ["an unknown event", { url, event: "quote.exploded" }, "event"],
    ["an event in the wrong case", { url, event: "Quote.Created" }, "event"],
    ["the platform-internal api_key.revoked", { url, event: "api_key.revoked" }, "event"],
  ];
  for (const [name, body, path] of cases) {
    await t.step(name, async () => {
      assertValidationError(await call(h, me, "POST", "/v1/webhooks", body), path);
    });
  }
  await t.step("malformed JSON is 400 invalid_json", async () => {
    const res = await call(h, me, "POST", "/v1/webhooks", "{nope");
    assertEquals(res.status, 400);
    assertEquals(res.body.error, "invalid_json");
  });
  await t.step("the refused internal event reads as unknown, not as forbidden", async () => {
    const res = await call(h, me, "POST", "/v1/webhooks", { url, event: "api_key.revoked" });
    assert.match(res.body.message, /Unknown event "api_key\.revoked"/);
  });
  assertEquals(await count(h, "subscriptions"), 0);
  assertEquals(await count(h, "signing_secrets"), 0);
});

Deno.test("POST /v1/webhooks refuses loopback, private and metadata targets unless allowed", async (t) => {
  await using h = await webhooksHarness({ WEBHOOK_ALLOW_PRIVATE_TARGETS: false });
  const me = newCaller();
  const cases: [string, string][] = [
    ["http://127.0.0.1/x", "loopback"],
    ["http://10.0.0.1/", "private"],
    ["http://192.168.1.20:8080/hooks", "private"],
    ["http://[::1]/", "loopback"],
    ["http://169.254.169.254/", "metadata"],
    ["http://0.0.0.0/", "unspecified"],
    // Spellings the URL parser turns into loopback and private addresses.
    ["http://0x7f000001/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://[::ffff:10.0.0.1]/", "IPv4-mapped private"],
    ["http://[fd00::1]/", "private"],
  ];
  for (const [url, reason] of cases) {
    await t.step(`${url} (${reason})`, async () => {
      const res = await call(h, me, "POST", "/v1/webhooks", { url, event: "quote.created" });
      assertValidationError(res, "url");
      const detail = res.body.details?.find((d) => d.path === "url")?.message ?? "";
      assert(detail.includes(` ${reason} address`), `reason "${reason}" in: ${detail}`);
      assert.match(detail, /only be sent to public addresses/);
      assert.match(detail, /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/, "it names how to allow them");
    });
  }
  assertEquals(await count(h, "subscriptions"), 0);
  assertEquals(await count(h, "signing_secrets"), 0);
  await t.step("a public address is still accepted", async () => {
    await subscribeTo(h, me, `${PUBLIC}/hooks`);
    assertEquals(await count(h, "subscriptions"), 1);
  });
});

Deno.test("POST /v1/webhooks gives the same target spelled differently the same subscription", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const first = await subscribeTo(h, me, "HTTP://93.184.216.34:80/a");
  assertEquals(first.url, "http://93.184.216.34/a");
  assert(first.secret?.startsWith("whsec_"), JSON.stringify(first));
  assertEquals(first.active, true);
  for (
    const spelling of [
      "http://93.184.216.34/a",
      " http://93.184.216.34/x/../a ",
      "http://93.184.216.34/a#fragment",
    ]
  ) {
    const again = await expect<Subscription>(h, me, 200, "POST", "/v1/webhooks", {
      url: spelling,
      event: "quote.created",
    });
    assertEquals(again.data.id, first.id, spelling);
    assertEquals(again.data.secret, undefined, "the secret is never shown twice");
    assertEquals(again.data.url, first.url);
  }
  assertEquals(await count(h, "subscriptions"), 1);
  assertEquals(await count(h, "signing_secrets"), 1);
});

Deno.test("POST /v1/webhooks makes a new subscription for another event, URL or credential", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const base = await subscribeTo(h, me, `${PUBLIC}/a`, "quote.created");
  const otherEvent = await subscribeTo(h, me, `${PUBLIC}/a`, "quote.updated");
  const otherUrl = await subscribeTo(h, me, `${PUBLIC}/b`, "quote.created");
  const otherScheme = await subscribeTo(h, me, "https://93.184.216.34/a", "quote.created");
  const colleague = newCaller(me.organizationId);
  const theirs = await subscribeTo(h, colleague, `${PUBLIC}/a`, "quote.created");
  const all = [base, otherEvent, otherUrl, otherScheme, theirs];
  assertEquals(new Set(all.map((s) => s.id)).size, all.length);
  assertEquals(new Set(all.map((s) => s.secret)).size, all.length, "each gets its own secret");
  // Each credential lists only its own.
  const mine = await expect<SubscriptionPage>(h, me, 200, "GET", "/v1/webhooks");
  assertEquals(
    mine.data.items.map((s) => s.id),
    [base, otherEvent, otherUrl, otherScheme].map((s) => s.id),
    "oldest first",
  );
  assertEquals(mine.data.totalCount, 4);
  const listed = await expect<SubscriptionPage>(h, colleague, 200, "GET", "/v1/webhooks");
  assertEquals(listed.data.items.map((s) => s.id), [theirs.id]);
  assertEquals(JSON.stringify([mine, listed]).includes("whsec_"), false);
  assertEquals(await count(h, "subscriptions"), 5);
});

Deno.test("POST /v1/webhooks run five times at once creates one subscription, one 201", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const body = { url: `${PUBLIC}/same`, event: "quote.created" };
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => call<Subscription>(h, me, "POST", "/v1/webhooks", body)),
  );
  assertEquals(
    answers.map((a) => a.status).sort(),
    [200, 200, 200, 200, 201],
    JSON.stringify(answers),
  );
  assertEquals(new Set(answers.map((a) => a.body.data.id)).size, 1);
  assertEquals(answers.filter((a) => a.body.data.secret !== undefined).length, 1);
  assertEquals(await count(h, "subscriptions"), 1);
  assertEquals(await count(h, "signing_secrets"), 1);
});

Deno.test("POST /v1/webhooks needs the event's read scope; includesCosts follows costs.read", async (t) => {
  await using h = await webhooksHarness();
  const org = crypto.randomUUID();
  await t.step("without quotes.read: 403 insufficient_scope, nothing stored", async () => {
    const caller = { ...newCaller(org), scopes: ["webhooks.read", "webhooks.write", "costs.read"] };
    const res = await call(h, caller, "POST", "/v1/webhooks", {
      url: `${PUBLIC}/a`,
      event: "quote.created",
    });
    assertEquals(res.status, 403, JSON.stringify(res.body));
    assertEquals(res.body.error, "insufficient_scope");
    assert.match(res.body.message, /quotes\.read/);
    assertEquals(await count(h, "subscriptions"), 0);
  });
  await t.step("quotes.read without costs.read: includesCosts false", async () => {
    const caller = { ...newCaller(org), scopes: ["webhooks.write", "quotes.read"] };
    const sub = await subscribeTo(h, caller, `${PUBLIC}/a`);
    assertEquals(sub.includesCosts, false);
    const [row] = await h.sql`SELECT includes_costs FROM subscriptions WHERE id = ${sub.id}`;
    assertEquals(row?.includes_costs, false);
  });
  await t.step("quotes.read and costs.read: includesCosts true", async () => {
    const caller = { ...newCaller(org), scopes: ["webhooks.write", "quotes.read", "costs.read"] };
    const sub = await subscribeTo(h, caller, `${PUBLIC}/a`);
    assertEquals(sub.includesCosts, true);
  });
});

// ---------------------------------------------------------------------------------------------
// Ownership

Deno.test("a subscription answers 404 to another organisation and to another credential", async (t) => {
  await using h = await webhooksHarness();
  const owner = newCaller();
  const sub = await subscribeTo(h, owner, `${PUBLIC}/a`);
  const { deliveryId } = await recordFor(h, owner, sub.id);
  await markFailed(h, deliveryId);
  const strangers: [string, Caller][] = [
    ["another organisation", newCaller()],
    ["another credential of the same organisation", newCaller(owner.organizationId)],
    ["the same credential id in another organisation", {
      organizationId: crypto.randomUUID(),
      credentialId: owner.credentialId,
    }],
  ];
  const routes: [string, string][] = [
    ["GET", `/v1/webhooks/${sub.id}`],
    ["POST", `/v1/webhooks/${sub.id}/rotate-secret`],
    ["GET", `/v1/webhooks/${sub.id}/deliveries`],
    ["POST", `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`],
  ];
  for (const [who, stranger] of strangers) {
    await t.step(who, async () => {
      for (const [method, path] of routes) {
        const res = await call(h, stranger, method, path);
        assertEquals(res.status, 404, `${method} ${path}: ${JSON.stringify(res.body)}`);
        assertEquals(res.body.error, "not_found");
      }
      const deleted = await expect(h, stranger, 200, "DELETE", `/v1/webhooks/${sub.id}`);
      assert.match(deleted.message, /nothing to do/);
    });
  }
  await t.step("the owner's subscription is untouched", async () => {
    const mine = await expect<Subscription>(h, owner, 200, "GET", `/v1/webhooks/${sub.id}`);
    assertEquals(mine.data.secretRotatedAt, null);
    assertEquals(await count(h, "signing_secrets"), 1);
    const [row] = await h
      .sql`SELECT status, attempt_count FROM deliveries WHERE id = ${deliveryId}`;
    assertEquals({ ...row }, { status: "failed", attempt_count: 0 });
  });
  await t.step(
    "a delivery of the owner's other subscription is not found through this one",
    async () => {
      const other = await subscribeTo(h, owner, `${PUBLIC}/b`);
      const res = await call(
        h,
        owner,
        "POST",
        `/v1/webhooks/${other.id}/deliveries/${deliveryId}/retry`,
      );
      assertEquals(res.status, 404);
    },
  );
  await t.step("an unknown id is 404", async () => {
    for (const [method, path] of routes) {
      const res = await call(h, owner, method, path.replace(sub.id, crypto.randomUUID()));
      assertEquals(res.status, 404, `${method} ${path}`);
    }
  });
});

Deno.test("a malformed id in the path is a 400 or 404, never a 500", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const sub = await subscribeTo(h, me, `${PUBLIC}/a`);
  const paths: [string, string][] = [
    ["GET", "/v1/webhooks/not-a-uuid"],
    ["DELETE", "/v1/webhooks/not-a-uuid"],
    ["POST", "/v1/webhooks/not-a-uuid/rotate-secret"],
    ["GET", "/v1/webhooks/not-a-uuid/deliveries"],
    ["GET", "/v1/webhooks/0190b1c2-3d4e-7f00-8a00-0000000000a/deliveries"],
    ["POST", `/v1/webhooks/not-a-uuid/deliveries/${crypto.randomUUID()}/retry`],
    ["POST", `/v1/webhooks/${sub.id}/deliveries/not-a-uuid/retry`],
    ["POST", `/v1/webhooks/${sub.id}/deliveries/${"f".repeat(36)}/retry`],
    ["GET", "/v1/webhooks/'%20OR%201=1--"],
  ];
  for (const [method, path] of paths) {
    const res = await call(h, me, method, path);
    assert(res.status === 400 || res.status === 404, `${method} ${path}: ${res.status}`);
    if (res.status === 400) assertEquals(res.body.error, "validation_error");
  }
});

// ---------------------------------------------------------------------------------------------
// Secret rotation

Deno.test("POST /v1/webhooks/{id}/rotate-secret issues a new sealed secret and keeps the old for 48 h", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const sub = await subscribeTo(h, me, `${PUBLIC}/a`);
  const secrets = [sub.secret!];
  const validRows = async (): Promise<number> => {
    const [row] = await h.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM signing_secrets
      WHERE subscription_id = ${sub.id} AND (expires_at IS NULL OR expires_at > now())`;
    return Number(row?.n);
  };
  assertEquals(await validRows(), 1);

  for (const expectedRows of [2, 3]) {
    const before = Date.now();
    const rotated = await expect<Subscription>(
      h,
      me,
      200,
      "POST",
      `/v1/webhooks/${sub.id}/rotate-secret`,
    );
    const after = Date.now();
    const { secret, previousSecretExpiresAt, secretRotatedAt } = rotated.data;
    assert(secret !== undefined && secret.startsWith("whsec_"), JSON.stringify(rotated));
    assert(!secrets.includes(secret), "a rotation issues a secret never seen before");
    secrets.push(secret);
    const expires = Date.parse(previousSecretExpiresAt ?? "");
    const hours48 = 48 * 3_600_000;
    assert(
      expires >= before + hours48 - 5_000 && expires <= after + hours48 + 5_000,
      `previousSecretExpiresAt ${previousSecretExpiresAt} should be 48 h ahead`,
    );
    assert(secretRotatedAt !== null && Math.abs(Date.parse(secretRotatedAt) - after) < 60_000);
    assertEquals(await validRows(), expectedRows);
  }

  // The secret that was already on its way out keeps its own, earlier expiry.
  const rows = await h.sql<{ sealed: Uint8Array; expires_at: Date | null }[]>`
    SELECT sealed, expires_at FROM signing_secrets WHERE subscription_id = ${sub.id}
    ORDER BY created_at, id`;
  assertEquals(rows.length, 3);
  assert(rows[0]!.expires_at && rows[1]!.expires_at && rows[2]!.expires_at === null);
  assert(rows[0]!.expires_at <= rows[1]!.expires_at);

  // Sealed at rest: neither the text of any secret nor its key bytes appear in any row.
  for (const row of rows) {
    const sealed = Buffer.from(row.sealed);
    for (const secret of secrets) {
      assertEquals(sealed.includes(Buffer.from(secret, "utf8")), false);
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      assertEquals(sealed.includes(key), false);
    }
  }
  // ...and they open, under the configured key, to the secrets that were handed out.
  const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
  assertEquals(
    await withOrganization(me.organizationId, () => signingSecrets(h.deps.sql, box, sub.id)),
    [...secrets].reverse(),
  );

  // The secret is never shown again.
  const shown = await expect<Subscription>(h, me, 200, "GET", `/v1/webhooks/${sub.id}`);
  assertEquals(shown.data.secret, undefined);
  assertEquals(JSON.stringify(shown).includes("whsec_"), false);
});

// ---------------------------------------------------------------------------------------------
// Delivery history

Deno.test("GET /v1/webhooks/{id}/deliveries lists newest first, pages and filters by status", async (t) => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const sub = await subscribeTo(h, me, `${PUBLIC}/a`);
  const recorded: { event: BusEvent; deliveryId: string }[] = [];
  for (let i = 0; i < 5; i++) recorded.push(await recordFor(h, me, sub.id));
  // Neither another event type nor another organisation's event shows up here.
  await recordEvents(h.deps.sql, [
    busEvent(me.organizationId, "quote.updated"),
    busEvent(crypto.randomUUID(), "quote.created"),
  ]);
  const newestFirst = recorded.map((r) => r.deliveryId).reverse();
  const list = async (query: string) =>
    (await expect<{ items: Delivery[]; totalCount: number }>(
      h,
      me,
      200,
      "GET",
      `/v1/webhooks/${sub.id}/deliveries${query}`,
    )).data;

  await t.step("newest first, each pending with its event", async () => {
    const page = await list("");
    assertEquals(page.totalCount, 5);
    assertEquals(page.items.map((d) => d.id), newestFirst);
    assertEquals(page.items.map((d) => d.eventId), recorded.map((r) => r.event.id).reverse());
    for (const d of page.items) {
      assertEquals(d.webhookId, sub.id);
      assertEquals(d.eventType, "quote.created");
      assertEquals(d.status, "pending");
      assertEquals(d.attempts, []);
      assert(d.nextAttemptAt !== null);
    }
  });
  await t.step("limit and offset page through, totalCount counts them all", async () => {
    const first = await list("?limit=2");
    assertEquals([first.items.map((d) => d.id), first.totalCount], [newestFirst.slice(0, 2), 5]);
    const second = await list("?limit=2&offset=2");
    assertEquals(second.items.map((d) => d.id), newestFirst.slice(2, 4));
    const last = await list("?limit=2&offset=4");
    assertEquals([last.items.map((d) => d.id), last.totalCount], [newestFirst.slice(4), 5]);
    const beyond = await list("?offset=10");
    assertEquals([beyond.items, beyond.totalCount], [[], 5]);
    const none = await list("?limit=0");
    assertEquals([none.items, none.totalCount], [[], 5]);
    // Past PAGE_SIZE_MAX the page is capped, not refused.
    assertEquals((await list("?limit=100000")).items.length, 5);
  });
  await t.step("status filters the page and the count", async () => {
    await markFailed(h, recorded[1]!.deliveryId);
    await h.sql`UPDATE deliveries SET status = 'succeeded' WHERE id = ${recorded[3]!.deliveryId}`;
    const failed = await list("?status=failed");
    assertEquals([failed.items.map((d) => d.id), failed.totalCount], [
      [recorded[1]!.deliveryId],
      1,
    ]);
    assertEquals(failed.items[0]?.nextAttemptAt, null);
    assertEquals(failed.items[0]?.lastFailureReason, "HTTP 503 from endpoint");
    const pending = await list("?status=pending&limit=2");
    assertEquals(pending.totalCount, 3);
    assertEquals(pending.items.map((d) => d.id), [newestFirst[0], newestFirst[2]]);
    const succeeded = await list("?status=succeeded");
    assertEquals(succeeded.items.map((d) => d.id), [recorded[3]!.deliveryId]);
    assertEquals(succeeded.items[0]?.nextAttemptAt, null);
    assertEquals((await list("?status=retrying")).totalCount, 0);
  });
  await t.step("sortDirection=asc turns the order; filters narrow page and count", async () => {
    const oldestFirst = [...newestFirst].reverse();
    assertEquals((await list("?sortDirection=asc")).items.map((d) => d.id), oldestFirst);
    assertEquals(
      (await list("?sortField=createdAt&sortDirection=desc")).items.map((d) => d.id),
      newestFirst,
    );
    const filters = (f: unknown) => `?filters=${encodeURIComponent(JSON.stringify(f))}`;
    const byEvent = await list(
      filters([{
        field: "eventId",
        op: "in",
        values: [recorded[0]!.event.id, recorded[2]!.event.id],
      }]),
    );
    assertEquals([byEvent.items.map((d) => d.id), byEvent.totalCount], [
      [recorded[2]!.deliveryId, recorded[0]!.deliveryId],
      2,
    ]);
    const failedOrSucceeded = await list(
      filters([{ field: "status", op: "in", values: ["failed", "succeeded"] }]),
    );
    assertEquals(failedOrSucceeded.items.map((d) => d.id), [
      recorded[3]!.deliveryId,
      recorded[1]!.deliveryId,
    ]);
    assertEquals(
      (await list(filters([{ field: "lastHttpStatus", op: "eq", value: 503 }])))
        .items.map((d) => d.id),
      [recorded[1]!.deliveryId],
    );
    assertEquals(
      (await list(filters([{ field: "eventType", op: "eq", value: "quote.updated" }]))).totalCount,
      0,
    );
  });
  await t.step("a bad query is a 400 naming the parameter", async () => {
    const bad: [string, string][] = [
      ["?sortDirection=up", "sortDirection"],
      ["?sortField=status", "sortField"],
      ["?filters=nope", "filters"],
      [
        `?filters=${encodeURIComponent('[{"field":"url","op":"eq","value":"x"}]')}`,
        "filters.0.field",
      ],
      [
        `?filters=${encodeURIComponent('[{"field":"status","op":"eq","value":"sent"}]')}`,
        "filters.0.value",
      ],
      ["?status=delivered", "status"],
      ["?status=", "status"],
      ["?limit=-1", "limit"],
      ["?limit=abc", "limit"],
      ["?limit=1.5", "limit"],
      ["?offset=-1", "offset"],
      ["?limit=1&limit=2", "limit"],
      ["?page=2", "page"],
    ];
    for (const [query, path] of bad) {
      assertValidationError(
        await call(h, me, "GET", `/v1/webhooks/${sub.id}/deliveries${query}`),
        path,
      );
    }
  });
});

Deno.test("a delivery never shows what the endpoint answered in its body", async () => {
  await using h = await webhooksHarness();
  const marker = `response-body-${crypto.randomUUID()}`;
  let status = 500;
  const endpoint = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      await req.text();
      return new Response(`${marker} ${"x".repeat(1000)}`, {
        status,
        headers: { "content-type": "text/plain", "x-marker": marker },
      });
    },
  );
  try {
    const me = newCaller();
    const sub = await subscribeTo(h, me, `http://127.0.0.1:${endpoint.addr.port}/hooks`);
    const { deliveryId } = await recordFor(h, me, sub.id);
    await markFailed(h, deliveryId);
    const retry = `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`;
    const failed = await expect<Delivery>(h, me, 200, "POST", retry);
    assertEquals(failed.data.status, "failed");
    assertEquals(failed.data.lastFailureReason, "HTTP 500 from endpoint");
    status = 200;
    const delivered = await expect<Delivery>(h, me, 200, "POST", retry);
    assertEquals(delivered.data.status, "succeeded");

    const list = await expect<{ items: Delivery[] }>(
      h,
      me,
      200,
      "GET",
      `/v1/webhooks/${sub.id}/deliveries`,
    );
    const everything = JSON.stringify([failed, delivered, list]);
    assertEquals(everything.includes(marker), false, "the response body leaked");
    const [delivery] = list.data.items;
    assertEquals(Object.keys(delivery!).sort(), [
      "attempts",
      "createdAt",
      "eventId",
      "eventType",
      "id",
      "lastFailureReason",
      "lastHttpStatus",
      "nextAttemptAt",
      "status",
      "webhookId",
    ]);
    assertEquals(delivery!.attempts.length, 2);
    for (const attempt of delivery!.attempts) {
      assertEquals(Object.keys(attempt).sort(), [
        "attempt",
        "durationMs",
        "failureReason",
        "httpStatus",
        "startedAt",
        "succeeded",
        "trigger",
      ]);
    }
    // Nor does the database keep it.
    const stored = await h.sql`SELECT * FROM delivery_attempts`;
    assertEquals(JSON.stringify(stored).includes(marker), false);
  } finally {
    await endpoint.shutdown();
  }
});

// ---------------------------------------------------------------------------------------------
// Replay

Deno.test("POST .../deliveries/{id}/retry answers 404 for an unknown delivery, 409 unless failed", async (t) => {
  await using h = await webhooksHarness();
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const me = newCaller();
  const sub = await subscribeTo(h, me, receiver.url);
  const { deliveryId } = await recordFor(h, me, sub.id);
  const retry = (id: string) =>
    call(h, me, "POST", `/v1/webhooks/${sub.id}/deliveries/${id}/retry`);

  await t.step("unknown delivery: 404", async () => {
    const res = await retry(crypto.randomUUID());
    assertEquals([res.status, res.body.error], [404, "not_found"]);
  });
  await t.step("pending: 409 conflict, nothing sent", async () => {
    const res = await retry(deliveryId);
    assertEquals([res.status, res.body.error], [409, "conflict"]);
    assert.match(res.body.message, /is pending; only a failed delivery can be replayed/);
  });
  await t.step("retrying: 409 conflict", async () => {
    await h.sql`UPDATE deliveries SET status = 'retrying' WHERE id = ${deliveryId}`;
    const res = await retry(deliveryId);
    assertEquals([res.status, res.body.error], [409, "conflict"]);
  });
  await t.step("succeeded: 409 conflict", async () => {
    await h.sql`UPDATE deliveries SET status = 'succeeded' WHERE id = ${deliveryId}`;
    const res = await retry(deliveryId);
    assertEquals([res.status, res.body.error], [409, "conflict"]);
    assert.match(res.body.message, /is succeeded/);
  });
  await t.step("a query parameter is refused", async () => {
    await markFailed(h, deliveryId);
    const res = await call(
      h,
      me,
      "POST",
      `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry?force=true`,
    );
    assertValidationError(res, "force");
  });
  assertEquals(receiver.received.length, 0, "no refused replay sent anything");
  const [row] = await h.sql`SELECT attempt_count FROM deliveries WHERE id = ${deliveryId}`;
  assertEquals(row?.attempt_count, 0);
  assertEquals(await count(h, "delivery_attempts"), 0);
});

Deno.test("POST .../deliveries/{id}/retry replays a failed delivery with a manual attempt", async () => {
  await using h = await webhooksHarness();
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const me = newCaller();
  const sub = await subscribeTo(h, me, receiver.url);
  const { event, deliveryId } = await recordFor(h, me, sub.id);
  await markFailed(h, deliveryId);

  const res = await expect<Delivery>(
    h,
    me,
    200,
    "POST",
    `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`,
  );
  assertEquals(res.message, "Delivered");
  const delivery = res.data;
  assertEquals(delivery.id, deliveryId);
  assertEquals(delivery.status, "succeeded");
  assertEquals(delivery.nextAttemptAt, null);
  assertEquals(delivery.lastHttpStatus, 204);
  assertEquals(delivery.lastFailureReason, null);
  assertEquals(delivery.attempts.length, 1);
  const [attempt] = delivery.attempts;
  assertEquals(
    { ...attempt!, startedAt: "", durationMs: 0 },
    {
      attempt: 1,
      startedAt: "",
      durationMs: 0,
      httpStatus: 204,
      succeeded: true,
      failureReason: null,
      trigger: "manual",
    },
  );
  assertEquals(receiver.received.length, 1);
  const [request] = receiver.received;
  assertEquals(request!.headers.get("webhook-id"), event.id);
  assertEquals((JSON.parse(request!.body) as { type: string }).type, "quote.created");

  // Once delivered it cannot be replayed again.
  const again = await call(h, me, "POST", `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`);
  assertEquals(again.status, 409);
  assertEquals(receiver.received.length, 1);
});

Deno.test("POST .../deliveries/{id}/retry run twice at once sends the delivery once", async () => {
  await using h = await webhooksHarness();
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const me = newCaller();
  const sub = await subscribeTo(h, me, receiver.url);
  const { deliveryId } = await recordFor(h, me, sub.id);
  await markFailed(h, deliveryId);
  const path = `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`;
  const answers = await Promise.all([call(h, me, "POST", path), call(h, me, "POST", path)]);
  assertEquals(answers.map((a) => a.status).sort(), [200, 409], JSON.stringify(answers));
  assertEquals(receiver.received.length, 1);
  const [row] = await h.sql`SELECT status, attempt_count FROM deliveries WHERE id = ${deliveryId}`;
  assertEquals({ ...row }, { status: "succeeded", attempt_count: 1 });
});

Deno.test("POST .../deliveries/{id}/retry against a closed port stays failed: connection refused", async () => {
  await using h = await webhooksHarness();
  const port = await closedPort();
  const me = newCaller();
  const sub = await subscribeTo(h, me, `http://127.0.0.1:${port}/hooks`);
  const { deliveryId } = await recordFor(h, me, sub.id);
  await markFailed(h, deliveryId);
  const path = `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`;

  for (const round of [1, 2]) {
    const res = await expect<Delivery>(h, me, 200, "POST", path);
    assertEquals(res.message, "Replayed; the endpoint failed again");
    assertEquals(res.status, false, "the envelope's status is the replay's own outcome");
    const delivery = res.data;
    assertEquals(delivery.status, "failed", `round ${round}`);
    assertEquals(delivery.nextAttemptAt, null, "a manual replay does not restart the schedule");
    assertEquals(delivery.lastFailureReason, "connection refused");
    assertEquals(delivery.lastHttpStatus, null);
    assertEquals(delivery.attempts.map((a) => a.attempt), round === 1 ? [1] : [1, 2]);
    const last = delivery.attempts.at(-1)!;
    assertEquals([last.trigger, last.succeeded, last.httpStatus, last.failureReason], [
      "manual",
      false,
      null,
      "connection refused",
    ]);
  }
  const [row] = await h
    .sql`SELECT status, next_attempt_at FROM deliveries WHERE id = ${deliveryId}`;
  assertEquals({ ...row }, { status: "failed", next_attempt_at: null });
});

Deno.test("POST .../deliveries/{id}/retry refuses a delivery whose credential was revoked", async () => {
  await using h = await webhooksHarness();
  await using receiver: WebhookReceiver = await startWebhookReceiver();
  const me = newCaller();
  const sub = await subscribeTo(h, me, receiver.url);
  const { deliveryId } = await recordFor(h, me, sub.id);
  assertEquals(
    await revokeCredential(h.deps.sql, {
      organizationId: me.organizationId,
      apiKeyId: me.credentialId,
    }),
    1,
  );
  const shown = await expect<Subscription>(h, me, 200, "GET", `/v1/webhooks/${sub.id}`);
  assertEquals(shown.data.active, false);
  const listed = await expect<{ items: Delivery[] }>(
    h,
    me,
    200,
    "GET",
    `/v1/webhooks/${sub.id}/deliveries`,
  );
  assertEquals(listed.data.items[0]?.status, "failed");
  assertEquals(listed.data.items[0]?.lastFailureReason, "credential revoked");
  const res = await call(h, me, "POST", `/v1/webhooks/${sub.id}/deliveries/${deliveryId}/retry`);
  assertEquals([res.status, res.body.error], [409, "conflict"]);
  assert.match(res.body.message, /credential is revoked/);
  assertEquals(receiver.received.length, 0);
});

// ---------------------------------------------------------------------------------------------
// Event log and catalogue

const costlyQuote = () => ({
  id: crypto.randomUUID(),
  reference: "PO-1",
  buyPrice: "1.00",
  groups: [{
    name: "Front",
    setupCost: "25.00",
    lines: [{
      description: "Tee",
      unitCost: "3.10",
      variants: [{
        size: "L",
        extraCost: "0.50",
        buyPrice: "2.00",
        markupType: "percentage",
        markupValue: 33,
        quantity: 4,
      }],
    }],
    decorations: [{ extraCost: null, nested: { deeper: [{ unitCost: 1 }] } }],
  }],
});

const withoutCostsOf = (quote: ReturnType<typeof costlyQuote>) => ({
  id: quote.id,
  reference: "PO-1",
  groups: [{
    name: "Front",
    lines: [{ description: "Tee", variants: [{ size: "L", quantity: 4 }] }],
    decorations: [{ nested: { deeper: [{}] } }],
  }],
});

Deno.test("GET /v1/event-log lists in recording order and pages with after and limit", async (t) => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const other = newCaller();
  // Recorded newest-occurred first: the log follows recording, not occurredAt.
  const mine: BusEvent[] = [];
  for (let i = 0; i < 5; i++) {
    const event = busEvent(
      me.organizationId,
      i % 2 === 0 ? "quote.created" : "quote_line.updated",
      { id: crypto.randomUUID() },
      new Date(Date.UTC(2030, 0, 10 - i)),
    );
    mine.push(event);
    await recordEvents(h.deps.sql, [event, busEvent(other.organizationId, "quote.created")]);
  }
  // A batch is recorded in its own order too.
  const batch = [
    busEvent(me.organizationId, "quote.deleted"),
    busEvent(me.organizationId, "quote.updated"),
  ];
  await recordEvents(h.deps.sql, batch);
  mine.push(...batch);
  const ids = mine.map((e) => e.id);
  const log = async (query = "", caller: Caller = me) =>
    (await expect<LogPage>(h, caller, 200, "GET", `/v1/event-log${query}`)).data;

  await t.step("everything, in recording order, only this organisation's", async () => {
    const page = await log();
    assertEquals(page.items.map((e) => e.id), ids);
    assertEquals(page.hasMore, false);
    assertEquals(page.lastEventId, ids.at(-1));
    const first = page.items[0]!;
    assertEquals(first, {
      id: mine[0]!.id,
      type: "quote.created",
      occurredAt: mine[0]!.occurredAt,
      aggregateId: mine[0]!.aggregateId,
      data: mine[0]!.data,
    });
  });
  await t.step("after and limit walk the log without gaps or repeats", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const page: LogPage = await log(`?limit=3${after ? `&after=${after}` : ""}`);
      seen.push(...page.items.map((e) => e.id));
      assertEquals(page.hasMore, seen.length < ids.length);
      if (!page.hasMore) break;
      after = page.lastEventId;
    }
    assertEquals(seen, ids);
    const end = await log(`?after=${ids.at(-1)}`);
    assertEquals(end, { items: [], lastEventId: ids.at(-1), hasMore: false });
  });
  await t.step("the other organisation sees only its own", async () => {
    const page = await log("", other);
    assertEquals(page.items.length, 5);
    assert(page.items.every((e) => !ids.includes(e.id)));
  });
  await t.step("after an unknown event or another organisation's is 400", async () => {
    assertValidationError(
      await call(h, me, "GET", `/v1/event-log?after=${crypto.randomUUID()}`),
      "after",
    );
    const theirs = (await log("", other)).items[0]!.id;
    const res = await call(h, me, "GET", `/v1/event-log?after=${theirs}`);
    assertValidationError(res, "after");
    assert.match(res.body.message, /is not in this organisation's log/);
  });
  await t.step("after an event older than the log keeps says so", async () => {
    // A UUIDv7 from 40 days ago: its time says it has been purged, not that it is foreign.
    const ms = (Date.now() - 40 * 86_400_000).toString(16).padStart(12, "0");
    const aged = `${ms.slice(0, 8)}-${ms.slice(8)}-7abc-8def-0123456789ab`;
    const res = await call(h, me, "GET", `/v1/event-log?after=${aged}`);
    assertValidationError(res, "after");
    assert.match(res.body.message, /older than the 30 days the log keeps/);
  });
  await t.step("a bad query is 400 naming the parameter", async () => {
    const bad: [string, string][] = [
      ["?limit=-1", "limit"],
      ["?limit=0", "limit"],
      ["?limit=abc", "limit"],
      ["?limit=", "limit"],
      ["?after=not-a-uuid", "after"],
      ["?after=", "after"],
      ["?since=0", "since"],
    ];
    for (const [query, path] of bad) {
      assertValidationError(await call(h, me, "GET", `/v1/event-log${query}`), path);
    }
  });
});

Deno.test("GET /v1/event-log shows only the event areas the credential may read", async () => {
  await using h = await webhooksHarness();
  const org = crypto.randomUUID();
  const first = busEvent(org, "quote.created");
  await recordEvents(h.deps.sql, [
    first,
    busEvent(org, "tax_rate.updated"),
    busEvent(org, "quote.deleted"),
  ]);
  const blind = { ...newCaller(org), scopes: ["webhooks.read", "webhooks.write", "costs.read"] };
  const page = await expect<LogPage>(h, blind, 200, "GET", "/v1/event-log");
  assertEquals(page.data, { items: [], lastEventId: null, hasMore: false });
  // An event it cannot read is still a valid place to continue from, and shows nothing.
  const after = await expect<LogPage>(h, blind, 200, "GET", `/v1/event-log?after=${first.id}`);
  assertEquals(after.data.items, []);
  const reader = { ...newCaller(org), scopes: ["quotes.read"] };
  const seen = await expect<LogPage>(h, reader, 200, "GET", "/v1/event-log");
  assertEquals(seen.data.items.length, 3);
});

Deno.test("GET /v1/event-log strips cost fields at any depth without costs.read", async () => {
  await using h = await webhooksHarness();
  const org = crypto.randomUUID();
  const quote = costlyQuote();
  const group = { id: crypto.randomUUID(), unitCost: "9", lines: [{ setupCost: "1" }] };
  await recordEvents(h.deps.sql, [
    busEvent(org, "quote.created", quote),
    busEvent(org, "quote_group.updated", group),
    busEvent(org, "quote.updated", [{ buyPrice: "1", keep: true }]),
  ]);
  const withCosts = { ...newCaller(org), scopes: ["quotes.read", "costs.read"] };
  const noCosts = { ...newCaller(org), scopes: ["quotes.read"] };

  const full = await expect<LogPage>(h, withCosts, 200, "GET", "/v1/event-log");
  assertEquals(full.data.items.map((e) => e.data), [quote, group, [{ buyPrice: "1", keep: true }]]);

  const stripped = await expect<LogPage>(h, noCosts, 200, "GET", "/v1/event-log");
  assertEquals(stripped.data.items.map((e) => e.data), [
    withoutCostsOf(quote),
    { id: group.id, lines: [{}] },
    [{ keep: true }],
  ]);
  const text = JSON.stringify(stripped);
  for (const field of ["buyPrice", "unitCost", "setupCost", "extraCost"]) {
    assertEquals(text.includes(field), false, `${field} leaked`);
  }
  // Stripping is on the way out: the log itself keeps the costs.
  const [row] = await h.sql`SELECT data FROM events WHERE type = 'quote.created'`;
  assertEquals(row?.data, quote);
});

Deno.test("GET /v1/reference/events lists the catalogue's public names, never api_key.revoked", async () => {
  await using h = await webhooksHarness();
  const me = { ...newCaller(), scopes: [] };
  const res = await expect<{ events: string[]; note: string }>(
    h,
    me,
    200,
    "GET",
    "/v1/reference/events",
  );
  assertEquals(res.data.events, [...PUBLIC_EVENT_TYPES]);
  assertEquals(
    res.data.events,
    EVENT_DEFINITIONS.filter((d) => d.readScope !== null).map((d) => d.type),
  );
  assert(!res.data.events.includes("api_key.revoked"));
  assert(res.data.events.includes("quote.created"));
  assert(res.data.note.length > 0);
  assertValidationError(await call(h, me, "GET", "/v1/reference/events?all=true"), "all");
});

// ---------------------------------------------------------------------------------------------
// GET /v1/webhooks (list), PATCH /v1/webhooks/{id} and query strictness

Deno.test("GET /v1/webhooks pages, sorts and filters this credential's subscriptions", async (t) => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const subs = [
    await subscribeTo(h, me, `${PUBLIC}/c`, "quote.created"),
    await subscribeTo(h, me, `${PUBLIC}/a`, "quote.updated"),
    await subscribeTo(h, me, `${PUBLIC}/b`, "quote.created"),
  ];
  await subscribeTo(h, newCaller(me.organizationId), `${PUBLIC}/z`, "quote.created");
  const ids = subs.map((s) => s.id);
  const list = async (query: string) =>
    (await expect<SubscriptionPage>(h, me, 200, "GET", `/v1/webhooks${query}`)).data;
  const filters = (f: unknown) => `filters=${encodeURIComponent(JSON.stringify(f))}`;

  await t.step("limit and offset page, totalCount counts them all", async () => {
    const shown = subs.map(({ secret: _secret, ...rest }) => rest);
    assertEquals(await list("?limit=2"), {
      items: shown.slice(0, 2),
      totalCount: 3,
      hasMore: true,
    });
    assertEquals((await list("?limit=2&offset=2")).items.map((s) => s.id), ids.slice(2));
    assertEquals(await list("?limit=0"), { items: [], totalCount: 3, hasMore: true });
    assertEquals((await list("?limit=100000")).items.length, 3);
  });
  await t.step("sortField and sortDirection, ties broken by id", async () => {
    assertEquals((await list("?sortDirection=desc")).items.map((s) => s.id), [...ids].reverse());
    assertEquals((await list("?sortField=url")).items.map((s) => s.url), [
      `${PUBLIC}/a`,
      `${PUBLIC}/b`,
      `${PUBLIC}/c`,
    ]);
    assertEquals(
      (await list("?sortField=event&sortDirection=desc")).items.map((s) => s.id),
      [ids[1], ids[2], ids[0]],
    );
  });
  await t.step("event and filters narrow the page and the count", async () => {
    assertEquals((await list("?event=quote.created")).items.map((s) => s.id), [ids[0], ids[2]]);
    const byUrl = await list(`?${filters([{ field: "url", op: "contains", value: "/b" }])}`);
    assertEquals([byUrl.items.map((s) => s.id), byUrl.totalCount], [[ids[2]], 1]);
    await revokeCredential(h.deps.sql, {
      organizationId: me.organizationId,
      apiKeyId: me.credentialId,
    });
    assertEquals(
      (await list(`?${filters([{ field: "active", op: "eq", value: true }])}`)).totalCount,
      0,
    );
    assertEquals(
      (await list(`?${filters([{ field: "active", op: "eq", value: false }])}`)).totalCount,
      3,
    );
  });
  await t.step("a bad query is a 400 naming the parameter", async () => {
    const bad: [string, string][] = [
      ["?limit=-1", "limit"],
      ["?offset=x", "offset"],
      ["?sortField=secret", "sortField"],
      ["?sortDirection=sideways", "sortDirection"],
      ["?filters=[", "filters"],
      [`?${filters([{ field: "secret", op: "eq", value: "x" }])}`, "filters.0.field"],
      ["?page=1", "page"],
    ];
    for (const [query, path] of bad) {
      assertValidationError(await call(h, me, "GET", `/v1/webhooks${query}`), path);
    }
  });
});

Deno.test("PATCH /v1/webhooks/{id} moves a subscription to another URL and keeps its secret", async (t) => {
  await using h = await webhooksHarness({ WEBHOOK_ALLOW_PRIVATE_TARGETS: false });
  const me = newCaller();
  const sub = await subscribeTo(h, me, `${PUBLIC}/old`);
  const { deliveryId } = await recordFor(h, me, sub.id);
  const path = `/v1/webhooks/${sub.id}`;

  await t.step(
    "the URL changes, normalised; secret, history and queued deliveries stay",
    async () => {
      const res = await expect<Subscription>(h, me, 200, "PATCH", path, {
        url: `${PUBLIC.toUpperCase()}/new#fragment`,
      });
      const { secret: _secret, ...shown } = sub;
      assertEquals(res.data, { ...shown, url: `${PUBLIC}/new` });
      assertEquals(JSON.stringify(res).includes("whsec_"), false, "the secret is not shown again");
      const box = await createSecretBox(h.deps.config.WEBHOOK_SECRETS_KEY);
      assertEquals(
        await withOrganization(me.organizationId, () => signingSecrets(h.deps.sql, box, sub.id)),
        [sub.secret],
      );
      const [queued] = await h.sql<{ url: string }[]>`
      SELECT s.url FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ${deliveryId}`;
      assertEquals(queued?.url, `${PUBLIC}/new`, "the queued delivery goes to the new URL");
    },
  );
  await t.step("a URL this credential already uses for the event is 409", async () => {
    const twin = await subscribeTo(h, me, `${PUBLIC}/twin`);
    const res = await call(h, me, "PATCH", path, { url: `${PUBLIC}/twin` });
    assertEquals(res.status, 409, JSON.stringify(res.body));
    assertEquals(res.body.error, "conflict");
    assert(res.body.message.includes(twin.id));
    assertEquals((await expect<Subscription>(h, me, 200, "GET", path)).data.url, `${PUBLIC}/new`);
  });
  await t.step("refused: private targets, bad bodies, unknown or foreign ids", async () => {
    assertValidationError(await call(h, me, "PATCH", path, { url: "http://127.0.0.1/x" }), "url");
    assertValidationError(await call(h, me, "PATCH", path, { url: "ftp://93.184.216.34/" }), "url");
    assertValidationError(await call(h, me, "PATCH", path, {}), "url");
    assertValidationError(
      await call(h, me, "PATCH", path, { url: `${PUBLIC}/x`, event: "quote.updated" }),
      "event",
    );
    assertValidationError(await call(h, me, "PATCH", `${path}?x=1`, { url: `${PUBLIC}/x` }), "x");
    assertValidationError(
      await call(h, me, "PATCH", "/v1/webhooks/nope", { url: `${PUBLIC}/x` }),
      "webhookId",
    );
    const unknown = await call(h, me, "PATCH", `/v1/webhooks/${crypto.randomUUID()}`, {
      url: `${PUBLIC}/x`,
    });
    assertEquals([unknown.status, unknown.body.error], [404, "not_found"]);
    const colleague = newCaller(me.organizationId);
    const foreign = await call(h, colleague, "PATCH", path, { url: `${PUBLIC}/x` });
    assertEquals(foreign.status, 404);
    assertEquals((await expect<Subscription>(h, me, 200, "GET", path)).data.url, `${PUBLIC}/new`);
  });
});

Deno.test("a URL within 2048 characters as typed but longer once percent-encoded is 400", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const url = `${PUBLIC}/${"é".repeat(1000)}`;
  assert(url.length <= 2048);
  const res = await call(h, me, "POST", "/v1/webhooks", { url, event: "quote.created" });
  assertValidationError(res, "url");
  assert.match(res.body.message, /once percent-encoded/);
  assertEquals(await count(h, "subscriptions"), 0);
});

Deno.test("every webhook route refuses unknown query parameters, and checks them before lookups", async () => {
  await using h = await webhooksHarness();
  const me = newCaller();
  const sub = await subscribeTo(h, me, `${PUBLIC}/a`);
  const unknownId = crypto.randomUUID();
  const cases: [string, string, unknown, string][] = [
    ["POST", "/v1/webhooks?dryRun=1", { url: `${PUBLIC}/q`, event: "quote.created" }, "dryRun"],
    ["DELETE", `/v1/webhooks/${sub.id}?force=1`, undefined, "force"],
    ["GET", `/v1/webhooks/${sub.id}?expand=secret`, undefined, "expand"],
    ["POST", `/v1/webhooks/${sub.id}/rotate-secret?now=1`, undefined, "now"],
    // On an unknown subscription the bad query still comes first: 400, not 404.
    ["GET", `/v1/webhooks/${unknownId}/deliveries?limit=abc`, undefined, "limit"],
    ["POST", `/v1/webhooks/${unknownId}/deliveries/${unknownId}/retry?x=1`, undefined, "x"],
  ];
  for (const [method, path, body, param] of cases) {
    assertValidationError(await call(h, me, method, path, body), param);
  }
  assertEquals(await count(h, "subscriptions"), 1, "the refused POST stored nothing");
  await expect(h, me, 200, "GET", `/v1/webhooks/${sub.id}`);
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Envelope, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

const config = { PAGE_SIZE_MAX: 5 };

interface QuoteData {
  id: string;
  quoteRef: string;
  createdAt: string;
  status: string;
  reference: string | null;
  salesRepEmail: string | null;
  groups: { id: string; name: string; sortOrder: number }[];
}

async function harness(): Promise<ServiceHarness<Config>> {
  return await serviceHarness(quotesService, { config });
}

async function json<T = unknown>(res: Response): Promise<Envelope<T>> {
  return await res.json() as Envelope<T>;
}

async function createQuote(
  h: ServiceHarness<Config>,
  body: Record<string, unknown>,
  organizationId?: string,
): Promise<QuoteData> {
  const res = await h.request("POST", "/v1/quotes", {
    body,
    ...(organizationId ? { organizationId } : {}),
  });
  assertEquals(res.status, 201);
  return (await json<QuoteData>(res)).data;
}

Deno.test("POST /v1/quotes creates a draft with a per-organisation quote number", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const first = await createQuote(h, { reference: "PO-7" }, org);
  const second = await createQuote(h, {}, org);
  const otherOrg = await createQuote(h, {}, crypto.randomUUID());
  assertEquals(first.status, "draft");
  assertEquals(first.reference, "PO-7");
  assertEquals([first.quoteRef, second.quoteRef, otherOrg.quoteRef], [
    "Q-00001",
    "Q-00002",
    "Q-00001",
  ]);
  const [event] = await h
    .sql`SELECT type, aggregate_id FROM outbox WHERE aggregate_id = ${first.id}`;
  assertEquals(event?.type, "quote.created");
});

Deno.test("POST /v1/quotes hands out distinct quote numbers to concurrent creates", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quotes = await Promise.all(Array.from({ length: 20 }, () => createQuote(h, {}, org)));
  // No gaps, no repeats, and numbered in the order the quotes were created.
  const byNumber = [...quotes].sort((a, b) => a.quoteRef.localeCompare(b.quoteRef));
  assertEquals(
    byNumber.map((q) => q.quoteRef),
    Array.from({ length: 20 }, (_, i) => `Q-${String(i + 1).padStart(5, "0")}`),
  );
  const byCreation = [...quotes].sort((a, b) =>
    a.createdAt.localeCompare(b.createdAt) || a.quoteRef.localeCompare(b.quoteRef)
  );
  assertEquals(byCreation.map((q) => q.quoteRef), byNumber.map((q) => q.quoteRef));
  // Each create committed its event with it, carrying the quote as a costs.read caller sees it.
  const events = await h.sql<{ aggregate_id: string; payload: unknown }[]>`
    SELECT aggregate_id, payload FROM outbox WHERE type = 'quote.created'
      AND organization_id = ${org}`;
  assertEquals(events.length, 20);
  for (const quote of quotes) {
    assertEquals(events.find((e) => e.aggregate_id === quote.id)?.payload, quote);
  }
});

Deno.test("POST /v1/quotes numbers past 99999 with more digits", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  await createQuote(h, {}, org);
  await h.sql`UPDATE quote_ref_counters SET last_number = 99998 WHERE organization_id = ${org}`;
  const refs = [];
  for (let i = 0; i < 3; i++) refs.push((await createQuote(h, {}, org)).quoteRef);
  assertEquals(refs, ["Q-99999", "Q-100000", "Q-100001"]);
});

Deno.test("POST /v1/quotes naming an unknown tax rate writes nothing, not even a number", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const res = await h.request("POST", "/v1/quotes", {
    body: { taxRateId: crypto.randomUUID() },
    organizationId: org,
  });
  assertEquals(res.status, 400);
  assertEquals((await json(res)).error, "validation_error");
  const [counted] = await h.sql<{ quotes: number; counters: number; events: number }[]>`
    SELECT (SELECT count(*)::int FROM quotes WHERE organization_id = ${org}) AS quotes,
      (SELECT count(*)::int FROM quote_ref_counters WHERE organization_id = ${org}) AS counters,
      (SELECT count(*)::int FROM outbox WHERE organization_id = ${org}) AS events`;
  assertEquals(counted, { quotes: 0, counters: 0, events: 0 });
  assertEquals((await createQuote(h, {}, org)).quoteRef, "Q-00001");
});

Deno.test("POST /v1/quotes refuses bad input with a 400 envelope and writes nothing", async (t) => {
  await using h = await harness();
  const cases: [string, unknown, string, string?][] = [
    ["malformed JSON", "{nope", "invalid_json"],
    ["an unknown field", { colour: "red" }, "validation_error", "colour"],
    ["a wrong type", { reference: 42 }, "validation_error", "reference"],
    ["an impossible date", { deliveryDate: "2026-02-30" }, "validation_error", "deliveryDate"],
    ["a bad email", { salesRepEmail: "nope" }, "validation_error", "salesRepEmail"],
    ["a non-UUID client", { clientId: "client-1" }, "validation_error", "clientId"],
    ["an oversized reference", { reference: "x".repeat(201) }, "validation_error", "reference"],
    ["an empty reference", { reference: "   " }, "validation_error", "reference"],
    ["an array body", [], "validation_error"],
  ];
  for (const [name, body, code, path] of cases) {
    await t.step(name, async () => {
      const res = await h.request("POST", "/v1/quotes", { body });
      assertEquals(res.status, 400);
      const envelope = await json(res);
      assertEquals(envelope.error, code);
      assertEquals(envelope.status, false);
      if (path) assert(envelope.details?.some((d) => d.path === path), JSON.stringify(envelope));
    });
  }
  const rows = await h.sql`SELECT id FROM quotes`;
  assertEquals(rows.length, 0);
});

Deno.test("GET /v1/quotes/{quoteId} answers 404 for another organisation's quote", async () => {
  await using h = await harness();
  const owner = crypto.randomUUID();
  const quote = await createQuote(h, {}, owner);
  const mine = await h.request("GET", `/v1/quotes/${quote.id}`, { organizationId: owner });
  assertEquals(mine.status, 200);
  assertEquals((await json<QuoteData>(mine)).data.id, quote.id);
  const theirs = await h.request("GET", `/v1/quotes/${quote.id}`, {
    organizationId: crypto.randomUUID(),
  });
  assertEquals(theirs.status, 404);
  assertEquals((await json(theirs)).error, "not_found");
  const missing = await h.request("GET", `/v1/quotes/${crypto.randomUUID()}`, {
    organizationId: owner,
  });
  assertEquals(missing.status, 404);
  const malformed = await h.request("GET", "/v1/quotes/not-a-uuid", { organizationId: owner });
  assertEquals(malformed.status, 400);
});

Deno.test("writes refuse query parameters they do not declare, and change nothing", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quote = await createQuote(h, { reference: "Keep" }, org);
  for (
    const [method, path, body] of [
      ["DELETE", `/v1/quotes/${quote.id}?x=1`, undefined],
      ["PATCH", `/v1/quotes/${quote.id}?dryRun=true`, { reference: "Changed" }],
      ["POST", "/v1/quotes?x=1", {}],
      ["POST", `/v1/quotes/${quote.id}/status?notify=1`, { status: "sent" }],
    ] as const
  ) {
    const res = await h.request(method, path, { organizationId: org, body });
    assertEquals(res.status, 400, `${method} ${path}`);
    const refused = await json(res);
    assertEquals(refused.error, "validation_error");
    assertEquals(
      refused.details?.[0]?.path,
      new URL(path, "http://x").searchParams.keys().next().value,
    );
  }
  const after = await h.request("GET", `/v1/quotes/${quote.id}`, { organizationId: org });
  const kept = (await json<QuoteData>(after)).data;
  assertEquals([kept.reference, kept.status], ["Keep", "draft"]);
  const list = await h.request("GET", "/v1/quotes", { organizationId: org });
  assertEquals((await json<{ totalCount: number }>(list)).data.totalCount, 1);
});

Deno.test("GET /v1/quotes pages with limit and offset, caps the limit and counts every match", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  for (let i = 0; i < 7; i++) await createQuote(h, {}, org);
  await createQuote(h, {}, crypto.randomUUID());
  const page = async (query: string): Promise<{ items: QuoteData[]; totalCount: number }> => {
    const res = await h.request("GET", `/v1/quotes${query}`, { organizationId: org });
    assertEquals(res.status, 200);
    return (await json<{ items: QuoteData[]; totalCount: number }>(res)).data;
  };
  const capped = await page("?limit=1000");
  assertEquals(capped.items.length, 5, "PAGE_SIZE_MAX is 5 in this test");
  assertEquals(capped.totalCount, 7);
  assertEquals((await page("")).items.length, 5, "an omitted limit means the cap");
  const zero = await page("?limit=0");
  assertEquals([zero.items.length, zero.totalCount], [0, 7]);
  const firstPage = await page("?limit=3&offset=0&sortField=quoteRef&sortDirection=asc");
  const secondPage = await page("?limit=3&offset=3&sortField=quoteRef&sortDirection=asc");
  assertEquals(
    [...firstPage.items, ...secondPage.items].map((q) => q.quoteRef),
    ["Q-00001", "Q-00002", "Q-00003", "Q-00004", "Q-00005", "Q-00006"],
  );
  const past = await page("?offset=100");
  assertEquals([past.items.length, past.totalCount], [0, 7]);
});

Deno.test("GET /v1/quotes filters by status, client and search", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const client = crypto.randomUUID();
  const a = await createQuote(h, { clientId: client, reference: "Uniforms 50% off" }, org);
  const b = await createQuote(h, { notes: "Rush job for the fair" }, org);
  await createQuote(h, { reference: "Other" }, org);
  const ids = async (query: string): Promise<string[]> => {
    const res = await h.request("GET", `/v1/quotes${query}`, { organizationId: org });
    assertEquals(res.status, 200);
    return (await json<{ items: QuoteData[] }>(res)).data.items.map((q) => q.id).sort();
  };
  assertEquals(await ids(`?clientId=${client}`), [a.id]);
  assertEquals(await ids("?search=rush"), [b.id]);
  assertEquals(await ids("?search=50%25"), [a.id], "LIKE wildcards in a search are literal");
  assertEquals(await ids(`?search=${b.quoteRef}`), [b.id]);
  assertEquals((await ids("?status=draft")).length, 3);
  assertEquals(await ids("?status=approved"), []);
});

Deno.test("GET /v1/quotes refuses invalid parameters and names them", async (t) => {
  await using h = await harness();
  for (
    const [query, path] of [
      ["?limit=-1", "limit"],
      ["?limit=abc", "limit"],
      ["?offset=1.5", "offset"],
      ["?sortField=password", "sortField"],
      ["?sortDirection=up", "sortDirection"],
      ["?status=paid", "status"],
      ["?clientId=42", "clientId"],
      ["?colour=red", "colour"],
      ["?limit=1&limit=2", "limit"],
    ]
  ) {
    await t.step(query!, async () => {
      const res = await h.request("GET", `/v1/quotes${query}`);
      assertEquals(res.status, 400);
      const envelope = await json(res);
      assertEquals(envelope.error, "validation_error");
      assert(envelope.details?.some((d) => d.path === path), JSON.stringify(envelope));
    });
  }
});

Deno.test("GET /v1/quotes sorts stably, with the id breaking ties", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  for (let i = 0; i < 6; i++) await createQuote(h, { reference: i % 2 ? "same" : "also" }, org);
  const order = async (dir: string): Promise<string[]> => {
    const res = await h.request(
      "GET",
      `/v1/quotes?sortField=status&sortDirection=${dir}&limit=5`,
      { organizationId: org },
    );
    return (await json<{ items: QuoteData[] }>(res)).data.items.map((q) => q.id);
  };
  const asc = await order("asc");
  assertEquals(asc, await order("asc"), "same request, same order");
  assertEquals(asc, [...asc].sort(), "equal statuses fall back to id order");
});

Deno.test("GET /v1/quotes/facets lists the distinct sales reps of this organisation only", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  await createQuote(h, { salesRepEmail: "zoe@shop.test" }, org);
  await createQuote(h, { salesRepEmail: "amy@shop.test" }, org);
  await createQuote(h, { salesRepEmail: "amy@shop.test" }, org);
  await createQuote(h, {}, org);
  await createQuote(h, { salesRepEmail: "spy@other.test" }, crypto.randomUUID());
  const res = await h.request("GET", "/v1/quotes/facets", { organizationId: org });
  assertEquals(res.status, 200);
  assertEquals((await json(res)).data, { salesReps: ["amy@shop.test", "zoe@shop.test"] });
});

Deno.test("POST /v1/quotes/{quoteId}/groups appends, inserts and shifts, and returns the group", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quote = await createQuote(h, {}, org);
  const add = async (body: unknown): Promise<Response> =>
    await h.request("POST", `/v1/quotes/${quote.id}/groups`, { body, organizationId: org });
  const first = await add({ name: "Front of house" });
  assertEquals(first.status, 201);
  const group = (await json<Record<string, unknown>>(first)).data;
  assertEquals(group.sortOrder, 1);
  assertEquals(group.quoteId, quote.id);
  assertEquals(group.totalQuantity, 0);
  assertEquals(group.rollUpDecoration, false);
  assertEquals(group.lines, []);
  assertEquals(group.decorations, []);
  await add({ name: "Kitchen" });
  await add({ name: "Bar", sortOrder: 1 });
  await add({ name: "Far away", sortOrder: 99 });
  const res = await h.request("GET", `/v1/quotes/${quote.id}`, { organizationId: org });
  const groups = (await json<QuoteData>(res)).data.groups;
  assertEquals(groups.map((g) => [g.name, g.sortOrder]), [
    ["Bar", 1],
    ["Front of house", 2],
    ["Kitchen", 3],
    ["Far away", 4],
  ]);
  const events = await h.sql`SELECT type FROM outbox WHERE type = 'quote_group.created'`;
  assertEquals(events.length, 4);
});

Deno.test("POST /v1/quotes/{quoteId}/groups refuses bad input and other organisations' quotes", async (t) => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quote = await createQuote(h, {}, org);
  const cases: [string, string, unknown, number, string][] = [
    ["a missing name", quote.id, {}, 400, "validation_error"],
    ["an empty name", quote.id, { name: " " }, 400, "validation_error"],
    ["a negative sortOrder", quote.id, { name: "A", sortOrder: -1 }, 400, "validation_error"],
    ["a fractional sortOrder", quote.id, { name: "A", sortOrder: 1.5 }, 400, "validation_error"],
    ["an unknown field", quote.id, { name: "A", lines: [] }, 400, "validation_error"],
    ["malformed JSON", quote.id, "{", 400, "invalid_json"],
    ["an unknown quote", crypto.randomUUID(), { name: "A" }, 404, "not_found"],
    ["a malformed quote id", "nope", { name: "A" }, 400, "validation_error"],
  ];
  for (const [name, id, body, status, code] of cases) {
    await t.step(name, async () => {
      const res = await h.request("POST", `/v1/quotes/${id}/groups`, { body, organizationId: org });
      assertEquals(res.status, status);
      assertEquals((await json(res)).error, code);
    });
  }
  await t.step("another organisation's quote", async () => {
    const res = await h.request("POST", `/v1/quotes/${quote.id}/groups`, {
      body: { name: "Intruder" },
      organizationId: crypto.randomUUID(),
    });
    assertEquals(res.status, 404);
  });
  const groups = await h.sql`SELECT id FROM quote_groups`;
  assertEquals(groups.length, 0);
});

Deno.test("quotes routes refuse a caller without the scope, and requests without a valid context", async () => {
  await using h = await harness();
  const readOnly = await h.request("POST", "/v1/quotes", { body: {}, scopes: ["quotes.read"] });
  assertEquals(readOnly.status, 403);
  const envelope = await json(readOnly);
  assertEquals(envelope.error, "insufficient_scope");
  assert(envelope.message.includes("quotes.write"));
  const unsigned = await h.app.request("/v1/quotes");
  assertEquals(unsigned.status, 401);
  assertEquals((await json(unsigned)).error, "unauthenticated");
});

Deno.test("DELETE /v1/quote-groups/{id} removes the group and closes the gap in the order", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quote = await createQuote(h, {}, org);
  const groups: string[] = [];
  for (const name of ["A", "B", "C"]) {
    const res = await h.request("POST", `/v1/quotes/${quote.id}/groups`, {
      body: { name },
      organizationId: org,
    });
    assertEquals(res.status, 201);
    groups.push((await json<{ id: string }>(res)).data.id);
  }
  const removed = await h.request("DELETE", `/v1/quote-groups/${groups[1]}`, {
    organizationId: org,
  });
  assertEquals(removed.status, 200, JSON.stringify(await removed.clone().json()));
  const after = await json<QuoteData>(
    await h.request("GET", `/v1/quotes/${quote.id}`, { organizationId: org }),
  );
  assertEquals(after.data.groups.map((g) => [g.name, g.sortOrder]), [["A", 1], ["C", 2]]);
  const again = await h.request("DELETE", `/v1/quote-groups/${groups[1]}`, {
    organizationId: org,
  });
  assertEquals(again.status, 404);
  const [event] = await h.sql<{ payload: { id: string; quoteId: string } }[]>`
    SELECT payload FROM outbox WHERE type = 'quote_group.deleted'`;
  assertEquals(event?.payload, { id: groups[1], quoteId: quote.id });
});

Deno.test("a quote reads the same, byte for byte, whichever operation answered it", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const dataText = async (res: Response): Promise<string> => {
    const text = await res.text();
    return text.slice(text.indexOf('"data":') + 7, -1);
  };
  const created = await h.request("POST", "/v1/quotes", {
    organizationId: org,
    body: { reference: "PO-9" },
  });
  assertEquals(created.status, 201);
  const createdText = await dataText(created);
  const id = (JSON.parse(createdText) as { id: string }).id;
  const read = await dataText(await h.request("GET", `/v1/quotes/${id}`, { organizationId: org }));
  assertEquals(read, createdText);
  // Numbers carry no trailing zeros of their column's scale, in reads as in writes.
  assert.match(read, /"subtotalExGst":0,"gstAmount":0,"totalIncGst":0,/);
  assert.match(read, /"taxRatePct":10,/);
  const patched = await dataText(
    await h.request("PATCH", `/v1/quotes/${id}`, { organizationId: org, body: { notes: "n" } }),
  );
  const again = await dataText(await h.request("GET", `/v1/quotes/${id}`, { organizationId: org }));
  assertEquals(again, patched);
});

Deno.test("a quote reference where the id goes is told how to search for it", async () => {
  await using h = await harness();
  const res = await h.request("GET", "/v1/quotes/Q-00001");
  assertEquals(res.status, 400);
  const body = await json(res);
  assertEquals(body.details, [{ path: "quoteId", message: "Must be a UUID" }]);
  assert.match(body.message, /"quoteId" must be a UUID; .*GET \/v1\/quotes\?search=Q-00001/);
});

Deno.test("an illegal status move names the moves the quote can make", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const quote = await createQuote(h, {}, org);
  const res = await h.request("POST", `/v1/quotes/${quote.id}/status`, {
    organizationId: org,
    body: { status: "approved" },
  });
  assertEquals(res.status, 409);
  assert.match((await json(res)).message, /cannot move from draft to approved; .* to sent$/);
});

Deno.test("POST /v1/quotes answers the quote GET then reads, with and without costs.read", async () => {
  await using h = await harness();
  const org = crypto.randomUUID();
  const withoutCosts = ALL_SCOPES.filter((s) => s !== "costs.read");
  for (const scopes of [undefined, withoutCosts]) {
    const body = {
      reference: "Bytes",
      notes: 'Quotes "and" \\ back\\slashes',
      clientId: crypto.randomUUID(),
      deliveryDate: "2026-12-24",
    };
    const created = await h.request("POST", "/v1/quotes", {
      organizationId: org,
      body,
      ...(scopes ? { scopes } : {}),
    });
    assertEquals(created.status, 201);
    const createdText = await created.text();
    const id = (JSON.parse(createdText) as { data: { id: string } }).data.id;
    const read = await h.request("GET", `/v1/quotes/${id}`, {
      organizationId: org,
      ...(scopes ? { scopes } : {}),
    });
    const readText = await read.text();
    assertEquals(JSON.parse(createdText).data, JSON.parse(readText).data);
  }
});

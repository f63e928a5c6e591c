import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { Mock, Proof } from "@printshop/shared/contracts/proofs";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";

type H = ServiceHarness<Config>;
const call = callAs;
const ok = okAs;

async function mock(h: H, org: string, body: Record<string, unknown>): Promise<Mock> {
  return await ok<Mock>(h, "POST", "/v1/mocks", org, { name: "Front print", ...body });
}

async function eventsOf(h: H, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${id} ORDER BY created_at, id`;
  return rows.map((r) => r.type);
}

Deno.test("mocks: create, read, change and delete, with their events", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const quoteId = crypto.randomUUID();
  const created = await mock(h, org, {
    quoteId,
    images: ["https://files.example.com/a.png", "https://files.example.com/b.png"],
    notes: "28 cm wide",
  });
  assertEquals([created.quoteId, created.quoteGroupId, created.jobId], [quoteId, null, null]);
  assertEquals(created.images, [
    "https://files.example.com/a.png",
    "https://files.example.com/b.png",
  ]);
  assertEquals(await ok<Mock>(h, "GET", `/v1/mocks/${created.id}`, org), created);

  const changed = await ok<Mock>(h, "PATCH", `/v1/mocks/${created.id}`, org, {
    images: ["https://files.example.com/b.png"],
    jobId: quoteId,
    quoteId: null,
  });
  assertEquals([changed.images, changed.quoteId, changed.jobId], [
    ["https://files.example.com/b.png"],
    null,
    quoteId,
  ]);
  const orphan = await call(h, "PATCH", `/v1/mocks/${created.id}`, org, { jobId: null });
  assertEquals(orphan.status, 400, "a mock keeps at least one of its owners");
  assertEquals(orphan.body.details?.map((d) => d.path), ["quoteId", "quoteGroupId", "jobId"]);

  assertEquals(await ok(h, "DELETE", `/v1/mocks/${created.id}`, org), { id: created.id });
  assertEquals((await call(h, "GET", `/v1/mocks/${created.id}`, org)).status, 404);
  assertEquals(await eventsOf(h, created.id), ["mock.created", "mock.updated", "mock.deleted"]);
});

Deno.test("mocks: images are https only, and a mock names a quote, quote group or job", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const http = await call(h, "POST", "/v1/mocks", org, {
    name: "Front",
    jobId: crypto.randomUUID(),
    images: ["http://files.example.com/a.png"],
  });
  assertEquals(http.status, 400);
  assertEquals(http.body.details?.map((d) => d.path), ["images.0"]);
  const none = await call(h, "POST", "/v1/mocks", org, { name: "Front" });
  assertEquals(none.status, 400);
  assertEquals(none.body.details?.map((d) => d.path), ["quoteId", "quoteGroupId", "jobId"]);
});

Deno.test("mocks: another organisation's mock is 404 and its list is empty", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const quoteId = crypto.randomUUID();
  const mine = await mock(h, org, { quoteId });
  assertEquals((await call(h, "GET", `/v1/mocks/${mine.id}`, other)).status, 404);
  assertEquals(
    (await call(h, "PATCH", `/v1/mocks/${mine.id}`, other, { name: "x" })).status,
    404,
  );
  assertEquals((await call(h, "DELETE", `/v1/mocks/${mine.id}`, other)).status, 404);
  assertEquals(await ok(h, "GET", `/v1/mocks?quoteId=${quoteId}`, other), []);
  assertEquals(await eventsOf(h, mine.id), ["mock.created"]);
});

Deno.test("GET /v1/mocks: narrowed by job, quote or group, capped with the cap in its message", async () => {
  await using h: H = await serviceHarness(proofsService, { config: { PAGE_SIZE_MAX: 3 } });
  const org = crypto.randomUUID();
  const quoteId = crypto.randomUUID();
  const groupId = crypto.randomUUID();
  const jobId = crypto.randomUUID();
  const first = await mock(h, org, { quoteId, quoteGroupId: groupId });
  const second = await mock(h, org, { quoteId });
  const third = await mock(h, org, { jobId, quoteId });

  const unnarrowed = await call(h, "GET", "/v1/mocks", org);
  assertEquals(unnarrowed.status, 400);
  assertEquals(unnarrowed.body.details?.map((d) => d.path), ["quoteId", "quoteGroupId", "jobId"]);

  const byQuote = await call<Mock[]>(h, "GET", `/v1/mocks?quoteId=${quoteId}`, org);
  assertEquals(byQuote.body.data.map((m) => m.id), [first.id, second.id, third.id]);
  assertEquals(byQuote.body.message, "OK", "exactly the cap is not more than the cap");
  assertEquals(
    (await ok<Mock[]>(h, "GET", `/v1/mocks?quoteGroupId=${groupId}`, org)).map((m) => m.id),
    [first.id],
  );
  assertEquals(
    (await ok<Mock[]>(h, "GET", `/v1/mocks?quoteId=${quoteId}&jobId=${jobId}`, org))
      .map((m) => m.id),
    [third.id],
  );

  await mock(h, org, { quoteId });
  const capped = await call<Mock[]>(h, "GET", `/v1/mocks?quoteId=${quoteId}`, org);
  assertEquals(capped.status, 200);
  assertEquals(capped.body.data.map((m) => m.id), [first.id, second.id, third.id]);
  assert(capped.body.message.includes("first 3 mocks"), capped.body.message);
});

Deno.test("DELETE /v1/mocks: a mock a proof revision shows is kept (409 naming the proof)", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const shown = await mock(h, org, { quoteId: crypto.randomUUID() });
  const proof = await ok<Proof>(h, "POST", "/v1/proofs", org, {
    quoteId: shown.quoteId,
    recipientName: "Sam",
    recipientEmail: "sam@example.com",
    mockIds: [shown.id],
  });
  const refused = await call(h, "DELETE", `/v1/mocks/${shown.id}`, org);
  assertEquals(refused.status, 409);
  assert(refused.body.message.includes(proof.id), refused.body.message);
  await ok(h, "DELETE", `/v1/proofs/${proof.id}`, org);
  await ok(h, "DELETE", `/v1/mocks/${shown.id}`, org);
});

import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  callAs,
  type Envelope,
  okAs,
  type ServiceHarness,
  serviceHarness,
} from "@printshop/shared/testing";
import {
  type ClientDecisionResult,
  DECISION_WORDING,
  type Mock,
  type Proof,
  type ProofHistory,
  type ProofItemLink,
} from "@printshop/shared/contracts/proofs";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { recordProofSent, recordProofViewed } from "./store/history.ts";
import { canonicalJson, shownDigest } from "./domain/evidence.ts";
import { findProof } from "./store/proof_reads.ts";
import { currentShowing } from "./store/revisions.ts";

type H = ServiceHarness<Config>;
const call = callAs;
const ok = okAs;

const IMG = (name: string): string => `https://files.example.com/${name}.png`;

async function mock(h: H, org: string, images: string[]): Promise<Mock> {
  return await ok<Mock>(h, "POST", "/v1/mocks", org, {
    name: "Front print",
    quoteId: crypto.randomUUID(),
    images,
  });
}

async function proof(h: H, org: string, body: Record<string, unknown> = {}): Promise<Proof> {
  return await ok<Proof>(h, "POST", "/v1/proofs", org, {
    quoteId: crypto.randomUUID(),
    recipientName: "Sam Nguyen",
    recipientEmail: "sam@riversidebakery.com.au",
    imageUrls: [IMG("colour-card")],
    ...body,
  });
}

async function history(h: H, org: string, id: string): Promise<ProofHistory> {
  return await ok<ProofHistory>(h, "GET", `/v1/proofs/${id}/history`, org);
}

/** A request as one fixed credential, so what it recorded can be compared with it. */
async function as<T>(
  h: H,
  credentialId: string,
  method: string,
  path: string,
  org: string,
  body?: unknown,
): Promise<{ status: number; body: Envelope<T> }> {
  const res = await h.request(method, path, { organizationId: org, body, credentialId });
  return { status: res.status, body: await res.json() as Envelope<T> };
}

async function eventsOf(h: H, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${id} ORDER BY created_at, id`;
  return rows.map((r) => r.type);
}

async function payloadsOf<T>(h: H, type: string): Promise<T[]> {
  const rows = await h.sql<{ payload: T }[]>`
    SELECT payload FROM outbox WHERE type = ${type} ORDER BY created_at, id`;
  return rows.map((r) => r.payload);
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

Deno.test("proofs: create with revision 1 and items, read, list, change and delete", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front")]);
  const quoteId = crypto.randomUUID();
  const lineId = crypto.randomUUID();
  const created = await proof(h, org, {
    quoteId,
    title: "Staff tees",
    mockIds: [front.id],
    notes: "PMS 1795",
    items: [{
      quoteLineId: lineId,
      description: "Gildan 5000 Black",
      sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 0 }],
    }],
  });
  assertEquals(created.status, "draft");
  assertEquals([created.quoteId, created.jobId, created.title], [quoteId, null, "Staff tees"]);
  assertEquals(
    [created.revision.number, created.revision.mockIds, created.revision.imageUrls],
    [1, [front.id], [IMG("colour-card")]],
  );
  assertEquals(created.revision.notes, "PMS 1795");
  assertEquals(created.items.map((i) => [i.quoteLineId, i.sizes, i.confirmedSizes]), [
    [lineId, [{ size: "S", quantity: 10 }, { size: "M", quantity: 0 }], null],
  ]);
  assertEquals(await ok<Proof>(h, "GET", `/v1/proofs/${created.id}`, org), created);

  const jobProof = await proof(h, org, {
    quoteId: undefined,
    jobId: crypto.randomUUID(),
    recipientEmail: "orders@harbour.example",
    recipientName: "Lee",
  });
  const changed = await ok<Proof>(h, "PATCH", `/v1/proofs/${created.id}`, org, {
    recipientEmail: "orders@riversidebakery.com.au",
  });
  assertEquals(changed.recipientEmail, "orders@riversidebakery.com.au");
  const noOwner = await call(h, "PATCH", `/v1/proofs/${created.id}`, org, { quoteId: null });
  assertEquals(noOwner.status, 400);
  assertEquals(noOwner.body.details?.map((d) => d.path), ["quoteId", "jobId"]);

  type Page = { items: Proof[]; totalCount: number };
  const all = await ok<Page>(h, "GET", "/v1/proofs", org);
  assertEquals(all.items.map((p) => p.id), [jobProof.id, created.id], "newest first");
  assertEquals(all.totalCount, 2);
  const ids = async (query: string): Promise<string[]> =>
    (await ok<Page>(h, "GET", `/v1/proofs?${query}`, org)).items.map((p) => p.id);
  assertEquals(await ids(`quoteId=${quoteId}`), [created.id]);
  assertEquals(await ids(`jobId=${jobProof.jobId}`), [jobProof.id]);
  assertEquals(await ids("recipientEmail=orders%40harbour.example"), [jobProof.id]);
  assertEquals(await ids("search=staff"), [created.id]);
  assertEquals(await ids("status=draft&sortField=createdAt"), [created.id, jobProof.id]);
  assertEquals(await ids("status=approved"), []);
  assertEquals((await call(h, "GET", "/v1/proofs?status=done", org)).status, 400);

  assertEquals(await ok(h, "DELETE", `/v1/proofs/${jobProof.id}`, org), { id: jobProof.id });
  assertEquals((await call(h, "GET", `/v1/proofs/${jobProof.id}`, org)).status, 404);
  assertEquals(await eventsOf(h, created.id), ["proof.created", "proof.updated"]);
  assertEquals(await eventsOf(h, jobProof.id), ["proof.created", "proof.deleted"]);
});

Deno.test("proofs: what a revision shows is checked, mocks in this organisation only", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const foreign = await mock(h, crypto.randomUUID(), [IMG("theirs")]);
  const mine = await mock(h, org, [IMG("mine")]);
  const body = {
    quoteId: crypto.randomUUID(),
    recipientName: "Sam",
    recipientEmail: "sam@example.com",
  };
  const expect400 = async (extra: Record<string, unknown>, paths: string[]): Promise<void> => {
    const answer = await call(h, "POST", "/v1/proofs", org, { ...body, ...extra });
    assertEquals(answer.status, 400, JSON.stringify(answer.body));
    assertEquals(answer.body.details?.map((d) => d.path), paths, JSON.stringify(answer.body));
  };
  await expect400({}, ["mockIds", "imageUrls"]);
  await expect400({ mockIds: [mine.id, foreign.id, crypto.randomUUID()] }, [
    "mockIds.1",
    "mockIds.2",
  ]);
  await expect400({ mockIds: [mine.id, mine.id] }, ["mockIds.1"]);
  await expect400({ imageUrls: ["http://files.example.com/a.png"] }, ["imageUrls.0"]);
  await expect400({ quoteId: undefined, imageUrls: [IMG("a")] }, ["quoteId", "jobId"]);
  await expect400({
    imageUrls: [IMG("a")],
    items: [{
      description: "Tee",
      sizes: [{ size: "M", quantity: 1 }, { size: "m", quantity: 2 }],
    }],
  }, ["items.0.sizes.1.size"]);
  await expect400({
    imageUrls: [IMG("a")],
    items: [{ description: "Tee", sizes: [{ size: "M", quantity: -1 }] }],
  }, ["items.0.sizes.0.quantity"]);
  const [count] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM proofs`;
  assertEquals(count!.n, 0, "nothing is written by a refused create");
});

Deno.test("proofs: another organisation's proof is 404 on every operation", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const mine = await proof(h, org, { items: [{ description: "Tee" }] });
  const link = mine.items[0]!.id;
  const decision = { decision: "approve", signerName: "Sam" };
  for (
    const [method, path, body] of [
      ["GET", `/v1/proofs/${mine.id}`],
      ["PATCH", `/v1/proofs/${mine.id}`, { title: "x" }],
      ["DELETE", `/v1/proofs/${mine.id}`],
      ["GET", `/v1/proofs/${mine.id}/history`],
      ["POST", `/v1/proofs/${mine.id}/revise`, { imageUrls: [IMG("x")] }],
      ["POST", `/v1/proofs/${mine.id}/status`, { status: "approved" }],
      ["POST", `/v1/proofs/${mine.id}/client-decision`, decision],
      ["POST", `/v1/proofs/${mine.id}/items`, { description: "x" }],
      ["PATCH", `/v1/proof-item-links/${link}`, { description: "x" }],
      ["DELETE", `/v1/proof-item-links/${link}`],
      ["POST", `/v1/proof-item-links/${link}/size-split`, { sizes: [] }],
    ] as const
  ) {
    const answer = await call(h, method, path, other, body);
    assertEquals(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
  }
  assertEquals((await ok<{ totalCount: number }>(h, "GET", "/v1/proofs", other)).totalCount, 0);
  assertEquals(await eventsOf(h, mine.id), ["proof.created"]);
  assertEquals(await eventsOf(h, link), []);
});

Deno.test("revise: opens revision n+1 with its own content, back to draft, history keeps all", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const first = await mock(h, org, [IMG("v1")]);
  const second = await mock(h, org, [IMG("v2")]);
  const created = await proof(h, org, { mockIds: [first.id], notes: "first" });
  await ok(h, "POST", `/v1/proofs/${created.id}/status`, org, { status: "changes_requested" });
  const revised = await ok<Proof>(h, "POST", `/v1/proofs/${created.id}/revise`, org, {
    mockIds: [second.id],
    notes: "Logo smaller",
  });
  assertEquals(revised.status, "draft");
  assertEquals(
    [revised.revision.number, revised.revision.mockIds, revised.revision.imageUrls],
    [2, [second.id], []],
  );
  const empty = await call(h, "POST", `/v1/proofs/${created.id}/revise`, org, { notes: "x" });
  assertEquals(empty.status, 400);
  const foreign = await mock(h, crypto.randomUUID(), [IMG("theirs")]);
  const theirs = await call(h, "POST", `/v1/proofs/${created.id}/revise`, org, {
    mockIds: [foreign.id],
  });
  assertEquals(theirs.status, 400);
  assertEquals(theirs.body.details?.map((d) => d.path), ["mockIds.0"]);

  const third = await ok<Proof>(h, "POST", `/v1/proofs/${created.id}/revise`, org, {
    imageUrls: [IMG("v3a"), IMG("v3b")],
  });
  assertEquals([third.revision.number, third.status], [3, "draft"]);
  const past = await history(h, org, created.id);
  assertEquals(past.proof, third);
  assertEquals(past.revisions.map((r) => [r.number, r.mockIds, r.imageUrls, r.notes]), [
    [1, [first.id], [IMG("colour-card")], "first"],
    [2, [second.id], [], "Logo smaller"],
    [3, [], [IMG("v3a"), IMG("v3b")], null],
  ]);
  assertEquals(await eventsOf(h, created.id), [
    "proof.created",
    "proof.status_changed",
    "proof.revised",
    "proof.status_changed",
    "proof.revised",
  ]);
});

Deno.test("status: any status is set directly and kept as a manual change by the credential", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const key = crypto.randomUUID();
  const created = await proof(h, org);
  const approved = await as<Proof>(h, key, "POST", `/v1/proofs/${created.id}/status`, org, {
    status: "approved",
    note: "Approved by phone",
  });
  assertEquals([approved.status, approved.body.data.status], [200, "approved"]);
  const again = await as<Proof>(h, key, "POST", `/v1/proofs/${created.id}/status`, org, {
    status: "approved",
  });
  assertEquals(again.body.message, 'Status was already "approved"');
  await ok(h, "POST", `/v1/proofs/${created.id}/status`, org, { status: "rejected" });
  const bad = await call(h, "POST", `/v1/proofs/${created.id}/status`, org, { status: "done" });
  assertEquals(bad.status, 400);

  const [entry, second] = (await history(h, org, created.id)).revisions[0]!.entries;
  assertEquals(
    [entry!.kind, entry!.fromStatus, entry!.toStatus, entry!.note, entry!.decision],
    ["status_changed", "draft", "approved", "Approved by phone", null],
  );
  assertEquals([entry!.credentialKind, entry!.credentialId], ["tenant_key", key]);
  assertEquals([second!.fromStatus, second!.toStatus], ["approved", "rejected"]);
  const [change] = await payloadsOf<Record<string, unknown>>(h, "proof.status_changed");
  assertEquals(
    [change!.fromStatus, change!.toStatus, change!.cause, change!.credentialId],
    ["draft", "approved", "manual", key],
  );
  assertEquals(await eventsOf(h, created.id), [
    "proof.created",
    "proof.status_changed",
    "proof.status_changed",
  ]);
});

Deno.test("client-decision: records the evidence and moves the status; superseded is 409", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const key = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front"), IMG("detail")]);
  const created = await proof(h, org, {
    mockIds: [front.id],
    items: [{ description: "Tee", sizes: [{ size: "M", quantity: 40 }] }],
  });
  const decide = (body: Record<string, unknown>) =>
    as<ClientDecisionResult>(h, key, "POST", `/v1/proofs/${created.id}/client-decision`, org, {
      signerName: "Sam Nguyen",
      ...body,
    });

  const vague = await decide({ decision: "request_changes" });
  assertEquals(vague.status, 400);
  assertEquals(vague.body.details?.map((d) => d.path), ["comment"]);
  const future = await decide({ decision: "approve", revision: 2 });
  assertEquals(future.status, 400);

  const asked = await decide({
    decision: "request_changes",
    comment: "Logo smaller please",
    signerEmail: "sam@riversidebakery.com.au",
    revision: 1,
  });
  assertEquals(asked.status, 201, JSON.stringify(asked.body));
  const { proof: after, entry } = asked.body.data;
  assertEquals(after.status, "changes_requested");
  const record = entry.decision!;
  assertEquals(
    [entry.kind, entry.revision, entry.fromStatus, entry.toStatus, entry.credentialId],
    ["decision", 1, "draft", "changes_requested", key],
  );
  assertEquals(
    [record.decision, record.comment, record.signerName, record.signerEmail, record.channel],
    ["request_changes", "Logo smaller please", "Sam Nguyen", "sam@riversidebakery.com.au", "api"],
  );
  assertEquals(record.wording, DECISION_WORDING.request_changes);
  assertEquals(record.shown, {
    proofId: created.id,
    revision: 1,
    title: null,
    notes: null,
    images: [IMG("front"), IMG("detail"), IMG("colour-card")],
    items: [{ quoteLineId: null, description: "Tee", sizes: [{ size: "M", quantity: 40 }] }],
  });
  assertEquals(record.digest, sha256(canonicalJson(record.shown)));

  const twice = await decide({ decision: "approve" });
  assertEquals(twice.status, 409, "a decided proof takes no second decision");

  await ok(h, "POST", `/v1/proofs/${created.id}/revise`, org, { mockIds: [front.id] });
  const stale = await decide({ decision: "approve", revision: 1 });
  assertEquals(stale.status, 409);
  assert(stale.body.message.includes("superseded"), stale.body.message);
  const approved = await decide({ decision: "approve" });
  assertEquals(approved.status, 201);
  assertEquals(
    [approved.body.data.proof.status, approved.body.data.entry.revision],
    ["approved", 2],
  );
  assertEquals(approved.body.data.entry.decision!.wording, DECISION_WORDING.approve);

  const past = await history(h, org, created.id);
  assertEquals(past.revisions.map((r) => r.entries.map((e) => e.decision?.decision)), [
    ["request_changes"],
    ["approve"],
  ]);
  const deleted = await call(h, "DELETE", `/v1/proofs/${created.id}`, org);
  assertEquals(deleted.status, 409, "a decided proof is kept as evidence");
  assertEquals(await eventsOf(h, created.id), [
    "proof.created",
    "proof.status_changed",
    "proof.client_decision_recorded",
    "proof.revised",
    "proof.status_changed",
    "proof.status_changed",
    "proof.client_decision_recorded",
  ]);
  const [recorded] = await payloadsOf<ClientDecisionResult>(h, "proof.client_decision_recorded");
  assertEquals(recorded!.entry.decision!.digest, record.digest);
});

Deno.test("client-decision: the digest follows exactly what the revision shows", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front")]);
  const created = await proof(h, org, {
    mockIds: [front.id],
    items: [{ description: "Tee", sizes: [{ size: "M", quantity: 40 }] }],
  });
  // Taken as a decision takes it; the draft is still the shop's to change (evidence_test.ts:
  // once decided, sent or approved, it is not).
  const digest = async (): Promise<string> =>
    shownDigest(await currentShowing(h.sql, await findProof(h.sql, org, created.id)));
  const first = await digest();
  assertEquals(await digest(), first, "nothing shown changed: the same digest");
  await ok(h, "PATCH", `/v1/proof-item-links/${created.items[0]!.id}`, org, {
    sizes: [{ size: "M", quantity: 41 }],
  });
  const requantified = await digest();
  assert(requantified !== first, "a quantity changed");
  await ok(h, "PATCH", `/v1/mocks/${front.id}`, org, { images: [IMG("front-v2")] });
  const reimaged = await digest();
  assert(reimaged !== requantified, "a mock's image changed");
  await ok(h, "PATCH", `/v1/proofs/${created.id}`, org, { title: "Renamed" });
  // The title heads what the customer reads (the page's heading), so it is part of it too.
  const retitled = await digest();
  assert(retitled !== reimaged, "the title changed");
  const decided = await ok<ClientDecisionResult>(
    h,
    "POST",
    `/v1/proofs/${created.id}/client-decision`,
    org,
    { decision: "request_changes", comment: "Again", signerName: "Sam" },
  );
  assertEquals(decided.entry.decision!.digest, retitled, "the decision's is the same digest");
});

Deno.test("history: sends, views, decisions and manual changes per revision, in time order", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const created = await proof(h, org);
  const caller = { credentialKind: "tenant_key" as const, credentialId: crypto.randomUUID() };
  const sent = await h.sql.begin((tx) =>
    recordProofSent(tx, org, created.id, { sentTo: created.recipientEmail, caller })
  );
  assertEquals([sent.proof.status, sent.entry.kind, sent.entry.sentTo], [
    "sent",
    "sent",
    created.recipientEmail,
  ]);
  const resent = await h.sql.begin((tx) =>
    recordProofSent(tx, org, created.id, { sentTo: "other@example.com", caller })
  );
  assertEquals([resent.proof.status, resent.entry.fromStatus], ["sent", null]);
  const viewed = await h.sql.begin((tx) =>
    recordProofViewed(tx, org, created.id, {
      revision: 1,
      ipAddress: "203.0.113.7",
      userAgent: "Phone",
    })
  );
  assertEquals([viewed.proof.status, viewed.entry.ipAddress], ["viewed", "203.0.113.7"]);
  await ok(h, "POST", `/v1/proofs/${created.id}/client-decision`, org, {
    decision: "request_changes",
    comment: "Bigger",
    signerName: "Sam",
  });
  await ok(h, "POST", `/v1/proofs/${created.id}/revise`, org, { imageUrls: [IMG("v2")] });
  const lateView = await h.sql.begin((tx) =>
    recordProofViewed(tx, org, created.id, { revision: 1, ipAddress: null, userAgent: null })
  );
  assertEquals(lateView.proof.status, "draft", "a superseded revision's view moves nothing");
  await ok(h, "POST", `/v1/proofs/${created.id}/status`, org, { status: "approved" });
  await assert.rejects(
    h.sql.begin((tx) => recordProofSent(tx, org, created.id, { sentTo: "x@example.com", caller })),
    /cannot be sent/,
  );
  await assert.rejects(
    h.sql.begin((tx) =>
      recordProofViewed(tx, crypto.randomUUID(), created.id, {
        revision: 1,
        ipAddress: null,
        userAgent: null,
      })
    ),
    /was not found/,
  );

  const past = await history(h, org, created.id);
  assertEquals(
    past.revisions.map((r) => r.entries.map((e) => [e.kind, e.fromStatus, e.toStatus])),
    [
      [
        ["sent", "draft", "sent"],
        ["sent", null, null],
        ["viewed", "sent", "viewed"],
        ["decision", "viewed", "changes_requested"],
        ["viewed", null, null],
      ],
      [["status_changed", "draft", "approved"]],
    ],
  );
  for (const revision of past.revisions) {
    const times = revision.entries.map((e) => e.occurredAt);
    assertEquals(times, [...times].sort());
  }
  const causes = (await payloadsOf<{ cause: string }>(h, "proof.status_changed"))
    .map((p) => p.cause);
  assertEquals(causes, ["sent", "viewed", "client_decision", "revised", "manual"]);
});

Deno.test("items: added, changed and removed through the proof, each a proof.updated", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const created = await proof(h, org);
  const lineId = crypto.randomUUID();
  const item = await ok<ProofItemLink>(h, "POST", `/v1/proofs/${created.id}/items`, org, {
    quoteLineId: lineId,
    description: "Gildan 5000 Black",
    sizes: [{ size: "S", quantity: 5 }],
  });
  assertEquals([item.proofId, item.quoteLineId, item.sizes], [created.id, lineId, [
    { size: "S", quantity: 5 },
  ]]);
  const dup = await call(h, "POST", `/v1/proofs/${created.id}/items`, org, {
    description: "x",
    sizes: [{ size: "S", quantity: 1 }, { size: " s", quantity: 1 }],
  });
  assertEquals(dup.status, 400);
  assertEquals(dup.body.details?.map((d) => d.path), ["sizes.1.size"]);
  const renamed = await ok<ProofItemLink>(h, "PATCH", `/v1/proof-item-links/${item.id}`, org, {
    description: "Gildan 5000 Navy",
  });
  assertEquals(renamed.description, "Gildan 5000 Navy");
  assertEquals((await ok<Proof>(h, "GET", `/v1/proofs/${created.id}`, org)).items, [renamed]);
  assertEquals(await ok(h, "DELETE", `/v1/proof-item-links/${item.id}`, org), {
    id: item.id,
    proofId: created.id,
  });
  assertEquals((await ok<Proof>(h, "GET", `/v1/proofs/${created.id}`, org)).items, []);
  assertEquals(await eventsOf(h, created.id), [
    "proof.created",
    "proof.updated",
    "proof.updated",
    "proof.updated",
  ]);
});

Deno.test("size-split: confirms checked quantities with who and when; new sizes clear it", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const key = crypto.randomUUID();
  const created = await proof(h, org, {
    items: [{
      description: "Tee",
      sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 40 }],
    }],
  });
  const link = created.items[0]!;
  const split = (sizes: unknown) =>
    as<ProofItemLink>(h, key, "POST", `/v1/proof-item-links/${link.id}/size-split`, org, { sizes });

  for (
    const [sizes, path] of [
      [[{ size: "S", quantity: 1 }, { size: "S", quantity: 2 }], "sizes.1.size"],
      [[{ size: "S", quantity: -1 }], "sizes.0.quantity"],
      [[{ size: "S", quantity: 1.5 }], "sizes.0.quantity"],
      [[{ size: "S" }], "sizes.0.quantity"],
    ] as const
  ) {
    const refused = await split(sizes);
    assertEquals(refused.status, 400, JSON.stringify(sizes));
    assertEquals(refused.body.details?.map((d) => d.path), [path]);
  }
  const confirmed = await split([{ size: "S", quantity: 12 }, { size: "M", quantity: 38 }]);
  assertEquals(confirmed.status, 200, JSON.stringify(confirmed.body));
  const item = confirmed.body.data;
  assertEquals(item.confirmedSizes, [{ size: "S", quantity: 12 }, { size: "M", quantity: 38 }]);
  assertEquals(item.sizes, link.sizes, "the proposal stays as it was");
  assertEquals([item.confirmedByCredentialKind, item.confirmedByCredentialId], ["tenant_key", key]);
  assert(item.confirmedAt !== null);
  const [event] = await payloadsOf<ProofItemLink>(h, "proof_item_link.size_split_confirmed");
  assertEquals(event, item);
  assertEquals(await eventsOf(h, link.id), ["proof_item_link.size_split_confirmed"]);

  const reproposed = await ok<ProofItemLink>(h, "PATCH", `/v1/proof-item-links/${link.id}`, org, {
    sizes: [{ size: "S", quantity: 20 }],
  });
  assertEquals(
    [reproposed.confirmedSizes, reproposed.confirmedAt, reproposed.confirmedByCredentialId],
    [null, null, null],
  );
});

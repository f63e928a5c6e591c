/**
 * Evidence cannot drift: once a revision has been sent (or decided, or the proof approved), what
 * it shows (the proof's title, the revision's notes and images, its mocks' images, the items and
 * their sizes) stays as it was. A change is a new revision; a mock's images are refused (409
 * naming the revision) while a sent revision shows the mock. A decision's digest keeps matching
 * what the proof shows.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  callAs,
  type Envelope,
  okAs,
  type ServiceHarness,
  serviceHarness,
} from "@printshop/shared/testing";
import type {
  ClientDecisionResult,
  Mock,
  Proof,
  ProofItemLink,
} from "@printshop/shared/contracts/proofs";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { shownDigest } from "./domain/evidence.ts";
import { findProof } from "./store/proof_reads.ts";
import { currentShowing } from "./store/revisions.ts";
import { recordProofSent } from "./store/history.ts";
import { createProof, whileHeld } from "./test_fixtures.ts";

type H = ServiceHarness<Config>;

const IMG = (name: string): string => `https://files.example.com/${name}.png`;

async function mock(h: H, org: string, images: string[]): Promise<Mock> {
  return await okAs<Mock>(h, "POST", "/v1/mocks", org, {
    name: "Front print",
    quoteId: crypto.randomUUID(),
    images,
  });
}

async function send(h: H, org: string, p: Proof): Promise<void> {
  await okAs(h, "POST", `/v1/proofs/${p.id}/send`, org, {});
}

/** The digest of what the proof shows now, as a decision would take it. */
async function digestNow(h: H, org: string, id: string): Promise<string> {
  return shownDigest(await currentShowing(h.sql, await findProof(h.sql, org, id)));
}

/** Each change to what `p` shows, as a request, and what it would change. */
function shownChanges(p: Proof): [string, string, string, unknown][] {
  const item = p.items[0]!;
  return [
    ["the title", "PATCH", `/v1/proofs/${p.id}`, { title: "Staff tees, navy" }],
    ["an item added", "POST", `/v1/proofs/${p.id}/items`, { description: "Caps" }],
    ["an item's sizes", "PATCH", `/v1/proof-item-links/${item.id}`, {
      sizes: [{ size: "M", quantity: 400 }],
    }],
    ["an item's description", "PATCH", `/v1/proof-item-links/${item.id}`, {
      description: "Gildan 5000 Navy",
    }],
    ["an item's quote line", "PATCH", `/v1/proof-item-links/${item.id}`, {
      quoteLineId: crypto.randomUUID(),
    }],
    ["an item removed", "DELETE", `/v1/proof-item-links/${item.id}`, undefined],
  ];
}

function assertNamesRevision(
  answer: { status: number; body: Envelope<unknown> },
  id: string,
  revision: number,
  what: string,
): void {
  assertEquals(answer.status, 409, `${what}: ${JSON.stringify(answer.body)}`);
  assert(
    answer.body.message.includes(`Revision ${revision} of proof "${id}"`) ||
      answer.body.message.includes(`revision ${revision} of proof "${id}"`),
    `${what}: ${answer.body.message}`,
  );
}

Deno.test("drift: a sent revision's mock keeps its images (409 naming the revision); its other fields change", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front")]);
  const p = await createProof(h, org, { mockIds: [front.id] });
  // A draft's mocks are still the shop's to change: the customer has seen nothing.
  await okAs(h, "PATCH", `/v1/mocks/${front.id}`, org, { images: [IMG("front-a")] });
  await send(h, org, p);
  const sentDigest = await digestNow(h, org, p.id);

  const refused = await callAs(h, "PATCH", `/v1/mocks/${front.id}`, org, {
    images: [IMG("front-b")],
  });
  assertNamesRevision(refused, p.id, 1, "a mock's images");
  assert(refused.body.message.includes("new mock"), refused.body.message);
  // What the customer does not see changes; the same images are no change.
  const renamed = await okAs<Mock>(h, "PATCH", `/v1/mocks/${front.id}`, org, {
    name: "Front, final",
    notes: "Approved size",
    images: [IMG("front-a")],
  });
  assertEquals([renamed.name, renamed.images], ["Front, final", [IMG("front-a")]]);
  assertEquals(await digestNow(h, org, p.id), sentDigest, "what the customer saw is as sent");

  // Revision 1 was sent: it keeps showing the mock as sent, superseded or not.
  await okAs(h, "POST", `/v1/proofs/${p.id}/revise`, org, { imageUrls: [IMG("v2")] });
  const still = await callAs(h, "PATCH", `/v1/mocks/${front.id}`, org, {
    images: [IMG("front-b")],
  });
  assertNamesRevision(still, p.id, 1, "a superseded sent revision's mock");
  const revision1 = (await okAs<{ revisions: { mockIds: string[] }[] }>(
    h,
    "GET",
    `/v1/proofs/${p.id}/history`,
    org,
  )).revisions[0]!;
  assertEquals(revision1.mockIds, [front.id]);
  assertEquals((await okAs<Mock>(h, "GET", `/v1/mocks/${front.id}`, org)).images, [
    IMG("front-a"),
  ]);
  const events = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${front.id} ORDER BY created_at, id`;
  assertEquals(events.map((e) => e.type), ["mock.created", "mock.updated", "mock.updated"]);
});

Deno.test("drift: once sent, the title and items stay as sent until a new revision", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await createProof(h, org);
  await send(h, org, p);
  const digest = await digestNow(h, org, p.id);

  for (const [what, method, path, body] of shownChanges(p)) {
    assertNamesRevision(await callAs(h, method, path, org, body), p.id, 1, what);
  }
  assertEquals(await digestNow(h, org, p.id), digest, "nothing the customer saw changed");
  const after = await okAs<Proof>(h, "GET", `/v1/proofs/${p.id}`, org);
  assertEquals([after.title, after.items], [p.title, p.items]);
  // Who it is for is not what it shows: the recipient still changes, and the same title too.
  const renamed = await okAs<Proof>(h, "PATCH", `/v1/proofs/${p.id}`, org, {
    recipientName: "Sam N.",
    title: p.title,
  });
  assertEquals(renamed.recipientName, "Sam N.");

  // A new revision is a draft again: its title and items are the shop's to change.
  const revised = await okAs<Proof>(h, "POST", `/v1/proofs/${p.id}/revise`, org, {
    imageUrls: [IMG("v2")],
  });
  for (const [what, method, path, body] of shownChanges(revised)) {
    const answer = await callAs(h, method, path, org, body);
    assert(answer.status < 300, `${what} on a new revision: ${JSON.stringify(answer.body)}`);
  }
});

Deno.test("drift: an approved proof and a decided revision keep what they show; the digest keeps matching", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();

  // Approved directly, never sent.
  const front = await mock(h, org, [IMG("front")]);
  const approved = await createProof(h, org, { mockIds: [front.id] });
  await okAs(h, "POST", `/v1/proofs/${approved.id}/status`, org, { status: "approved" });
  for (const [what, method, path, body] of shownChanges(approved)) {
    assertNamesRevision(await callAs(h, method, path, org, body), approved.id, 1, what);
  }
  const approvedMock = await callAs(h, "PATCH", `/v1/mocks/${front.id}`, org, {
    images: [IMG("front-b")],
  });
  assertNamesRevision(approvedMock, approved.id, 1, "an approved proof's mock");
  // Set back by hand, the revision still is what was approved: a new revision takes a change.
  await okAs(h, "POST", `/v1/proofs/${approved.id}/status`, org, { status: "draft" });
  assertNamesRevision(
    await callAs(h, "PATCH", `/v1/proofs/${approved.id}`, org, { title: "Staff tees, v2" }),
    approved.id,
    1,
    "the title of a revision approved, then set back to draft",
  );

  // Decided on the customer's behalf (request_changes), then set back to `sent` by hand: the
  // decision's revision keeps showing what was decided on.
  const back = await mock(h, org, [IMG("back")]);
  const decided = await createProof(h, org, { mockIds: [back.id] });
  const result = await okAs<ClientDecisionResult>(
    h,
    "POST",
    `/v1/proofs/${decided.id}/client-decision`,
    org,
    { decision: "request_changes", comment: "Bigger", signerName: "Sam" },
  );
  await okAs(h, "POST", `/v1/proofs/${decided.id}/status`, org, { status: "sent" });
  for (const [what, method, path, body] of shownChanges(decided)) {
    assertNamesRevision(await callAs(h, method, path, org, body), decided.id, 1, what);
  }
  assertNamesRevision(
    await callAs(h, "PATCH", `/v1/mocks/${back.id}`, org, { images: [IMG("back-b")] }),
    decided.id,
    1,
    "a decided revision's mock",
  );
  assertEquals(await digestNow(h, org, decided.id), result.entry.decision!.digest);
});

Deno.test("drift: a mock change waiting on a send is refused once the send is recorded", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front")]);
  const p = await createProof(h, org, { mockIds: [front.id] });
  const caller = { credentialKind: "tenant_key" as const, credentialId: crypto.randomUUID() };

  // The send holds its transaction open while the mock's images are changed.
  const changed = await whileHeld(
    h,
    (tx) => recordProofSent(tx, org, p.id, { sentTo: p.recipientEmail, caller }),
    () => callAs<Mock>(h, "PATCH", `/v1/mocks/${front.id}`, org, { images: [IMG("late")] }),
  );
  assertNamesRevision(changed, p.id, 1, "a mock changed during the send");
  assertEquals((await okAs<Mock>(h, "GET", `/v1/mocks/${front.id}`, org)).images, [
    IMG("front"),
  ]);
});

Deno.test("digest: a decision waits for a mock change in flight and records what the proof then shows", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const front = await mock(h, org, [IMG("front")]);
  const p = await createProof(h, org, { mockIds: [front.id] });

  // A change to the draft's mock, committed while the decision is being recorded.
  const result = await whileHeld(
    h,
    (tx) => tx`UPDATE mocks SET images = ${[IMG("front-v2")]} WHERE id = ${front.id}`,
    () =>
      okAs<ClientDecisionResult>(h, "POST", `/v1/proofs/${p.id}/client-decision`, org, {
        decision: "approve",
        signerName: "Sam",
      }),
  );
  const shown = result.entry.decision!.shown;
  assertEquals(shown.images.slice(0, 1), [IMG("front-v2")], "the images the proof then showed");
  assertEquals(await digestNow(h, org, p.id), result.entry.decision!.digest);
});

Deno.test("items: a size split is no change to what the customer saw, and goes on after a send", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await createProof(h, org);
  await send(h, org, p);
  const digest = await digestNow(h, org, p.id);
  const split = await okAs<ProofItemLink>(
    h,
    "POST",
    `/v1/proof-item-links/${p.items[0]!.id}/size-split`,
    org,
    { sizes: [{ size: "M", quantity: 38 }] },
  );
  assertEquals(split.confirmedSizes, [{ size: "M", quantity: 38 }]);
  assertEquals(await digestNow(h, org, p.id), digest);
});

/**
 * Who may aim a deciding link: a send's message carries links that decide their proofs, so a
 * credential without `proofs.approve` sends only to the proof's recipient as a credential
 * holding `proofs.approve` set or confirmed it (creating the proof, setting `recipientEmail`, or
 * sending it there). Anything else is 403, and nothing is queued.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import type { Proof, ProofSendResult } from "@printshop/shared/contracts/proofs";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { createProof, whileHeld } from "./test_fixtures.ts";

type H = ServiceHarness<Config>;

const WRITER = ALL_SCOPES.filter((s) => s !== "proofs.approve");
const WRITERS_OWN = "writer@inkwell.example";

async function queued(h: H): Promise<string[]> {
  const rows = await h.sql<{ to_address: string }[]>`
    SELECT to_address FROM mail_messages ORDER BY created_at, id`;
  return rows.map((r) => r.to_address);
}

/** A send by the writer, one proof or several. */
async function writerSends(
  h: H,
  org: string,
  ids: string[],
  body: Record<string, unknown> = {},
): Promise<{ status: number; message: string; data: ProofSendResult }> {
  const answer = ids.length === 1
    ? await callAs<ProofSendResult>(h, "POST", `/v1/proofs/${ids[0]}/send`, org, body, WRITER)
    : await callAs<ProofSendResult>(h, "POST", "/v1/proofs/send", org, {
      proofIds: ids,
      ...body,
    }, WRITER);
  return { status: answer.status, message: answer.body.message, data: answer.body.data };
}

Deno.test("send: without proofs.approve, only to a recipient a proofs.approve credential set or confirmed", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();

  // The writer's own proof, addressed to its own mailbox: no link goes there.
  const own = await callAs<Proof>(h, "POST", "/v1/proofs", org, {
    quoteId: crypto.randomUUID(),
    recipientName: "Me",
    recipientEmail: WRITERS_OWN,
    imageUrls: ["https://files.example.com/front.png"],
  }, WRITER);
  assertEquals(own.status, 201);
  for (const body of [{}, { to: WRITERS_OWN }]) {
    const refused = await writerSends(h, org, [own.body.data.id], body);
    assertEquals(refused.status, 403, refused.message);
    assert(refused.message.includes("proofs.approve"), refused.message);
    assert(refused.message.includes(WRITERS_OWN), refused.message);
  }

  // The shop's proof for Sam, re-aimed at the writer's mailbox: refused the same way, alone or
  // with others.
  const shops = await createProof(h, org);
  const reaimed = await callAs<Proof>(h, "PATCH", `/v1/proofs/${shops.id}`, org, {
    recipientEmail: WRITERS_OWN,
  }, WRITER);
  assertEquals(reaimed.status, 200);
  assertEquals((await writerSends(h, org, [shops.id])).status, 403);
  assertEquals(
    (await writerSends(h, org, [shops.id, own.body.data.id], { to: WRITERS_OWN })).status,
    403,
  );
  assertEquals(await queued(h), [], "nothing was queued");

  // Back to the address the shop chose: it goes there (the writer never sees the link).
  await callAs(h, "PATCH", `/v1/proofs/${shops.id}`, org, {
    recipientEmail: "SAM@riversidebakery.com.au",
  }, WRITER);
  const sent = await writerSends(h, org, [shops.id]);
  assertEquals(sent.status, 200, sent.message);
  assertEquals(sent.data.links.map((l) => l.url), [null]);

  // A proofs.approve credential confirms the writer's proof by setting its recipient (the same
  // address will do)...
  const lee = await callAs<Proof>(h, "POST", "/v1/proofs", org, {
    jobId: crypto.randomUUID(),
    recipientName: "Lee",
    recipientEmail: "lee@harbour.example",
    imageUrls: ["https://files.example.com/job.png"],
  }, WRITER);
  assertEquals((await writerSends(h, org, [lee.body.data.id])).status, 403);
  await callAs(h, "PATCH", `/v1/proofs/${lee.body.data.id}`, org, {
    recipientEmail: "lee@harbour.example",
  });
  assertEquals((await writerSends(h, org, [lee.body.data.id])).status, 200);

  // ...or by sending it there itself; the writer's later sends of new revisions then go.
  const kim = await callAs<Proof>(h, "POST", "/v1/proofs", org, {
    jobId: crypto.randomUUID(),
    recipientName: "Kim",
    recipientEmail: "kim@harbour.example",
    imageUrls: ["https://files.example.com/kim.png"],
  }, WRITER);
  assertEquals(
    (await callAs(h, "POST", `/v1/proofs/${kim.body.data.id}/send`, org, {})).status,
    200,
  );
  await callAs(h, "POST", `/v1/proofs/${kim.body.data.id}/revise`, org, {
    imageUrls: ["https://files.example.com/kim-2.png"],
  }, WRITER);
  assertEquals((await writerSends(h, org, [kim.body.data.id])).status, 200);

  assertEquals(await queued(h), [
    "SAM@riversidebakery.com.au",
    "lee@harbour.example",
    "kim@harbour.example",
    "kim@harbour.example",
  ]);
});

Deno.test("send: a recipient change in flight is waited for; the message goes to the new address", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await createProof(h, org);
  const sent = await whileHeld(
    h,
    (tx) =>
      tx`UPDATE proofs SET recipient_email = 'orders@riversidebakery.com.au'
        WHERE id = ${p.id}`,
    () => callAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {}),
  );
  assertEquals(sent.status, 200, JSON.stringify(sent.body));
  assertEquals(sent.body.data.to, "orders@riversidebakery.com.au");
  assertEquals(await queued(h), ["orders@riversidebakery.com.au"]);
});

Deno.test("send: a writer's send waits for a recipient re-aimed in flight, and is refused", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await createProof(h, org);
  const sent = await whileHeld(
    h,
    (tx) => tx`UPDATE proofs SET recipient_email = ${WRITERS_OWN} WHERE id = ${p.id}`,
    () => writerSends(h, org, [p.id]),
  );
  assertEquals(sent.status, 403, sent.message);
  assertEquals(await queued(h), []);
});

/**
 * The proofs service's events, as the contracts declare them, are the truth about what it
 * emits: every declared name comes out of some operation or its approval page, and nothing else
 * comes out.
 * Operations run through the real gateway; what they emitted is read back from the outbox.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { declaredBy, emittedBy, startTestStack, type TestStack } from "@printshop/shared/testing";
import { connect } from "@printshop/shared/db";

type Json = Record<string, unknown>;

Deno.test("every proofs event is emitted by an operation, and nothing else is", async () => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant();
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.call(shop.apiKey, method, path, body);
    const json = await res.json() as Json;
    if (!res.ok) {
      const errors = (await stack.logs()).split("\n").filter((l) => l.includes('"error"'));
      assert.fail(`${method} ${path}: ${res.status} ${JSON.stringify(json)}\n${errors.join("\n")}`);
    }
    return json.data as Json;
  };

  assertEquals(await emittedBy(stack, "proofs"), []);

  const quoteId = crypto.randomUUID();
  // Mocks: one shown by the proof, one created, changed and deleted.
  const front = await send("POST", "/v1/mocks", {
    quoteId,
    name: "Front print",
    images: ["https://files.example.com/front.png"],
  });
  const spare = await send("POST", "/v1/mocks", { quoteId, name: "Back print" });
  await send("PATCH", `/v1/mocks/${spare.id}`, { notes: "Not needed" });
  await send("DELETE", `/v1/mocks/${spare.id}`);
  const listed = await send("GET", `/v1/mocks?quoteId=${quoteId}`) as unknown as Json[];
  assertEquals(listed.map((m) => m.id), [front.id]);

  // A proof with an item; its fields and items changed; a size split confirmed.
  const proof = await send("POST", "/v1/proofs", {
    quoteId,
    recipientName: "Sam Nguyen",
    recipientEmail: "sam@riversidebakery.com.au",
    mockIds: [front.id],
    items: [{ description: "Gildan 5000 Black", sizes: [{ size: "M", quantity: 40 }] }],
  });
  await send("PATCH", `/v1/proofs/${proof.id}`, { title: "Staff tees" });
  const item = await send("POST", `/v1/proofs/${proof.id}/items`, { description: "Caps" });
  await send("PATCH", `/v1/proof-item-links/${item.id}`, {
    sizes: [{ size: "OSFA", quantity: 5 }],
  });
  await send("DELETE", `/v1/proof-item-links/${item.id}`);
  const [link] = proof.items as Json[];
  await send("POST", `/v1/proof-item-links/${link!.id}/size-split`, {
    sizes: [{ size: "M", quantity: 38 }],
  });

  // Sent by email: with no SMTP_URL in the stack, the message stays in the local outbox, which
  // the operator reads through the gateway's admin API.
  const sent = await send("POST", `/v1/proofs/${proof.id}/send`, { message: "For approval" });
  assertEquals([sent.delivery, sent.to], ["local", "sam@riversidebakery.com.au"]);
  const outbox = await stack.admin<{ data: Json[] }>("GET", "/admin/mail");
  assertEquals(
    outbox.data.map((m) => [m.id, m.to, m.status, m.proofIds]),
    [[sent.mailMessageId, "sam@riversidebakery.com.au", "local", [proof.id]]],
  );
  // The customer opens the approval page (no credential): a view.
  const [approvalLink] = sent.links as { url: string }[];
  const page = await fetch(approvalLink!.url);
  assertEquals([page.status, page.headers.get("content-type")], [
    200,
    "text/html; charset=utf-8",
  ]);
  await page.body?.cancel();

  // A decision, a new revision, a direct status; a second proof deleted.
  await send("POST", `/v1/proofs/${proof.id}/client-decision`, {
    decision: "request_changes",
    comment: "Logo smaller",
    signerName: "Sam Nguyen",
  });
  await send("POST", `/v1/proofs/${proof.id}/revise`, {
    imageUrls: ["https://files.example.com/front-v2.png"],
  });
  await send("POST", `/v1/proofs/${proof.id}/status`, { status: "approved" });
  const history = await send("GET", `/v1/proofs/${proof.id}/history`);
  assertEquals((history.revisions as Json[]).length, 2);
  const other = await send("POST", "/v1/proofs", {
    jobId: crypto.randomUUID(),
    recipientName: "Lee",
    recipientEmail: "lee@example.com",
    imageUrls: ["https://files.example.com/job.png"],
  });
  // The several-proofs send (the first proof is decided by now, so it cannot go again).
  const batch = await send("POST", "/v1/proofs/send", {
    proofIds: [other.id],
    to: "orders@example.com",
  });
  assertEquals((batch.proofs as Json[]).map((p) => p.status), ["sent"]);
  await send("DELETE", `/v1/proofs/${other.id}`);

  assertEquals(await emittedBy(stack, "proofs"), declaredBy("proofs"));

  const sql = connect(stack.db.url, { schema: "proofs", max: 1 });
  try {
    const of = async (type: string): Promise<string[]> =>
      (await sql<{ aggregate_id: string }[]>`
        SELECT aggregate_id FROM outbox WHERE type = ${type} ORDER BY aggregate_id`)
        .map((r) => r.aggregate_id);
    assertEquals(await of("mock.deleted"), [spare.id]);
    assertEquals(await of("proof.deleted"), [other.id]);
    assertEquals(await of("proof_item_link.size_split_confirmed"), [link!.id]);
    assertEquals(await of("proof.client_decision_recorded"), [proof.id]);
  } finally {
    await sql.end();
  }
});

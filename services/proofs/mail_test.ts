/**
 * Proofs by email, against a real SMTP server running in this process (`smtp-server` on a free
 * loopback port): what arrives, several proofs in one message, a refusing server's retries
 * recorded in the history while the request answers at once, and the local outbox with no
 * SMTP_URL.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { header, parts, smtpServer } from "@printshop/shared/testing/smtp";
import { concatBytes } from "@printshop/shared/bytes";
import {
  callAs,
  okAs,
  type ServiceHarness,
  serviceHarness,
  TEST_ORGANIZATION_NAME,
  TEST_PUBLIC_URL,
} from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import {
  type OutboxMail,
  PLATFORM_MAIL_SCOPE,
  type ProofSendResult,
} from "@printshop/shared/contracts/proofs";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { createProof, historyOf } from "./test_fixtures.ts";
import { startMailWorker } from "./mail_worker.ts";
import { claimDueMail, markMailSent, recordMailFailure } from "./store/mail.ts";

type H = ServiceHarness<Config>;

const proof = createProof;

const FAST = { retryDelaysMs: [20, 20], pollIntervalMs: 20, timeoutMs: 2_000 };

Deno.test("sendProof: the message reaches the SMTP server with text and HTML naming the proof", async () => {
  await using smtp = await smtpServer({
    authOptional: false,
    onAuth(auth, _session, callback) {
      // The credentials come from SMTP_URL.
      if (auth.username === "shop" && auth.password === "s3cret p@ss") {
        callback(null, { user: auth.username });
      } else callback(new Error("Invalid username or password"));
    },
  });
  const smtpUrl = `smtp://shop:${
    encodeURIComponent("s3cret p@ss")
  }@127.0.0.1:${smtp.port}?from=proofs@inkwell.example`;
  await using h: H = await serviceHarness(proofsService, { config: { SMTP_URL: smtpUrl } });
  const worker = await startMailWorker({ sql: h.sql, logger: h.deps.logger, smtpUrl }, FAST);
  try {
    const org = crypto.randomUUID();
    const p = await proof(h, org);
    const sent = await okAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {
      message: "Here is the artwork.",
    });
    assertEquals(sent.delivery, "queued");
    assertEquals(sent.to, "sam@riversidebakery.com.au");
    assertEquals(sent.proofs[0]!.status, "sent");
    await waitFor("the message", () => Promise.resolve(smtp.received.length === 1), 10_000);
    const mail = smtp.received[0]!;
    assertEquals(mail.to, ["sam@riversidebakery.com.au"]);
    assertEquals(mail.from, "proofs@inkwell.example");
    assertEquals(
      header(mail.raw, "Subject"),
      `${TEST_ORGANIZATION_NAME}: proof for your approval: Staff tees (revision 1)`,
    );
    const link = sent.links[0]!;
    assertEquals(link.proofId, p.id);
    assert(link.url?.startsWith(`${TEST_PUBLIC_URL}/approve/`), link.url ?? "no url");
    const { "text/plain": text, "text/html": html } = parts(mail.raw);
    for (const [kind, body] of [["text", text], ["html", html]] as const) {
      assert(body, `a ${kind} part`);
      for (
        const expected of [link.url!, "Staff tees", "revision 1", "Gildan 5000 Black", "M × 40"]
      ) {
        assert(body.includes(expected), `${kind} names "${expected}": ${body}`);
      }
      assert(body.includes("Here is the artwork."), `${kind} carries the shop's note`);
      assert(body.includes(TEST_ORGANIZATION_NAME), `${kind} names the shop`);
    }
    await waitFor("the outbox to record it", async () => {
      const [row] = await h.sql<{ status: string }[]>`SELECT status FROM mail_messages`;
      return row?.status === "sent";
    }, 5_000);
    const entries = (await historyOf(h, org, p.id)).revisions[0]!.entries;
    assertEquals(entries.map((e) => [e.kind, e.sentTo, e.toStatus]), [
      ["sent", "sam@riversidebakery.com.au", "sent"],
    ]);
  } finally {
    await worker.stop();
  }
});

Deno.test("sendProofs: several proofs in one message; another organisation's proof is 400", async () => {
  await using smtp = await smtpServer();
  const smtpUrl = `smtp://127.0.0.1:${smtp.port}`;
  await using h: H = await serviceHarness(proofsService, { config: { SMTP_URL: smtpUrl } });
  const worker = await startMailWorker({ sql: h.sql, logger: h.deps.logger, smtpUrl }, FAST);
  try {
    const org = crypto.randomUUID();
    const front = await proof(h, org, { title: "Front print" });
    const back = await proof(h, org, {
      title: "Back print",
      items: [{ description: "Caps", sizes: [{ size: "OSFA", quantity: 5 }] }],
    });
    const foreign = await proof(h, crypto.randomUUID(), { title: "Not theirs" });

    const refused = await callAs(h, "POST", "/v1/proofs/send", org, {
      proofIds: [front.id, foreign.id, front.id],
    });
    assertEquals(refused.status, 400);
    assertEquals(refused.body.details?.map((d) => d.path), ["proofIds.1", "proofIds.2"]);
    const [written] = await h.sql<{ count: number }[]>`
      SELECT count(*)::int AS count FROM mail_messages`;
    assertEquals(written!.count, 0, "nothing is written");
    assertEquals((await historyOf(h, org, front.id)).proof.status, "draft");

    const sent = await okAs<ProofSendResult>(h, "POST", "/v1/proofs/send", org, {
      proofIds: [front.id, back.id],
      to: "orders@riversidebakery.com.au",
    });
    assertEquals(sent.proofs.map((p) => [p.id, p.status]), [[front.id, "sent"], [
      back.id,
      "sent",
    ]]);
    await waitFor("the message", () => Promise.resolve(smtp.received.length === 1), 10_000);
    const mail = smtp.received[0]!;
    assertEquals(mail.to, ["orders@riversidebakery.com.au"]);
    assertEquals(
      header(mail.raw, "Subject"),
      `${TEST_ORGANIZATION_NAME}: 2 proofs for your approval: Front print (revision 1), ` +
        "Back print (revision 1)",
    );
    const { "text/plain": text, "text/html": html } = parts(mail.raw);
    // Each proof with its own link, in the message's order.
    assertEquals(sent.links.map((l) => l.proofId), [front.id, back.id]);
    const [frontUrl, backUrl] = sent.links.map((l) => l.url!);
    assert(frontUrl !== backUrl, "one link per proof");
    for (const body of [text!, html!]) {
      for (const expected of [frontUrl!, backUrl!, "Front print", "Back print", "Caps"]) {
        assert(body.includes(expected), `names "${expected}": ${body}`);
      }
    }
    // Different recipients and no `to`: the message would have nobody to go to.
    const other = await proof(h, org, { recipientEmail: "lee@example.com" });
    const ambiguous = await callAs(h, "POST", "/v1/proofs/send", org, {
      proofIds: [other.id, front.id],
    });
    assertEquals(ambiguous.status, 400);
    assertEquals(ambiguous.body.details?.map((d) => d.path), ["to"]);
  } finally {
    await worker.stop();
  }
});

Deno.test("mail worker: a refusing server is retried, each failure in the history; the request does not wait", async () => {
  let refusals = 0;
  await using smtp = await smtpServer({
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onRcptTo(_address, _session, callback) {
      refusals++;
      const error = new Error("Mailbox unavailable") as Error & { responseCode: number };
      error.responseCode = 550;
      callback(error);
    },
  });
  const smtpUrl = `smtp://shop:hunter2secret@127.0.0.1:${smtp.port}`;
  await using h: H = await serviceHarness(proofsService, { config: { SMTP_URL: smtpUrl } });
  const worker = await startMailWorker({ sql: h.sql, logger: h.deps.logger, smtpUrl }, FAST);
  try {
    const org = crypto.randomUUID();
    const p = await proof(h, org);
    const started = performance.now();
    const answer = await callAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org);
    const elapsed = performance.now() - started;
    assertEquals(answer.status, 200);
    assert(elapsed < 1_000, `answered in ${elapsed} ms`);

    // Three attempts (two retries), then the message is given up.
    await waitFor("the attempts to run out", async () => {
      const [row] = await h.sql<{ status: string }[]>`SELECT status FROM mail_messages`;
      return row?.status === "failed";
    }, 10_000);
    // Each attempt reached the server (over one pooled connection or several).
    assertEquals(refusals, 3);
    assert(smtp.connections() >= 1);
    const [row] = await h.sql<{ attempts: number; last_error: string }[]>`
      SELECT attempts, last_error FROM mail_messages`;
    assertEquals(row!.attempts, 3);
    const entries = (await historyOf(h, org, p.id)).revisions[0]!.entries;
    assertEquals(entries.map((e) => e.kind), ["sent", "send_failed", "send_failed", "send_failed"]);
    for (const failed of entries.slice(1)) {
      assert(failed.note?.includes("Mailbox unavailable"), `the error: ${failed.note}`);
      assert(!failed.note?.includes("hunter2secret"), "no secret in the history");
      assertEquals(failed.sentTo, "sam@riversidebakery.com.au");
    }
    assertEquals(smtp.received.length, 0);
  } finally {
    await worker.stop();
  }
});

Deno.test("mail worker: every attempt of a message carries the same Message-ID, from its id in the outbox", async () => {
  // The first attempt reaches the server whole and is refused at its end (451, try later), as
  // one whose outcome a stopped worker never recorded would be seen twice; the retry is kept.
  const attempts: string[] = [];
  await using smtp = await smtpServer({
    onData(stream, _session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("end", () => {
        attempts.push(new TextDecoder().decode(concatBytes(chunks)));
        if (attempts.length > 1) return callback();
        const error = new Error("Try again later") as Error & { responseCode: number };
        error.responseCode = 451;
        callback(error);
      });
    },
  });
  const smtpUrl = `smtp://127.0.0.1:${smtp.port}?from=proofs@shop.example`;
  await using h: H = await serviceHarness(proofsService, { config: { SMTP_URL: smtpUrl } });
  const worker = await startMailWorker({ sql: h.sql, logger: h.deps.logger, smtpUrl }, FAST);
  try {
    const org = crypto.randomUUID();
    const p = await proof(h, org);
    assertEquals((await callAs(h, "POST", `/v1/proofs/${p.id}/send`, org)).status, 200);
    await waitFor("the retry to be accepted", async () => {
      const [row] = await h.sql<{ status: string }[]>`SELECT status FROM mail_messages`;
      return row?.status === "sent";
    }, 10_000);
    const [{ id } = { id: "" }] = await h.sql<{ id: string }[]>`SELECT id FROM mail_messages`;
    assertEquals(attempts.length, 2);
    assertEquals(attempts.map((raw) => header(raw, "message-id")), [
      `<${id}@shop.example>`,
      `<${id}@shop.example>`,
    ]);
  } finally {
    await worker.stop();
  }
});

Deno.test("sendProof without SMTP_URL: the message waits in the local outbox for the operator", async () => {
  await using h: H = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const sent = await callAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {
    to: "orders@riversidebakery.com.au",
  });
  assertEquals(sent.status, 200);
  assertEquals(sent.body.data.delivery, "local");
  assert(sent.body.message.includes("GET /admin/mail"), sent.body.message);

  const outbox = await callAs<OutboxMail[]>(h, "GET", "/internal/mail", org, undefined, [
    PLATFORM_MAIL_SCOPE,
  ]);
  assertEquals(outbox.status, 200);
  const [mail] = outbox.body.data;
  assertEquals(
    [mail!.organizationId, mail!.to, mail!.status, mail!.proofIds, mail!.attempts],
    [org, "orders@riversidebakery.com.au", "local", [p.id], 0],
  );
  assert(mail!.deliveredAt, "delivered locally");
  const url = sent.body.data.links[0]!.url!;
  assert(mail!.text.includes(url) && mail!.html.includes(url), "both parts carry the link");

  // A tenant's context, whatever its scopes, cannot read the platform's outbox.
  const tenant = await callAs(h, "GET", "/internal/mail", org, undefined, ALL_SCOPES);
  assertEquals(tenant.status, 401);
});

Deno.test("mail worker: an outcome for a claim another worker has since settled changes nothing", async () => {
  // SMTP_URL set and no worker running: the message waits, and the test claims it by hand.
  const smtpUrl = "smtp://127.0.0.1:9";
  await using h: H = await serviceHarness(proofsService, { config: { SMTP_URL: smtpUrl } });
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  await okAs(h, "POST", `/v1/proofs/${p.id}/send`, org, {});
  // A worker's lease runs out mid-attempt (a lease of 0 ms here); another claims the message
  // and the server accepts it.
  const [slow] = await claimDueMail(h.sql, 1, 0);
  const [fast] = await claimDueMail(h.sql, 1, 60_000);
  assert(slow && fast && slow.id === fast.id, "the message claimed twice");
  await markMailSent(h.sql, fast);
  // The first worker's attempt then times out: its failure is out of date.
  await recordMailFailure(h.sql, slow, "Connection timeout", 5_000);
  // Both attempts reach the server: the message is delivered once.
  await markMailSent(h.sql, slow);

  const [row] = await h.sql<{ status: string; attempts: number; last_error: string | null }[]>`
    SELECT status, attempts, last_error FROM mail_messages`;
  assertEquals([row!.status, row!.attempts, row!.last_error], ["sent", 1, null]);
  const entries = (await historyOf(h, org, p.id)).revisions[0]!.entries;
  assertEquals(entries.map((e) => e.kind), ["sent"], "no failure of a delivered message");
});

/**
 * The approval page as the gateway forwards it (a signed page context, the visitor's address and
 * browser): what it shows, the view on the first opening only, a decision with its evidence,
 * the form's anti-forgery checks, and a clear page for every link that no longer opens.
 * (e2e/proofs_approval_test.ts drives the same page through the gateway in Chromium.)
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  approvalPages,
  DECISION_WORDING,
  type Proof,
  type ProofSendResult,
} from "@printshop/shared/contracts/proofs";
import {
  INTERNAL_CONTEXT_HEADER,
  PLATFORM_ORGANIZATION_ID,
  signInternalContext,
} from "@printshop/shared/internal-context";
import {
  callAs,
  okAs,
  type ServiceHarness,
  serviceHarness,
  TEST_ORGANIZATION_NAME,
  TEST_PUBLIC_URL,
} from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { shownDigest } from "./domain/evidence.ts";
import { createProof, historyOf, whileHeld } from "./test_fixtures.ts";

type H = ServiceHarness<Config>;
const PAGE = approvalPages.approvalPage;
const VISITOR = { address: "203.0.113.7", userAgent: "Mozilla/5.0 (Test phone)" };

/** The fixture's proof with two images and two sizes, as the page tests read them. */
const proof = (h: H, org: string, body: Record<string, unknown> = {}): Promise<Proof> =>
  createProof(h, org, {
    imageUrls: ["https://files.example.com/front.png", "https://files.example.com/back.png"],
    items: [{
      description: "Gildan 5000 Black",
      sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 40 }],
    }],
    ...body,
  });

/** Sends `p` and answers the token of its link. */
async function send(h: H, org: string, p: Proof): Promise<string> {
  const sent = await okAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {});
  const url = sent.links[0]!.url!;
  assert(url.startsWith(`${TEST_PUBLIC_URL}/approve/`), url);
  return url.slice(`${TEST_PUBLIC_URL}/approve/`.length);
}

interface PageAnswer {
  status: number;
  headers: Headers;
  html: string;
}

/** A visit as the gateway forwards it. */
async function visit(
  h: H,
  token: string,
  init: {
    method?: "GET" | "HEAD" | "POST";
    form?: Record<string, string>;
    cookie?: string;
    headers?: Record<string, string>;
    scopes?: string[];
  } = {},
): Promise<PageAnswer> {
  const method = init.method ?? "GET";
  const target = PAGE.internalPath.replace("{token}", token);
  const headers = new Headers(init.headers);
  headers.set(
    INTERNAL_CONTEXT_HEADER,
    await signInternalContext(h.contextKey, method, target, {
      organizationId: PLATFORM_ORGANIZATION_ID,
      credentialKind: "tenant_key",
      credentialId: "page:approvalPage",
      scopes: init.scopes ?? [PAGE.internalScope],
      requestId: crypto.randomUUID(),
      issuedAt: Date.now(),
      publicUrl: TEST_PUBLIC_URL,
      client: VISITOR,
    }),
  );
  if (init.cookie) headers.set("cookie", init.cookie);
  let body: string | undefined;
  if (init.form) {
    headers.set("content-type", "application/x-www-form-urlencoded");
    body = new URLSearchParams(init.form).toString();
  }
  const res = await h.app.request(target, { method, headers, body });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** The form's hidden fields and the cookie a GET set: what a browser posts back. */
function formOf(page: PageAnswer): { cookie: string; form: Record<string, string> } {
  const cookie = page.headers.get("set-cookie")?.split(";")[0];
  assert(cookie, "the page sets the form's cookie");
  const hidden = (name: string): string => {
    const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(page.html)?.[1];
    assert(value, `hidden field ${name}`);
    return value;
  };
  return { cookie, form: { form: hidden("form"), digest: hidden("digest") } };
}

Deno.test("approval page: shows the shop, images and sizes; first opening alone is a view", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const token = await send(h, org, p);

  const page = await visit(h, token);
  assertEquals(page.status, 200);
  for (
    const expected of [
      TEST_ORGANIZATION_NAME,
      "Staff tees",
      "revision 1",
      'src="https://files.example.com/front.png"',
      'src="https://files.example.com/back.png"',
      "Gildan 5000 Black",
      "S&nbsp;×&nbsp;10",
      "M&nbsp;×&nbsp;40",
      ">50<",
      DECISION_WORDING.approve,
      DECISION_WORDING.request_changes,
    ]
  ) assert(page.html.includes(expected), `page shows ${expected}`);
  assert(!page.html.includes("<script"), "no script");
  const csp = page.headers.get("content-security-policy")!;
  assert(csp.includes("default-src 'none'") && csp.includes("form-action 'self'"), csp);
  // The one style sheet is the one the policy allows, byte for byte.
  const style = /<style>([\s\S]*?)<\/style>/.exec(page.html)![1]!;
  const hash = createHash("sha256").update(style).digest("base64");
  assert(csp.includes(`style-src 'sha256-${hash}'`), csp);
  assertEquals(page.headers.get("referrer-policy"), "same-origin");
  assertEquals(page.headers.get("x-frame-options"), "DENY");
  const cookie = page.headers.get("set-cookie")!;
  assert(/HttpOnly/i.test(cookie) && /SameSite=Strict/i.test(cookie), cookie);
  assert(/Path=\/approve\//.test(cookie), cookie);

  await visit(h, token);
  const entries = (await historyOf(h, org, p.id)).revisions[0]!.entries;
  // A HEAD before any GET reads nothing and records nothing.
  const unopened = await proof(h, org);
  assertEquals((await visit(h, await send(h, org, unopened), { method: "HEAD" })).status, 200);
  const headHistory = await historyOf(h, org, unopened.id);
  assertEquals(headHistory.proof.status, "sent");
  assertEquals(headHistory.revisions[0]!.entries.map((e) => e.kind), ["sent"]);
  assertEquals(entries.map((e) => [e.kind, e.toStatus, e.ipAddress, e.userAgent]), [
    ["sent", "sent", null, null],
    ["viewed", "viewed", VISITOR.address, VISITOR.userAgent],
  ]);
  const events = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${p.id} ORDER BY created_at, id`;
  assertEquals(events.filter((e) => e.type === "proof.viewed").length, 1);
});

Deno.test("approval page: a decision is recorded with its evidence and the page then shows it", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const token = await send(h, org, p);
  const page = await visit(h, token);
  const { cookie, form } = formOf(page);

  const posted = await visit(h, token, {
    method: "POST",
    cookie,
    headers: { "sec-fetch-site": "same-origin" },
    form: { ...form, decision: "approve", signerName: "Sam Nguyen", comment: "" },
  });
  assertEquals(posted.status, 303);
  assertEquals(posted.headers.get("location"), PAGE.path.replace("{token}", token));

  const history = await historyOf(h, org, p.id);
  assertEquals(history.proof.status, "approved");
  const decision = history.revisions[0]!.entries.find((e) => e.kind === "decision")!;
  assertEquals(decision.ipAddress, VISITOR.address);
  assertEquals(decision.userAgent, VISITOR.userAgent);
  assertEquals(decision.decision!.channel, "page");
  assertEquals(decision.decision!.signerName, "Sam Nguyen");
  assertEquals(decision.decision!.signerEmail, "sam@riversidebakery.com.au");
  assertEquals(decision.decision!.wording, DECISION_WORDING.approve);
  assertEquals(decision.decision!.digest, form.digest);
  assertEquals(shownDigest(decision.decision!.shown), form.digest);
  assertEquals(decision.decision!.shown.images, [
    "https://files.example.com/front.png",
    "https://files.example.com/back.png",
  ]);
  assertEquals(decision.credentialId, null);

  const after = await visit(h, token);
  assertEquals(after.status, 200);
  assert(after.html.includes("Sam Nguyen approved revision 1"), after.html);
  assert(!after.html.includes("<form"), "no form once decided");

  // Posting the same form again (a second tab) records nothing more.
  const again = await visit(h, token, {
    method: "POST",
    cookie,
    form: { ...form, decision: "request_changes", signerName: "Sam", comment: "Bigger" },
  });
  assertEquals(again.status, 409);
  const decisions = (await historyOf(h, org, p.id)).revisions[0]!.entries
    .filter((e) => e.kind === "decision");
  assertEquals(decisions.length, 1);
});

Deno.test("approval page: refused posts re-show the form and record nothing", async (t) => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const token = await send(h, org, p);
  const page = await visit(h, token);
  const { cookie, form } = formOf(page);
  const decisions = async (): Promise<number> =>
    (await historyOf(h, org, p.id)).revisions[0]!.entries.filter((e) => e.kind === "decision")
      .length;

  await t.step("no name, or changes without a comment: 400 with the field's message", async () => {
    const noName = await visit(h, token, {
      method: "POST",
      cookie,
      form: { ...form, decision: "approve", signerName: "  " },
    });
    assertEquals(noName.status, 400);
    assert(noName.html.includes("Give your name"), noName.html);
    const noComment = await visit(h, token, {
      method: "POST",
      cookie,
      form: { ...form, decision: "request_changes", signerName: "Sam <b>N</b>", comment: "" },
    });
    assertEquals(noComment.status, 400);
    assert(noComment.html.includes("Say what you would like changed"), noComment.html);
    assert(noComment.html.includes("Sam &lt;b&gt;N&lt;/b&gt;"), "the name typed is kept, escaped");
  });

  await t.step("a NUL in the name or comment: 400, nothing kept", async () => {
    for (const field of ["signerName", "comment"]) {
      const nul = await visit(h, token, {
        method: "POST",
        cookie,
        form: {
          ...form,
          decision: "request_changes",
          signerName: "Sam",
          comment: "x",
          [field]: "a\u0000b",
        },
      });
      assertEquals(nul.status, 400);
      assert(nul.html.includes("Must not contain NUL characters"), nul.html);
    }
  });

  await t.step("a form sent as anything but urlencoded: 403", async () => {
    const page = await visit(h, token, {
      method: "POST",
      cookie,
      headers: { "content-type": "application/x-www-form-urlencodedXYZ" },
    });
    assertEquals(page.status, 403);
  });

  await t.step("without the cookie, another cookie, or from another site: 403", async () => {
    for (
      const init of [
        { form: { ...form, decision: "approve", signerName: "Sam" } },
        {
          cookie: "proof_form=AAAAAAAAAAAAAAAAAAAAAA",
          form: { ...form, decision: "approve", signerName: "Sam" },
        },
        {
          cookie,
          headers: { "sec-fetch-site": "cross-site" },
          form: { ...form, decision: "approve", signerName: "Sam" },
        },
      ]
    ) {
      const refused = await visit(h, token, { method: "POST", ...init });
      assertEquals(refused.status, 403);
      assert(refused.html.includes("Please open the link again"), refused.html);
    }
  });

  await t.step(
    "a digest other than what the proof shows (an old or altered form): 409, the page again",
    async () => {
      // What a sent revision shows cannot change any more (evidence_test.ts); the digest still
      // binds the decision to the content the form was rendered with.
      const stale = await visit(h, token, {
        method: "POST",
        cookie,
        form: { ...form, digest: "0".repeat(64), decision: "approve", signerName: "Sam" },
      });
      assertEquals(stale.status, 409);
      assert(stale.html.includes("changed after the page showed it"), stale.html);
      assert(stale.html.includes(`value="${form.digest}"`), "the form carries the real digest");
    },
  );

  assertEquals(await decisions(), 0);
});

Deno.test("approval page: forged, expired, superseded and withdrawn links each say so", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();

  const forged = await visit(h, "A".repeat(43));
  assertEquals(forged.status, 404);
  assert(forged.html.includes("This link is not valid"));
  const garbage = await visit(h, "not-a-token");
  assertEquals(garbage.status, 404);

  const expiring = await proof(h, org);
  const expiredToken = await send(h, org, expiring);
  await h.sql`UPDATE approval_links SET expires_at = now() - interval '1 second'
    WHERE proof_id = ${expiring.id}`;
  const expired = await visit(h, expiredToken);
  assertEquals(expired.status, 410);
  assert(expired.html.includes("This link has expired") && expired.html.includes("30 days"));
  assert(expired.html.includes(TEST_ORGANIZATION_NAME), "names the shop to ask");

  const revised = await proof(h, org);
  const oldToken = await send(h, org, revised);
  await okAs(h, "POST", `/v1/proofs/${revised.id}/revise`, org, {
    imageUrls: ["https://files.example.com/front-v2.png"],
  });
  const superseded = await visit(h, oldToken);
  assertEquals(superseded.status, 410);
  assert(superseded.html.includes("newer version"), superseded.html);

  const deleted = await proof(h, org);
  const deletedToken = await send(h, org, deleted);
  await okAs(h, "DELETE", `/v1/proofs/${deleted.id}`, org);
  const withdrawn = await visit(h, deletedToken);
  assertEquals(withdrawn.status, 410);
  assert(withdrawn.html.includes("withdrew this proof"), withdrawn.html);
});

Deno.test("approval page: only the gateway's page context reaches it", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const token = await send(h, org, await proof(h, org));
  // A tenant's context, whatever its scopes, is not a page visit.
  const tenant = await visit(h, token, { scopes: [...ALL_SCOPES] });
  assertEquals(tenant.status, 401);
  const bare = await h.app.request(PAGE.internalPath.replace("{token}", token));
  assertEquals(bare.status, 401);
});

Deno.test("send: without proofs.approve, links are not shown and go to the recipient only", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const writer = ALL_SCOPES.filter((s) => s !== "proofs.approve");
  // Another address would hand the link, and so the decision, to whoever reads it.
  for (const to of ["attacker@evil.example"]) {
    const one = await callAs(h, "POST", `/v1/proofs/${p.id}/send`, org, { to }, writer);
    assertEquals(one.status, 403);
    assert(one.body.message.includes("proofs.approve"), one.body.message);
    const many = await callAs(h, "POST", "/v1/proofs/send", org, { proofIds: [p.id], to }, writer);
    assertEquals(many.status, 403);
  }
  assertEquals((await okAs<Proof>(h, "GET", `/v1/proofs/${p.id}`, org)).status, "draft");
  const [mail] = await h.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM mail_messages`;
  assertEquals(mail!.count, 0, "nothing was queued");

  // To the proof's own recipient (any case), it goes, and the answer hides the link.
  const sent = await callAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {
    to: "Sam@RiversideBakery.com.au",
  }, writer);
  assertEquals(sent.status, 200);
  assertEquals(sent.body.data.links.map((l) => [l.proofId, l.url]), [[p.id, null]]);
  // With proofs.approve, another address is the shop's choice.
  const approver = await callAs<ProofSendResult>(h, "POST", `/v1/proofs/${p.id}/send`, org, {
    to: "orders@riversidebakery.com.au",
  });
  assertEquals(approver.status, 200);
  assert(approver.body.data.links[0]!.url, "the approver sees the link");
});

Deno.test("approval page: a decision posted while the proof is deleted says it was withdrawn", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const token = await send(h, org, p);
  const { cookie, form } = formOf(await visit(h, token));
  const posted = await whileHeld(
    h,
    (tx) => tx`DELETE FROM proofs WHERE id = ${p.id}`,
    () =>
      visit(h, token, {
        method: "POST",
        cookie,
        form: { ...form, decision: "approve", signerName: "Sam Nguyen" },
      }),
  );
  assertEquals(posted.status, 410, posted.html);
  assert(posted.html.includes("withdrew this proof"), posted.html);
});

Deno.test("approval page: opened while a new revision is opened, the link is superseded and shows no draft", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  const p = await proof(h, org);
  const token = await send(h, org, p);
  const draft = "https://files.example.com/unsent-draft.png";
  const page = await whileHeld(
    h,
    async (tx) => {
      await tx`
        INSERT INTO proof_revisions (id, organization_id, proof_id, number, image_urls)
        VALUES (${crypto.randomUUID()}, ${org}, ${p.id}, 2, ${[draft]})`;
      await tx`UPDATE proofs SET current_revision = 2, status = 'draft' WHERE id = ${p.id}`;
    },
    () => visit(h, token),
  );
  assertEquals(page.status, 410, page.html);
  assert(page.html.includes("newer version"), page.html);
  assert(!page.html.includes(draft), "nothing of the unsent revision is shown");
});

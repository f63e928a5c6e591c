/**
 * A customer's approval, as a shop and its customer would live it, through the gateway only: a
 * quote with a line, a mock and a proof for it, the proof sent by email to a real SMTP server
 * (in this process), the link taken from the received message and opened in Debian's Chromium
 * at phone width, approved there; the history showing the send, the view and the decision with
 * its evidence, the events, a second revision, a size split. Then a change request on another
 * proof, and an expired link. The 390 px screenshot is kept in test-artefacts/.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@printshop/shared/db";
import { waitFor } from "@printshop/shared/net";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { artefactDir, launchBrowser, type Page } from "@printshop/shared/testing/browser";
import { parts, smtpServer } from "@printshop/shared/testing/smtp";
import { DECISION_WORDING } from "@printshop/shared/contracts/proofs";

type Json = Record<string, unknown>;

const PHONE = { width: 390, height: 844 };
const SHOP = "Inkwell Print Co";

Deno.test("a customer approves a proof from the link in their email, in Chromium", async () => {
  await using smtp = await smtpServer();
  await using stack: TestStack = await startTestStack({
    processEnv: {
      proofs: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}?from=proofs@inkwell.example` },
    },
  });
  const shop = await stack.tenant(undefined, SHOP);
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.call(shop.apiKey, method, path, body);
    const json = await res.json() as Json;
    assert(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data as Json;
  };
  /** The link of the newest message to `to`, as the customer's mail client shows it. */
  const linkInMail = async (to: string, count: number): Promise<string> => {
    await waitFor(`message ${count}`, () => Promise.resolve(smtp.received.length >= count), 15_000);
    const mail = smtp.received[count - 1]!;
    assertEquals(mail.to, [to]);
    const text = parts(mail.raw)["text/plain"]!;
    const url = /https?:\/\/\S+\/approve\/[A-Za-z0-9_-]{43}/.exec(text)?.[0];
    assert(url, `a link in the message: ${text}`);
    assert(parts(mail.raw)["text/html"]!.includes(`href="${url}"`), "the HTML part links it too");
    return url;
  };

  // The shop: a quote with a line, a mock of the artwork, a proof of both.
  const quote = await send("POST", "/v1/quotes", { reference: "Riverside staff tees" });
  const group = await send("POST", `/v1/quotes/${quote.id}/groups`, { name: "Staff tees" });
  const line = await send("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Gildan 5000 Black",
  });
  const mock = await send("POST", "/v1/mocks", {
    quoteId: quote.id,
    quoteGroupId: group.id,
    name: "Front print",
    images: ["https://files.example.com/front.png"],
  });
  const proof = await send("POST", "/v1/proofs", {
    quoteId: quote.id,
    title: "Staff tees",
    recipientName: "Sam Nguyen",
    recipientEmail: "sam@riversidebakery.com.au",
    mockIds: [mock.id],
    notes: "Logo 10 cm wide, centred",
    items: [{
      quoteLineId: line.id,
      description: "Gildan 5000 Black",
      sizes: [{ size: "S", quantity: 10 }, { size: "M", quantity: 40 }, {
        size: "L",
        quantity: 20,
      }],
    }],
  });
  const sent = await send("POST", `/v1/proofs/${proof.id}/send`, { message: "For approval" });
  assertEquals(sent.delivery, "queued");
  const url = await linkInMail("sam@riversidebakery.com.au", 1);
  assertEquals((sent.links as Json[])[0]!.url, url);

  await using browser = await launchBrowser();
  const page: Page = await browser.newPage(PHONE);
  const opened = await page.goto(url);
  assertEquals(opened?.status(), 200);
  const body = await page.locator("body").innerText();
  for (const expected of [SHOP, "Staff tees", "revision 1", "Gildan 5000 Black", "70"]) {
    assert(body.includes(expected), `the page shows ${expected}: ${body}`);
  }
  assertEquals(
    await page.locator("img").getAttribute("src"),
    "https://files.example.com/front.png",
  );
  // Readable on a phone: nothing wider than the screen.
  const scrollWidth = await page.evaluate<number>(
    "document.documentElement.scrollWidth",
  );
  assert(scrollWidth <= PHONE.width, `no sideways scrolling (${scrollWidth}px)`);
  // The style sheet applies (the policy allows it by its hash): the approve button is green.
  const colour = await page.evaluate<string>(
    "getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor",
  );
  assertEquals(colour, "rgb(26, 127, 55)");
  const shot = join(await artefactDir(), "proof-approval-390.png");
  await page.screenshot({ path: shot, fullPage: true });
  assert((await Deno.stat(shot)).size > 0, "screenshot kept");

  // Enter in the name field chooses nothing: the browser asks for a choice, nothing is posted.
  await page.fill("#signerName", "Sam Nguyen");
  await page.press("#signerName", "Enter");
  assertEquals(page.url(), url);
  const waiting = await send("GET", `/v1/proofs/${proof.id}`);
  assertEquals(waiting.status, "viewed", "still waiting for a decision");

  await page.check("input[value=approve]");
  await page.click("button[type=submit]");
  await page.waitForLoadState();
  const done = await page.locator("body").innerText();
  assert(done.includes("Sam Nguyen approved revision 1"), done);

  // The shop sees the status, and the history holds the send, the view and the decision.
  const history = await send("GET", `/v1/proofs/${proof.id}/history`);
  assertEquals((history.proof as Json).status, "approved");
  const entries = ((history.revisions as Json[])[0]!.entries) as Json[];
  assertEquals(entries.map((e) => e.kind), ["sent", "viewed", "decision"]);
  const [, viewed, decided] = entries as [Json, Json, Json];
  const userAgent = await page.evaluate<string>("navigator.userAgent");
  assertEquals([viewed.ipAddress, viewed.userAgent], ["127.0.0.1", userAgent]);
  assertEquals([decided.ipAddress, decided.userAgent], ["127.0.0.1", userAgent]);
  const decision = decided.decision as Json;
  assertEquals(
    [decision.channel, decision.signerName, decision.signerEmail, decision.wording],
    ["page", "Sam Nguyen", "sam@riversidebakery.com.au", DECISION_WORDING.approve],
  );
  assertEquals((decision.shown as Json).images, ["https://files.example.com/front.png"]);
  assert(/^[0-9a-f]{64}$/.test(decision.digest as string));

  const sql = connect(stack.db.url, { schema: "proofs", max: 1 });
  try {
    const events = await sql<{ type: string; payload: Json }[]>`
      SELECT type, payload FROM outbox WHERE aggregate_id = ${proof.id as string}
      ORDER BY created_at, id`;
    const types = events.map((e) => e.type);
    for (const type of ["proof.sent", "proof.viewed", "proof.client_decision_recorded"]) {
      assert(types.includes(type), `${type} among ${types.join(", ")}`);
    }
    const recorded = events.find((e) => e.type === "proof.client_decision_recorded")!;
    assertEquals(((recorded.payload.entry as Json).decision as Json).digest, decision.digest);

    // The shop opens a second revision and confirms the size split.
    const revised = await send("POST", `/v1/proofs/${proof.id}/revise`, {
      mockIds: [mock.id],
      notes: "Logo 8 cm",
    });
    assertEquals([(revised.revision as Json).number, revised.status], [2, "draft"]);
    const item = (revised.items as Json[])[0]!;
    const split = await send("POST", `/v1/proof-item-links/${item.id}/size-split`, {
      sizes: [{ size: "S", quantity: 12 }, { size: "M", quantity: 38 }, {
        size: "L",
        quantity: 20,
      }],
    });
    assertEquals(split.confirmedSizes, [
      { size: "S", quantity: 12 },
      { size: "M", quantity: 38 },
      { size: "L", quantity: 20 },
    ]);
    // The first email's link is now superseded.
    const old = await page.goto(url);
    assertEquals(old?.status(), 410);
    assert((await page.locator("h1").innerText()).includes("newer version"));

    // Another proof: the customer asks for changes.
    const second = await send("POST", "/v1/proofs", {
      quoteId: quote.id,
      title: "Caps",
      recipientName: "Sam Nguyen",
      recipientEmail: "sam@riversidebakery.com.au",
      imageUrls: ["https://files.example.com/cap.png"],
    });
    await send("POST", `/v1/proofs/${second.id}/send`, {});
    const capsUrl = await linkInMail("sam@riversidebakery.com.au", 2);
    await page.goto(capsUrl);
    await page.fill("#signerName", "Sam Nguyen");
    await page.check("input[value=request_changes]");
    await page.click("button[type=submit]");
    await page.waitForLoadState();
    // No comment: the form says what is missing and nothing is recorded.
    assert(
      (await page.locator("body").innerText()).includes("Say what you would like changed"),
    );
    await page.fill("#comment", "Make the logo navy");
    // The choice is kept when the form comes back.
    assert(await page.isChecked("input[value=request_changes]"));
    await page.click("button[type=submit]");
    await page.waitForLoadState();
    assert((await page.locator("body").innerText()).includes("requested changes to revision 1"));
    const caps = await send("GET", `/v1/proofs/${second.id}/history`);
    assertEquals((caps.proof as Json).status, "changes_requested");

    // A third proof whose link has expired.
    const third = await send("POST", "/v1/proofs", {
      quoteId: quote.id,
      title: "Aprons",
      recipientName: "Sam Nguyen",
      recipientEmail: "sam@riversidebakery.com.au",
      imageUrls: ["https://files.example.com/apron.png"],
    });
    await send("POST", `/v1/proofs/${third.id}/send`, {});
    const apronUrl = await linkInMail("sam@riversidebakery.com.au", 3);
    await sql`UPDATE approval_links SET expires_at = now() - interval '1 minute'
      WHERE proof_id = ${third.id as string}`;
    const expired = await page.goto(apronUrl);
    assertEquals(expired?.status(), 410);
    assert((await page.locator("h1").innerText()).includes("This link has expired"));
    const apron = await send("GET", `/v1/proofs/${third.id}/history`);
    assertEquals((apron.proof as Json).status, "sent", "an expired link records no view");
  } finally {
    await sql.end();
  }
  // No token in any log line.
  const logs = await stack.logs();
  const token = url.slice(url.lastIndexOf("/") + 1);
  assert(!logs.includes(token), "the link's token never reaches a log");
});

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Webhook } from "standardwebhooks";
import { generateSigningSecret, signatureHeaders } from "./signing.ts";

const BODY = JSON.stringify({ type: "quote.sent", data: { quoteId: "q_1", total: "12.50" } });

Deno.test("generateSigningSecret() gives whsec_ and 32 random bytes in base64", () => {
  const first = generateSigningSecret();
  const second = generateSigningSecret();
  for (const secret of [first, second]) {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice("whsec_".length), "base64").length, 32);
  }
  assert.notEqual(first, second);
});

Deno.test("signatureHeaders() gives the Standard Webhooks headers", async (t) => {
  const secret = generateSigningSecret();
  const timestamp = new Date("2026-03-01T10:20:30.999Z");
  const headers = signatureHeaders({ id: "msg_1", timestamp, body: BODY, secrets: [secret] });

  await t.step("webhook-id and webhook-timestamp in whole unix seconds", () => {
    assert.deepEqual(Object.keys(headers).sort(), [
      "webhook-id",
      "webhook-signature",
      "webhook-timestamp",
    ]);
    assert.equal(headers["webhook-id"], "msg_1");
    assert.equal(headers["webhook-timestamp"], String(Math.floor(timestamp.getTime() / 1000)));
  });

  await t.step("webhook-signature is the v1 HMAC the reference library computes", () => {
    const expected = new Webhook(secret).sign("msg_1", timestamp, BODY);
    assert.equal(headers["webhook-signature"], expected);
    assert.match(headers["webhook-signature"] ?? "", /^v1,[A-Za-z0-9+/]{43}=$/);
  });

  await t.step("a fixed secret and message give a fixed signature", () => {
    const fixed = signatureHeaders({
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: new Date(1614265330 * 1000),
      body: '{"test": 2432232314}',
      secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    });
    // The example from the Standard Webhooks specification.
    assert.equal(
      fixed["webhook-signature"],
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });
});

Deno.test("signatureHeaders() verifies with the standardwebhooks package", async (t) => {
  const secret = generateSigningSecret();
  const headers = signatureHeaders({
    id: "msg_2",
    timestamp: new Date(),
    body: BODY,
    secrets: [secret],
  });

  await t.step("the exact body verifies", () => {
    assert.deepEqual(new Webhook(secret).verify(BODY, headers), JSON.parse(BODY));
  });

  await t.step("a tampered body fails", () => {
    assert.throws(() => new Webhook(secret).verify(BODY.replace("12.50", "1.25"), headers));
  });

  await t.step("a tampered id or timestamp fails", () => {
    assert.throws(() => new Webhook(secret).verify(BODY, { ...headers, "webhook-id": "msg_3" }));
    const timestamp = String(Number(headers["webhook-timestamp"]) - 1);
    assert.throws(() =>
      new Webhook(secret).verify(BODY, { ...headers, "webhook-timestamp": timestamp })
    );
  });

  await t.step("another secret fails", () => {
    assert.throws(() => new Webhook(generateSigningSecret()).verify(BODY, headers));
  });
});

Deno.test("signatureHeaders() signs once per secret, so each secret alone verifies", () => {
  const oldSecret = generateSigningSecret();
  const newSecret = generateSigningSecret();
  const timestamp = new Date();
  const headers = signatureHeaders({
    id: "msg_4",
    timestamp,
    body: BODY,
    secrets: [newSecret, oldSecret],
  });
  const signatures = (headers["webhook-signature"] ?? "").split(" ");
  assert.equal(signatures.length, 2);
  assert.deepEqual(signatures, [
    new Webhook(newSecret).sign("msg_4", timestamp, BODY),
    new Webhook(oldSecret).sign("msg_4", timestamp, BODY),
  ]);
  assert.deepEqual(new Webhook(oldSecret).verify(BODY, headers), JSON.parse(BODY));
  assert.deepEqual(new Webhook(newSecret).verify(BODY, headers), JSON.parse(BODY));
  assert.throws(() => new Webhook(generateSigningSecret()).verify(BODY, headers));
});

Deno.test("signatureHeaders() signs the body as UTF-8", () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify({ name: "Café Ōtautahi ✓ 🎽" });
  const headers = signatureHeaders({ id: "msg_5", timestamp: new Date(), body, secrets: [secret] });
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
});

Deno.test("signatureHeaders() refuses a missing or malformed secret", () => {
  const input = { id: "msg_6", timestamp: new Date(), body: BODY };
  assert.throws(() => signatureHeaders({ ...input, secrets: [] }), /At least one signing secret/);
  assert.throws(
    () => signatureHeaders({ ...input, secrets: ["c2VjcmV0"] }),
    /must start with "whsec_"/,
  );
  assert.throws(() => signatureHeaders({ ...input, secrets: ["whsec_"] }), /must be base64/);
  assert.throws(
    () => signatureHeaders({ ...input, secrets: ["whsec_not base64!"] }),
    /must be base64/,
  );
  assert.throws(
    () => signatureHeaders({ ...input, timestamp: new Date(Number.NaN), secrets: ["whsec_AA=="] }),
    /not a valid date/,
  );
});

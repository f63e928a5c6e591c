import assert from "node:assert/strict";
import { createSecretBox } from "./secret_box.ts";

const KEY_MATERIAL = "test-key-material-0123456789abcdef-0123456789";
const OTHER_KEY_MATERIAL = "other-key-material-0123456789abcdef-012345678";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

Deno.test("createSecretBox() seals and opens a secret", async (t) => {
  const box = await createSecretBox(KEY_MATERIAL);

  await t.step("the round trip gives the plaintext back", async () => {
    assert.equal(await box.open(await box.seal(SECRET)), SECRET);
    assert.equal(await box.open(await box.seal("")), "");
    assert.equal(await box.open(await box.seal("Ōtautahi ✓ 🎽")), "Ōtautahi ✓ 🎽");
  });

  await t.step("a box from the same key material opens it", async () => {
    const again = await createSecretBox(KEY_MATERIAL);
    assert.equal(await again.open(await box.seal(SECRET)), SECRET);
  });

  await t.step("the layout is version, 12-byte IV, ciphertext and 16-byte tag", async () => {
    const sealed = await box.seal(SECRET);
    assert.equal(sealed[0], 1);
    assert.equal(sealed.length, 1 + 12 + SECRET.length + 16);
    const plainBytes = new TextEncoder().encode(SECRET);
    const asText = new TextDecoder().decode(sealed);
    assert.ok(!asText.includes(SECRET));
    assert.notDeepEqual(sealed.slice(13, 13 + plainBytes.length), plainBytes);
  });

  await t.step("each seal uses a fresh IV, so equal secrets seal differently", async () => {
    const sealed = await Promise.all(Array.from({ length: 20 }, () => box.seal(SECRET)));
    const ivs = new Set(sealed.map((s) => Array.from(s.slice(1, 13)).join(",")));
    const whole = new Set(sealed.map((s) => Array.from(s).join(",")));
    assert.equal(ivs.size, 20);
    assert.equal(whole.size, 20);
  });
});

Deno.test("createSecretBox() open() refuses anything altered", async (t) => {
  const box = await createSecretBox(KEY_MATERIAL);
  const sealed = await box.seal(SECRET);
  const altered = /altered or sealed under another key/;

  for (
    const [name, index] of [["IV", 1], ["ciphertext", 20], ["tag", sealed.length - 1]] as const
  ) {
    await t.step(`a flipped bit in the ${name}`, async () => {
      const tampered = sealed.slice();
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      await assert.rejects(box.open(tampered), altered);
    });
  }

  await t.step("a changed version byte", async () => {
    const tampered = sealed.slice();
    tampered[0] = 2;
    await assert.rejects(box.open(tampered), /unknown format version 2/);
  });

  await t.step("a truncated value", async () => {
    await assert.rejects(box.open(sealed.slice(0, sealed.length - 1)), altered);
    await assert.rejects(box.open(sealed.slice(0, 20)), /too short/);
    await assert.rejects(box.open(new Uint8Array()), /too short/);
  });

  await t.step("an extended value", async () => {
    const extended = new Uint8Array(sealed.length + 1);
    extended.set(sealed);
    await assert.rejects(box.open(extended), altered);
  });
});

Deno.test("createSecretBox() open() refuses a value sealed under another key", async () => {
  const box = await createSecretBox(KEY_MATERIAL);
  const other = await createSecretBox(OTHER_KEY_MATERIAL);
  await assert.rejects(
    other.open(await box.seal(SECRET)),
    /Sealed webhook secret could not be opened: it was altered or sealed under another key/,
  );
});

Deno.test("createSecretBox() refuses key material shorter than 32 characters", async () => {
  await assert.rejects(createSecretBox("x".repeat(31)), /at least 32 characters/);
  await assert.rejects(createSecretBox(""), /at least 32 characters/);
  await createSecretBox("x".repeat(32));
});

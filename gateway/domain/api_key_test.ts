import assert from "node:assert/strict";
import {
  base64Url,
  generateApiKey,
  hashSecret,
  parseApiKey,
  sameBytes,
  sameSecret,
} from "./api_key.ts";

const LOOKUP = "AbCdEfGh12345678";
const SECRET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJK-_0123"; // 43 base64url characters
const VALID = `psk_${LOOKUP}_${SECRET}`;

Deno.test("generateApiKey() makes psk_<16 alphanumerics>_<43 base64url> keys", () => {
  for (let i = 0; i < 200; i++) {
    const key = generateApiKey();
    assert.match(key.token, /^psk_[A-Za-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.token, `psk_${key.lookup}_${key.secret}`);
  }
});

Deno.test("generateApiKey() never repeats a lookup or a secret", () => {
  const keys = Array.from({ length: 1000 }, () => generateApiKey());
  assert.equal(new Set(keys.map((k) => k.lookup)).size, keys.length);
  assert.equal(new Set(keys.map((k) => k.secret)).size, keys.length);
});

Deno.test("generateApiKey() uses the whole alphabet for lookups", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) for (const ch of generateApiKey().lookup) seen.add(ch);
  assert.equal(seen.size, 62, "all of A-Z, a-z and 0-9 show up");
});

Deno.test("parseApiKey() round-trips a generated key", () => {
  for (let i = 0; i < 200; i++) {
    const key = generateApiKey();
    assert.deepEqual(parseApiKey(key.token), { lookup: key.lookup, secret: key.secret });
  }
  assert.deepEqual(parseApiKey(VALID), { lookup: LOOKUP, secret: SECRET });
});

Deno.test("parseApiKey() refuses near-misses", () => {
  const nearMisses: Record<string, string> = {
    "no prefix": `${LOOKUP}_${SECRET}`,
    "upper-case prefix": `PSK_${LOOKUP}_${SECRET}`,
    "other prefix": `pk_${LOOKUP}_${SECRET}`,
    "dash after prefix": `psk-${LOOKUP}_${SECRET}`,
    "dash between parts": `psk_${LOOKUP}-${SECRET}`,
    "short lookup": `psk_${LOOKUP.slice(1)}_${SECRET}`,
    "long lookup": `psk_${LOOKUP}X_${SECRET}`,
    "lookup with underscore": `psk_AbCdEfGh_2345678_${SECRET}`,
    "lookup with dash": `psk_AbCdEfGh-2345678_${SECRET}`,
    "short secret": `psk_${LOOKUP}_${SECRET.slice(1)}`,
    "long secret": `psk_${LOOKUP}_${SECRET}A`,
    "padded secret": `psk_${LOOKUP}_${SECRET.slice(1)}=`,
    "standard base64 secret": `psk_${LOOKUP}_${SECRET.slice(2)}+/`,
    "leading space": ` ${VALID}`,
    "trailing space": `${VALID} `,
    "trailing newline": `${VALID}\n`,
    "Bearer prefix": `Bearer ${VALID}`,
    "empty": "",
  };
  for (const [what, token] of Object.entries(nearMisses)) {
    assert.equal(parseApiKey(token), null, what);
  }
});

Deno.test("hashSecret() is SHA-256: 32 bytes, same input same hash", async () => {
  const hash = await hashSecret("secret");
  assert.equal(hash.length, 32);
  assert.equal(
    Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join(""),
    "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b",
  );
  assert.deepEqual(await hashSecret("secret"), hash);
  assert.notDeepEqual(await hashSecret("Secret"), hash);
});

Deno.test("sameBytes() compares byte strings, unequal lengths included", () => {
  assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
  assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
  assert.equal(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2])), false);
  assert.equal(sameBytes(new Uint8Array([]), new Uint8Array([0])), false);
  assert.equal(sameBytes(new Uint8Array([]), new Uint8Array([])), true);
});

Deno.test("sameSecret() compares strings of any length without throwing", async () => {
  const token = "platform-admin-token-0123456789";
  assert.equal(await sameSecret(token, token), true);
  assert.equal(await sameSecret(`${token}x`, token), false);
  assert.equal(await sameSecret(token.slice(0, -1), token), false);
  assert.equal(await sameSecret(token.toUpperCase(), token), false);
  assert.equal(await sameSecret("", token), false);
  assert.equal(await sameSecret("ünïcödé", "ünïcödé"), true);
});

Deno.test("base64Url() encodes without padding or + and /", () => {
  assert.equal(base64Url(new Uint8Array([0xfb, 0xff, 0xbf])), "-_-_");
  assert.equal(base64Url(new Uint8Array([0x66])), "Zg");
  assert.equal(base64Url(new Uint8Array(32)).length, 43);
});

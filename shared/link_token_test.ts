import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { deriveLinkKey, linkToken, verifyLinkToken } from "./link_token.ts";

const secret = new TextEncoder().encode("an internal secret of the platform, for tests");
const key = deriveLinkKey(secret, "printshop proof approval links v1");
const linkId = "0190a5a4-9c3e-7b1d-8f00-123456789abc";

Deno.test("verifyLinkToken: a token answers the link it was made for", () => {
  const token = linkToken(key, linkId);
  assertEquals(token.length, 43);
  assertEquals(verifyLinkToken(key, token), linkId);
});

Deno.test("verifyLinkToken: a token altered, cut short or made with another key is refused", () => {
  const token = linkToken(key, linkId);
  const flipped = token.slice(0, 10) + (token[10] === "A" ? "B" : "A") + token.slice(11);
  assertEquals(verifyLinkToken(key, flipped), null);
  assertEquals(verifyLinkToken(key, token.slice(0, 42)), null);
  assertEquals(verifyLinkToken(key, `${token}A`), null);
  assertEquals(verifyLinkToken(key, ""), null);
  // Another page's label, or another platform's secret, is another key.
  assertEquals(verifyLinkToken(deriveLinkKey(secret, "another page"), token), null);
  const otherSecret = new TextEncoder().encode("another platform's internal secret");
  assertEquals(
    verifyLinkToken(deriveLinkKey(otherSecret, "printshop proof approval links v1"), token),
    null,
  );
});

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

Deno.test("verifyLinkToken: one spelling per token (base64url's spare bits are refused)", () => {
  const token = linkToken(key, linkId);
  // 43 characters carry 258 bits for 256: flipping the last character's lowest bit spells the
  // same bytes another way.
  const respelled = token.slice(0, 42) + BASE64URL[BASE64URL.indexOf(token[42]!) ^ 1]!;
  assertEquals(verifyLinkToken(key, respelled), null);
});

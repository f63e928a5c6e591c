/**
 * Link tokens: the path parameter of a public page (the proof approval page), signed by the
 * service that sends the link and checked by the gateway before anything else, so a forged or
 * mistyped token costs one HMAC, never a database read. Pure: HMAC-SHA256 with a key derived
 * from the platform's internal secret and the page's label (`PageSpec.linkTokenLabel`).
 *
 * A token is the link's id (16 bytes) and a 16-byte MAC of it, as 43 characters of base64url:
 * unguessable (the MAC) and short enough for an email client not to break it. What the link is
 * bound to (proof, revision, recipient, expiry, revocation) is the link's row, so it can be
 * superseded or revoked without reissuing anything.
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { uuidBytes, uuidFromBytes } from "./ids.ts";

/** The key a page's tokens are signed with, separate from the internal-context key. */
export interface LinkKey {
  readonly secret: Uint8Array;
}

const MAC_BYTES = 16;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Derives a page's link key from the internal secret: one secret to keep, separate uses. */
export function deriveLinkKey(internalSecret: Uint8Array, label: string): LinkKey {
  return {
    secret: new Uint8Array(createHmac("sha256", internalSecret).update(label).digest()),
  };
}

/** The MAC of `parts` for one `purpose` under a link key (a link, or a form of its page). */
export function linkKeyMac(
  key: LinkKey,
  purpose: string,
  ...parts: (string | Uint8Array)[]
): Buffer {
  const h = createHmac("sha256", key.secret).update(purpose);
  for (const part of parts) h.update("\n").update(part);
  return h.digest();
}

/** The token of the link `linkId` (a UUID). */
export function linkToken(key: LinkKey, linkId: string): string {
  const id = uuidBytes(linkId);
  const signature = linkKeyMac(key, "link", id).subarray(0, MAC_BYTES);
  return Buffer.concat([id, signature]).toString("base64url");
}

/**
 * The link id a token names, or null when the token is not one this key signed (malformed,
 * mistyped or forged; compared in constant time).
 */
export function verifyLinkToken(key: LinkKey, token: string): string | null {
  if (!TOKEN_PATTERN.test(token)) return null;
  const bytes = Buffer.from(token, "base64url");
  // One spelling per token: base64url's last character has spare bits.
  if (bytes.length !== 16 + MAC_BYTES || bytes.toString("base64url") !== token) return null;
  const id = bytes.subarray(0, 16);
  const expected = linkKeyMac(key, "link", id).subarray(0, MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(16), expected)) return null;
  return uuidFromBytes(id);
}

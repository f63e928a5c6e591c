/**
 * Approval link tokens and the approval form's anti-forgery token. Pure: HMAC-SHA256 with a key
 * derived from the platform's internal secret.
 *
 * A link token is the link's id (16 bytes) and a 16-byte MAC of it, as 43 characters of
 * base64url: unguessable (the MAC), checked before any database read (a forged or mistyped
 * token costs one HMAC), and short enough for an email client not to break it. What the link is
 * bound to (proof, revision, recipient, expiry, revocation) is the link's row, so it can be
 * superseded or revoked without reissuing anything.
 */
import { Buffer } from "node:buffer";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { uuidBytes, uuidFromBytes } from "@printshop/shared/ids";
import { approvalPages } from "@printshop/shared/contracts/proofs";

/** The key the tokens are signed with, separate from the internal-context key it comes from. */
export interface LinkKey {
  readonly secret: Uint8Array;
}

const LINK_LABEL = "printshop proof approval links v1";
const MAC_BYTES = 16;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Derives the link key from the internal secret: one secret to keep, two separate uses. */
export function deriveLinkKey(internalSecret: Uint8Array): LinkKey {
  return {
    secret: new Uint8Array(createHmac("sha256", internalSecret).update(LINK_LABEL).digest()),
  };
}

function mac(key: LinkKey, purpose: string, ...parts: (string | Uint8Array)[]): Buffer {
  const h = createHmac("sha256", key.secret).update(purpose);
  for (const part of parts) h.update("\n").update(part);
  return h.digest();
}

/** The token of the link `linkId` (a UUID). */
export function linkToken(key: LinkKey, linkId: string): string {
  const id = uuidBytes(linkId);
  const signature = mac(key, "link", id).subarray(0, MAC_BYTES);
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
  const expected = mac(key, "link", id).subarray(0, MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(16), expected)) return null;
  return uuidFromBytes(id);
}

/** A random value for the form's cookie. */
export function newFormNonce(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * The form's anti-forgery token: tied to the link and to the nonce of the visitor's cookie, so a
 * post counts only from a page this service rendered for that browser (double submit, signed).
 */
export function formToken(key: LinkKey, linkId: string, nonce: string): string {
  return mac(key, "form", linkId, nonce).toString("base64url");
}

export function formTokenMatches(
  key: LinkKey,
  linkId: string,
  nonce: string | null,
  given: string | null,
): boolean {
  if (!nonce || !given || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) return false;
  const expected = Buffer.from(formToken(key, linkId, nonce));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The page's public URL for `token`, on the gateway at `publicUrl`. */
export function approvalUrl(publicUrl: string, token: string): string {
  return publicUrl.replace(/\/+$/, "") + approvalPages.approvalPage.path.replace("{token}", token);
}

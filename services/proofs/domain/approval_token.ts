/**
 * The approval page's tokens. The link token itself is shared with the gateway, which checks it
 * before anything else (`@printshop/shared/link-token`, keyed by the page's `linkTokenLabel`);
 * here are the form's anti-forgery token, under the same key, and the page's public URL.
 */
import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { approvalPages } from "@printshop/shared/contracts/proofs";
import { deriveLinkKey, type LinkKey, linkKeyMac } from "@printshop/shared/link-token";

/** The approval page's link key, from the internal secret and the page's declared label. */
export function approvalLinkKey(internalSecret: Uint8Array): LinkKey {
  return deriveLinkKey(internalSecret, approvalPages.approvalPage.linkTokenLabel);
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
  return linkKeyMac(key, "form", linkId, nonce).toString("base64url");
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

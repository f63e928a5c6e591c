import { fromBase64Url, toBase64Url } from "./base64url.ts";
import { createHmac, timingSafeEqual } from "node:crypto";
/**
 * The context the gateway hands to a service: who is calling, for which organisation, with which
 * scopes. It is signed with HMAC-SHA256 over the method, the path with its query, and the
 * payload, and carries its issue time, so a service can trust it without seeing the credential
 * and a captured header cannot be replayed against another request target or after it goes
 * stale. (The body is not covered: binding it would mean hashing every body twice.)
 */
export const INTERNAL_CONTEXT_HEADER = "x-internal-context";

export type CredentialKind = "tenant_key" | "partner";

export interface InternalContext {
  organizationId: string;
  credentialKind: CredentialKind;
  credentialId: string;
  scopes: string[];
  requestId: string;
  issuedAt: number;
  /**
   * The organisation's name as the shop set it, for what a service writes to the shop's own
   * customers (the proof email and its approval page name the shop).
   */
  organizationName?: string;
  /**
   * The gateway's public base URL (no trailing slash), for links a service puts in what it sends:
   * a customer's approval link must point at the gateway, which the service cannot know.
   */
  publicUrl?: string;
  /** A public page's visitor (no credential), as the gateway's edge saw them. */
  client?: { address: string | null; userAgent: string | null };
}

/**
 * The organisation of a context the platform signs for itself (the admin API reading the mail
 * outbox, a public page's visit): none, and no tenant credential.
 */
export const PLATFORM_ORGANIZATION_ID = "00000000-0000-0000-0000-000000000000";

/** How long a signed context stays valid; the proxy timeout is well under this. */
export const INTERNAL_CONTEXT_MAX_AGE_MS = 60_000;

const encoder = new TextEncoder();

/**
 * The HMAC key of INTERNAL_SECRET. node:crypto's synchronous HMAC is used rather than Web
 * Crypto: this runs twice on every request, and for inputs this small the synchronous call is
 * several times cheaper than an async Web Crypto operation.
 */
export interface ContextKey {
  readonly secret: Uint8Array;
}

export function importContextKey(secret: string): Promise<ContextKey> {
  return Promise.resolve({ secret: encoder.encode(secret) });
}

function mac(key: ContextKey, method: string, target: string, payload: string): Uint8Array {
  return new Uint8Array(
    createHmac("sha256", key.secret).update(`${method.toUpperCase()}\n${target}\n${payload}`)
      .digest(),
  );
}

export function signInternalContext(
  key: ContextKey,
  method: string,
  target: string,
  context: InternalContext,
): Promise<string> {
  const payload = toBase64Url(encoder.encode(JSON.stringify(context)));
  return Promise.resolve(`${payload}.${toBase64Url(mac(key, method, target, payload))}`);
}

export type VerifyFailure = "missing" | "malformed" | "bad_signature" | "stale";

/** Verifies a header value; the MAC is compared in constant time. */
export function verifyInternalContext(
  key: ContextKey,
  method: string,
  target: string,
  header: string | undefined | null,
  now: number = Date.now(),
): Promise<{ ok: true; context: InternalContext } | { ok: false; reason: VerifyFailure }> {
  return Promise.resolve(verify(key, method, target, header, now));
}

function verify(
  key: ContextKey,
  method: string,
  target: string,
  header: string | undefined | null,
  now: number,
): { ok: true; context: InternalContext } | { ok: false; reason: VerifyFailure } {
  if (!header) return { ok: false, reason: "missing" };
  const [payload, given, extra] = header.split(".");
  if (payload === undefined || given === undefined || extra !== undefined) {
    return { ok: false, reason: "malformed" };
  }
  const givenBytes = fromBase64Url(given);
  if (!givenBytes || fromBase64Url(payload) === null) return { ok: false, reason: "malformed" };
  const expected = mac(key, method, target, payload);
  if (givenBytes.length !== expected.length || !timingSafeEqual(givenBytes, expected)) {
    return { ok: false, reason: "bad_signature" };
  }
  let context: InternalContext;
  try {
    context = JSON.parse(new TextDecoder().decode(fromBase64Url(payload)!));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (
    typeof context.issuedAt !== "number" ||
    Math.abs(now - context.issuedAt) > INTERNAL_CONTEXT_MAX_AGE_MS
  ) {
    return { ok: false, reason: "stale" };
  }
  return { ok: true, context };
}

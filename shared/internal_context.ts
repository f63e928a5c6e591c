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
}

/** How long a signed context stays valid; the proxy timeout is well under this. */
export const INTERNAL_CONTEXT_MAX_AGE_MS = 60_000;

const encoder = new TextEncoder();

export function importContextKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replaceAll("-", "+").replaceAll("_", "/") +
    "=".repeat((4 - (text.length % 4)) % 4);
  try {
    return Uint8Array.from(atob(padded), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

function signedBytes(method: string, path: string, payload: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${method.toUpperCase()}\n${path}\n${payload}`);
}

export async function signInternalContext(
  key: CryptoKey,
  method: string,
  path: string,
  context: InternalContext,
): Promise<string> {
  const payload = toBase64Url(encoder.encode(JSON.stringify(context)));
  const mac = await crypto.subtle.sign("HMAC", key, signedBytes(method, path, payload));
  return `${payload}.${toBase64Url(new Uint8Array(mac))}`;
}

export type VerifyFailure = "missing" | "malformed" | "bad_signature" | "stale";

/** Verifies a header value; HMAC verification in Web Crypto is constant-time. */
export async function verifyInternalContext(
  key: CryptoKey,
  method: string,
  path: string,
  header: string | undefined | null,
  now: number = Date.now(),
): Promise<{ ok: true; context: InternalContext } | { ok: false; reason: VerifyFailure }> {
  if (!header) return { ok: false, reason: "missing" };
  const [payload, mac, extra] = header.split(".");
  if (payload === undefined || mac === undefined || extra !== undefined) {
    return { ok: false, reason: "malformed" };
  }
  const macBytes = fromBase64Url(mac);
  if (!macBytes) return { ok: false, reason: "malformed" };
  const valid = await crypto.subtle.verify(
    "HMAC",
    key,
    macBytes,
    signedBytes(method, path, payload),
  );
  if (!valid) return { ok: false, reason: "bad_signature" };
  const json = fromBase64Url(payload);
  if (!json) return { ok: false, reason: "malformed" };
  let context: InternalContext;
  try {
    context = JSON.parse(new TextDecoder().decode(json));
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

import { fromBase64Url, toBase64Url } from "./base64url.ts";
import { createHash, type Hash } from "node:crypto";
import { ALL_SCOPES } from "./scopes.ts";
/**
 * The context the gateway hands to a service: who is calling, for which organisation, with which
 * scopes. It is signed with HMAC-SHA256 over the method, the path with its query, and the
 * payload, and carries its issue time, so a service can trust it without seeing the credential
 * and a captured header cannot be replayed against another request target or after it goes
 * stale. (The body is not covered: binding it would mean hashing every body twice.)
 */
export const INTERNAL_CONTEXT_HEADER = "x-internal-context";

export type CredentialKind = "tenant_key" | "partner";

/**
 * Who is calling, as a store records it: the credential a change, a comment, an upload or a
 * decision names.
 */
export type Caller = Pick<InternalContext, "credentialKind" | "credentialId">;

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
const decoder = new TextDecoder();

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

/**
 * Base64url without padding. The runtime's own encoder (Uint8Array.prototype.toBase64) where
 * there is one: several times cheaper than going through node:buffer, and this runs on every
 * signed and every verified context.
 */
const toBase64UrlFast: (bytes: Uint8Array) => string =
  typeof (Uint8Array.prototype as { toBase64?: unknown }).toBase64 === "function"
    ? (bytes) =>
      (bytes as Uint8Array & { toBase64(o: object): string }).toBase64({
        alphabet: "base64url",
        omitPadding: true,
      })
    : toBase64Url;

type FromBase64 = (text: string, options: object) => Uint8Array;
const nativeFromBase64 = (Uint8Array as unknown as { fromBase64?: FromBase64 }).fromBase64;

/**
 * The bytes of unpadded base64url text, or null: as strict as fromBase64Url, and cheaper. The
 * runtime's decoder refuses any other alphabet; what it would let through that fromBase64Url
 * refuses (whitespace, `=` padding) is skipped by it, so it shows as fewer bytes than an
 * unpadded text of this length holds. A length check instead of a regular expression over the
 * whole header: this runs twice on every request a service answers.
 */
function decodeBase64Url(text: string): Uint8Array | null {
  if (nativeFromBase64 === undefined) return fromBase64Url(text);
  // A 4n + 1 length is no base64 at all.
  if (text.length % 4 === 1) return null;
  let bytes: Uint8Array;
  try {
    bytes = nativeFromBase64(text, { alphabet: "base64url" });
  } catch {
    return null;
  }
  return bytes.length === Math.floor(text.length * 3 / 4) ? bytes : null;
}

/**
 * Whether two MACs are equal, in time that depends on their length only (which is public): no
 * early exit, so timing tells nothing of how much of a forged MAC was right. In JavaScript, as
 * node:crypto's timingSafeEqual costs a call into the runtime for 32 bytes.
 */
function sameMac(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/** SHA-256 takes its input in blocks of this many bytes; HMAC pads its key to one block. */
const SHA256_BLOCK_BYTES = 64;

/**
 * HMAC-SHA256 (RFC 2104) with the key's padded blocks hashed once: each MAC then copies the two
 * started hashes instead of keying a new HMAC, which is most of the cost for inputs this small.
 */
const keyedHashes = new WeakMap<ContextKey, { inner: Hash; outer: Hash }>();

function keyedHashesOf(key: ContextKey): { inner: Hash; outer: Hash } {
  let hashes = keyedHashes.get(key);
  if (hashes === undefined) {
    const block = new Uint8Array(SHA256_BLOCK_BYTES);
    block.set(
      key.secret.length > SHA256_BLOCK_BYTES
        ? createHash("sha256").update(key.secret).digest()
        : key.secret,
    );
    const inner = block.map((b) => b ^ 0x36);
    const outer = block.map((b) => b ^ 0x5c);
    hashes = {
      inner: createHash("sha256").update(inner),
      outer: createHash("sha256").update(outer),
    };
    keyedHashes.set(key, hashes);
  }
  return hashes;
}

function mac(key: ContextKey, method: string, target: string, payload: string): Uint8Array {
  const { inner, outer } = keyedHashesOf(key);
  const innerDigest = inner.copy().update(`${method.toUpperCase()}\n${target}\n${payload}`)
    .digest();
  return outer.copy().update(innerDigest).digest();
}

/**
 * Scopes travel as a set of bits over ALL_SCOPES (base 36), not as their names: the names were
 * most of the header (a key with every scope: 888 bytes, of which its 20 names ~340 before
 * base64), and every byte of it is signed, validated by fetch, parsed and verified again on each
 * proxied request (measured: ~0.02 ms of gateway CPU and as much of the service's per request).
 * A list holding a name outside ALL_SCOPES goes as the list, so nothing is lost either way.
 */
const SCOPE_BIT = new Map<string, number>(ALL_SCOPES.map((scope, bit) => [scope, bit]));
// Bitwise operators work on 32-bit integers; a longer list needs another encoding.
if (ALL_SCOPES.length > 31) throw new Error("ALL_SCOPES outgrew the scope bit set");

function encodeScopes(scopes: readonly string[]): string | readonly string[] {
  let bits = 0;
  for (const scope of scopes) {
    const bit = SCOPE_BIT.get(scope);
    if (bit === undefined) return scopes;
    bits |= 1 << bit;
  }
  return bits.toString(36);
}

/** Scope lists by their bit sets: few distinct ones exist, and each is decoded once. */
const decodedScopes = new Map<string, string[]>();
const DECODED_SCOPES_KEPT = 1024;

function decodeScopes(wire: unknown): string[] | null {
  if (Array.isArray(wire)) return wire.every((s) => typeof s === "string") ? wire : null;
  if (typeof wire !== "string" || !/^[0-9a-z]{1,7}$/.test(wire)) return null;
  const known = decodedScopes.get(wire);
  if (known !== undefined) return [...known];
  const bits = parseInt(wire, 36);
  if (bits >= 2 ** ALL_SCOPES.length) return null;
  const scopes = ALL_SCOPES.filter((_, bit) => (bits & (1 << bit)) !== 0);
  if (decodedScopes.size >= DECODED_SCOPES_KEPT) decodedScopes.clear();
  decodedScopes.set(wire, scopes);
  return [...scopes];
}

/** The header value for `context` on a request to `target` (path and query): sign once, send. */
export function signInternalContextSync(
  key: ContextKey,
  method: string,
  target: string,
  context: InternalContext,
): string {
  const wire = { ...context, scopes: encodeScopes(context.scopes) };
  const payload = toBase64UrlFast(encoder.encode(JSON.stringify(wire)));
  return `${payload}.${toBase64UrlFast(mac(key, method, target, payload))}`;
}

export function signInternalContext(
  key: ContextKey,
  method: string,
  target: string,
  context: InternalContext,
): Promise<string> {
  return Promise.resolve(signInternalContextSync(key, method, target, context));
}

export type VerifyFailure = "missing" | "malformed" | "bad_signature" | "stale";

export type VerifyResult =
  | { ok: true; context: InternalContext }
  | { ok: false; reason: VerifyFailure };

/** Verifies a header value; the MAC is compared in constant time. */
export function verifyInternalContext(
  key: ContextKey,
  method: string,
  target: string,
  header: string | undefined | null,
  now: number = Date.now(),
): Promise<VerifyResult> {
  return Promise.resolve(verifyInternalContextSync(key, method, target, header, now));
}

/** verifyInternalContext without the promise, for the middleware every service request runs. */
export function verifyInternalContextSync(
  key: ContextKey,
  method: string,
  target: string,
  header: string | undefined | null,
  now: number = Date.now(),
): VerifyResult {
  if (!header) return { ok: false, reason: "missing" };
  const dot = header.indexOf(".");
  if (dot === -1 || header.indexOf(".", dot + 1) !== -1) return { ok: false, reason: "malformed" };
  const payload = header.slice(0, dot);
  const givenBytes = decodeBase64Url(header.slice(dot + 1));
  const payloadBytes = givenBytes && decodeBase64Url(payload);
  if (!givenBytes || !payloadBytes) return { ok: false, reason: "malformed" };
  const expected = mac(key, method, target, payload);
  if (!sameMac(givenBytes, expected)) {
    return { ok: false, reason: "bad_signature" };
  }
  let context: InternalContext;
  try {
    context = JSON.parse(decoder.decode(payloadBytes));
  } catch {
    return { ok: false, reason: "malformed" };
  }
  const scopes = decodeScopes(context?.scopes);
  if (scopes === null) return { ok: false, reason: "malformed" };
  context.scopes = scopes;
  if (
    typeof context.issuedAt !== "number" ||
    Math.abs(now - context.issuedAt) > INTERNAL_CONTEXT_MAX_AGE_MS
  ) {
    return { ok: false, reason: "stale" };
  }
  return { ok: true, context };
}

import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Tenant API keys look like `psk_<lookup>_<secret>`: the lookup finds the row by index, the
 * 256-bit secret is what proves possession. Keys are random, so a fast hash (SHA-256) is as
 * strong as a slow one here and keeps authentication cheap on every request.
 */
const PREFIX = "psk_";
const KEY_PATTERN = /^psk_([A-Za-z0-9]{16})_([A-Za-z0-9_-]{43})$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export interface ParsedApiKey {
  lookup: string;
  secret: string;
}

function randomAlphanumeric(length: number): string {
  const out: string[] = [];
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 62 * 4: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out.push(ALPHABET[byte % 62]!);
    }
  }
  return out.join("");
}

export function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function generateApiKey(): ParsedApiKey & { token: string } {
  const lookup = randomAlphanumeric(16);
  const secret = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  return { lookup, secret, token: `${PREFIX}${lookup}_${secret}` };
}

export function parseApiKey(token: string): ParsedApiKey | null {
  const match = token.match(KEY_PATTERN);
  return match ? { lookup: match[1]!, secret: match[2]! } : null;
}

/** SHA-256 of a secret. Synchronous node:crypto: it runs on every uncached authentication. */
export function hashSecret(secret: string): Promise<Uint8Array> {
  return Promise.resolve(new Uint8Array(createHash("sha256").update(secret).digest()));
}

/** Constant-time equality of two hashes (or any byte strings of equal length). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Constant-time comparison of two strings, e.g. the admin token; lengths are hashed away. */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  return sameBytes(await hashSecret(given), await hashSecret(expected));
}

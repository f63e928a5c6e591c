import { Buffer } from "node:buffer";

export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/**
 * The bytes of unpadded base64url text, or null when it is not that: only its alphabet, and never
 * a length of 4n + 1 (which Buffer would quietly cut short), so each value has one spelling.
 */
export function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  return new Uint8Array(Buffer.from(text, "base64url"));
}

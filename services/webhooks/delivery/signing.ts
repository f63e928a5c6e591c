/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` headers, HMAC-SHA256 with `whsec_` secrets.
 */
import { createHmac, randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";

const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

export interface SignatureInput {
  id: string;
  timestamp: Date;
  body: string;
  /** Each gives one signature, in this order (two while a secret is being rotated). */
  secrets: readonly string[];
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) {
    throw new Error(`Signing secret must start with "${SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new Error("Signing secret must be base64 after the prefix");
  }
  return Buffer.from(encoded, "base64");
}

/** The three Standard Webhooks headers for one message. */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  if (input.secrets.length === 0) throw new Error("At least one signing secret is needed");
  const seconds = Math.floor(input.timestamp.getTime() / 1000);
  if (!Number.isFinite(seconds)) throw new Error("Signature timestamp is not a valid date");
  const signedContent = `${input.id}.${seconds}.${input.body}`;
  const signatures = input.secrets.map((secret) =>
    "v1," + createHmac("sha256", secretKey(secret)).update(signedContent, "utf8").digest("base64")
  );
  return {
    "webhook-id": input.id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": signatures.join(" "),
  };
}

/**
 * Checking a webhook delivery before trusting it. The webhooks service signs per Standard Webhooks
 * (services/webhooks/delivery/signing.ts): `webhook-id` (the event id), `webhook-timestamp`
 * (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`, one per valid secret while a
 * secret rotates), keyed with the subscription's `whsec_…` secret. The reference library does the
 * comparison, in constant time, and refuses a timestamp more than five minutes from our clock, so
 * a captured delivery cannot be replayed later.
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { webhooks } from "./schema.ts";

export { WebhookVerificationError };

/**
 * The body of any delivery, `{ type, timestamp, data }`, as the document's `webhooks` section
 * declares each event; narrow it on `type`.
 */
export type WebhookEvent = {
  [E in keyof webhooks]: webhooks[E]["post"]["requestBody"]["content"]["application/json"];
}[keyof webhooks];

/** Every event name a subscription can ask for. */
export type WebhookEventType = WebhookEvent["type"];

/** The body of one event type's deliveries. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;

/** A request's headers as Fetch (`Headers`) or Node (`IncomingHttpHeaders`) gives them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNED_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

function signedHeaders(headers: WebhookHeaders): Record<string, string> {
  const get = headers instanceof Headers
    ? (name: string): string | undefined => headers.get(name) ?? undefined
    : (name: string): string | undefined => {
      // Node lower-cases names; a plain object from elsewhere may not.
      const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
      return Array.isArray(entry) ? entry.join(" ") : entry;
    };
  const picked: Record<string, string> = {};
  for (const name of SIGNED_HEADERS) {
    const value = get(name);
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Verifies a delivery and returns its body, typed by event; throws `WebhookVerificationError`
 * when a header is missing, the signature does not match the secret, or the timestamp is stale.
 * `rawBody` must be the bytes as received: parsing and re-serialising JSON changes them.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
): WebhookEvent {
  let body: string;
  try {
    body = typeof rawBody === "string" ? rawBody : STRICT_UTF8.decode(rawBody);
  } catch {
    // The platform sends JSON text; bytes that are not UTF-8 cannot be what it signed.
    throw new WebhookVerificationError("Body is not UTF-8");
  }
  const event = new Webhook(secret).verify(body, signedHeaders(headers));
  if (
    typeof event !== "object" || event === null ||
    typeof (event as { type?: unknown }).type !== "string"
  ) {
    throw new WebhookVerificationError("Body is not a delivery ({ type, timestamp, data })");
  }
  return event as WebhookEvent;
}

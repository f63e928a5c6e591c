/**
 * Opaque list cursors: where the next page starts (the last row's sort value and id), bound to
 * the list and the exact filters, search and sort it was issued for, and signed so a client can
 * neither forge one nor carry one over to another query.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { fromBase64Url, toBase64Url } from "./base64url.ts";
import type { ContextKey } from "./internal_context.ts";
import { ApiError } from "./http/errors.ts";

/** A position in a keyset order: the sort column's value as text (null for NULL) and the id. */
export interface CursorPosition {
  value: string | null;
  id: string;
}

const subkeys = new WeakMap<ContextKey, Uint8Array>();

/** A key of its own for cursors, derived from the internal secret. */
function cursorKey(key: ContextKey): Uint8Array {
  let subkey = subkeys.get(key);
  if (subkey === undefined) {
    subkey = new Uint8Array(
      createHmac("sha256", key.secret).update("printshop list cursor").digest(),
    );
    subkeys.set(key, subkey);
  }
  return subkey;
}

/**
 * What a cursor is bound to: a digest of the list's name, the organisation and every query
 * parameter that shapes the order or the rows (all but `limit` and `cursor`), in a canonical
 * order, so the same query spelled differently gets the same binding.
 */
export function cursorBinding(list: string, query: Record<string, unknown>): string {
  const shaping = Object.entries(query)
    .filter(([name, value]) => name !== "limit" && name !== "cursor" && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256").update(JSON.stringify([list, shaping])).digest("base64url");
}

const encoder = new TextEncoder();

function mac(key: ContextKey, payload: string): Uint8Array {
  return new Uint8Array(createHmac("sha256", cursorKey(key)).update(payload).digest());
}

export function encodeCursor(key: ContextKey, binding: string, position: CursorPosition): string {
  const payload = toBase64Url(
    encoder.encode(JSON.stringify({ b: binding, v: position.value, i: position.id })),
  );
  return `${payload}.${toBase64Url(mac(key, payload))}`;
}

function refused(message: string): ApiError {
  return new ApiError("validation_error", `Invalid query: "cursor" ${message}`, [
    { path: "cursor", message: message.charAt(0).toUpperCase() + message.slice(1) },
  ]);
}

/**
 * The position a cursor holds. A cursor that was not handed out by this list (altered, made up)
 * or that was issued for other filters, search or sort is a 400 naming `cursor`.
 */
export function decodeCursor(key: ContextKey, binding: string, cursor: string): CursorPosition {
  const [payload, given, extra] = cursor.split(".");
  const givenBytes = given === undefined ? null : fromBase64Url(given);
  const payloadBytes = payload === undefined ? null : fromBase64Url(payload);
  if (payloadBytes === null || givenBytes === null || extra !== undefined) {
    throw refused("is not a cursor this list handed out");
  }
  const expected = mac(key, payload!);
  if (givenBytes.length !== expected.length || !timingSafeEqual(givenBytes, expected)) {
    throw refused("is not a cursor this list handed out");
  }
  // Signed by us, so it is the JSON we wrote.
  const decoded = JSON.parse(new TextDecoder().decode(payloadBytes)) as {
    b: string;
    v: string | null;
    i: string;
  };
  if (decoded.b !== binding) {
    throw refused(
      "was issued for other filters, search or sort; start again without a cursor",
    );
  }
  return { value: decoded.v, id: decoded.i };
}

/**
 * Opaque list cursors: where the next page starts (the last row's sort value and id), bound to
 * the list and the exact filters, search and sort it was issued for, and signed so a client can
 * neither forge one nor carry one over to another query.
 */
import { Buffer } from "node:buffer";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
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

function mac(key: ContextKey, payload: string): Buffer {
  return createHmac("sha256", cursorKey(key)).update(payload).digest();
}

export function encodeCursor(key: ContextKey, binding: string, position: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify({ b: binding, v: position.value, i: position.id }))
    .toString("base64url");
  return `${payload}.${mac(key, payload).toString("base64url")}`;
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
  const base64url = /^[A-Za-z0-9_-]+$/;
  if (
    payload === undefined || given === undefined || extra !== undefined ||
    !base64url.test(payload) || !base64url.test(given)
  ) {
    throw refused("is not a cursor this list handed out");
  }
  const expected = mac(key, payload);
  const givenBytes = Buffer.from(given, "base64url");
  if (givenBytes.length !== expected.length || !timingSafeEqual(givenBytes, expected)) {
    throw refused("is not a cursor this list handed out");
  }
  const decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
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

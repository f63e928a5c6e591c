/**
 * UUIDv7 (RFC 9562): a 48-bit millisecond timestamp then random bits, so ids sort by creation
 * time and index inserts stay local. A per-process counter keeps ids from one millisecond ordered.
 */
let lastMs = 0;
let sequence = 0;

export function uuidv7(now: number = Date.now()): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    sequence = bytes[6]! & 0x07;
  }
  const ms = BigInt(now);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return uuidFromBytes(bytes);
}

/** A UUID's text form, lower case, from its 16 bytes. */
export function uuidFromBytes(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/** The 16 bytes of a UUID (as isUuid accepts it). */
export function uuidBytes(id: string): Uint8Array {
  if (!isUuid(id)) throw new Error(`Not a UUID: ${id}`);
  const hex = id.replace(/-/g, "");
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** The creation time (ms since the epoch) a UUIDv7 carries; null for any other version. */
export function uuidv7Time(id: string): number | null {
  if (!isUuid(id) || id[14] !== "7") return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

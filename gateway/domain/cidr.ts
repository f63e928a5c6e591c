/**
 * IP addresses and CIDR ranges, as the edge needs them: which peers are trusted proxies
 * (`TRUSTED_PROXIES`). Pure. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, what a dual-stack
 * socket reports) are read as the IPv4 address they map, so one range covers both spellings.
 */

/** An address as 4 (IPv4) or 16 (IPv6) bytes; null when `text` is not an address. */
export function parseIp(text: string): Uint8Array | null {
  const v4 = parseIpv4(text);
  if (v4) return v4;
  const v6 = parseIpv6(text);
  if (!v6) return null;
  const mapped = v6.subarray(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? v6.slice(12) : v6;
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^(0|[1-9]\d{0,2})$/.test(parts[i]!)) return null;
    const value = Number(parts[i]);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

function parseIpv6(text: string): Uint8Array | null {
  // A zone (`fe80::1%eth0`) names an interface, not part of the address.
  const address = text.replace(/%[\w.-]+$/, "");
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseIpv4(part);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) {
        out.push(parseInt(part, 16));
      } else return null;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

/** `10.0.0.0/8`, `fd00::/8`, or a bare address (a range of one); null when malformed. */
export function parseCidr(text: string): Cidr | null {
  const [address, prefixText, extra] = text.trim().split("/");
  if (address === undefined || extra !== undefined) return null;
  const bytes = parseIp(address);
  if (!bytes) return null;
  const bits = bytes.length * 8;
  if (prefixText === undefined) return { bytes, prefix: bits };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  if (prefix > bits) {
    // `::ffff:10.0.0.0/104` is read as IPv4, where its prefix is 96 bits shorter.
    if (bytes.length === 4 && address.includes(":") && prefix <= 128) prefix -= 96;
    else return null;
  }
  return { bytes, prefix };
}

/** Whether `address` (already parsed) lies in `range`. */
export function inCidr(address: Uint8Array, range: Cidr): boolean {
  if (address.length !== range.bytes.length) return false;
  const whole = range.prefix >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== range.bytes[i]) return false;
  const rest = range.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (address[whole]! & mask) === (range.bytes[whole]! & mask);
}

/** A test of "is this peer one of ours": false for anything that is not an address. */
export function cidrMatcher(ranges: readonly Cidr[]): (address: string) => boolean {
  if (ranges.length === 0) return () => false;
  return (address) => {
    const bytes = parseIp(address);
    return bytes !== null && ranges.some((range) => inCidr(bytes, range));
  };
}

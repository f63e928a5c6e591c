/**
 * The PROXY protocol, version 2 (HAProxy's `send-proxy-v2`): a binary header a proxy sends first
 * on each connection it opens to us, naming the client it carries. The proxy reuses its
 * connections for many requests of one client, so the address is per connection, which is what
 * the edge's per-address shares and limits need. Read only from a trusted peer. Pure: no I/O.
 *
 * Layout: 12 signature bytes, a version/command byte, a family/transport byte, a 2-byte length of
 * what follows, then the addresses (IPv4: 4 + 4 + 2 + 2 bytes; IPv6: 16 + 16 + 2 + 2), then
 * optional TLVs, which the edge has no use for and skips.
 */

const SIGNATURE = new Uint8Array([
  0x0d,
  0x0a,
  0x0d,
  0x0a,
  0x00,
  0x0d,
  0x0a,
  0x51,
  0x55,
  0x49,
  0x54,
  0x0a,
]);
const FIXED_BYTES = 16;
/**
 * The most a header may take with its TLVs: HAProxy sends a few short ones (ALPN, authority, TLS
 * details, a unique id of at most 128 bytes); anything near the format's 64 KiB is not a proxy.
 */
export const MAX_PROXY_HEADER_BYTES = 1024;

export type ProxyHeader =
  /** More bytes are needed to decide. */
  | { kind: "incomplete" }
  /** The connection does not start with the signature: no PROXY header was sent. */
  | { kind: "absent" }
  | { kind: "invalid"; reason: string }
  /** LOCAL (the proxy's own health check), or an address family the edge does not use. */
  | { kind: "local"; length: number }
  | { kind: "proxied"; length: number; address: string };

/**
 * What `bytes` (the first bytes a trusted peer sent, however many have arrived) start with.
 * `length` is how many bytes the header takes; what follows is the client's own traffic.
 */
export function readProxyHeader(bytes: Uint8Array): ProxyHeader {
  const signed = Math.min(bytes.length, SIGNATURE.length);
  for (let i = 0; i < signed; i++) {
    if (bytes[i] !== SIGNATURE[i]) return { kind: "absent" };
  }
  if (bytes.length < FIXED_BYTES) return { kind: "incomplete" };
  const versionCommand = bytes[12]!;
  if (versionCommand >> 4 !== 2) return { kind: "invalid", reason: "not version 2" };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: "invalid", reason: "an unknown command" };
  const length = FIXED_BYTES + ((bytes[14]! << 8) | bytes[15]!);
  if (length > MAX_PROXY_HEADER_BYTES) return { kind: "invalid", reason: "too long" };
  if (bytes.length < length) return { kind: "incomplete" };
  if (command === 0) return { kind: "local", length };
  const family = bytes[13]! >> 4;
  const at = FIXED_BYTES;
  if (family === 1) {
    if (length < at + 12) return { kind: "invalid", reason: "an IPv4 block cut short" };
    return { kind: "proxied", length, address: bytes.subarray(at, at + 4).join(".") };
  }
  if (family === 2) {
    if (length < at + 36) return { kind: "invalid", reason: "an IPv6 block cut short" };
    return { kind: "proxied", length, address: ipv6Text(bytes.subarray(at, at + 16)) };
  }
  // AF_UNSPEC or AF_UNIX: nothing the edge can group by; the peer stands for the client.
  return { kind: "local", length };
}

/** An IPv6 address as text: eight groups of hex, the longest run of zero groups as `::`. */
function ipv6Text(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // An IPv4-mapped address reads as the IPv4 address it maps.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return bytes.subarray(12, 16).join(".");
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** A PROXY v2 header for `address` (tests, and the bench's stand-in proxy). */
export function proxyHeader(
  source: { address: string; port: number },
  destination: { address: string; port: number },
): Uint8Array {
  const v4 = (text: string): number[] => text.split(".").map(Number);
  const header = new Uint8Array(FIXED_BYTES + 12);
  header.set(SIGNATURE);
  header[12] = 0x21; // version 2, PROXY
  header[13] = 0x11; // AF_INET, STREAM
  header[15] = 12;
  header.set(v4(source.address), 16);
  header.set(v4(destination.address), 20);
  header[24] = source.port >> 8;
  header[25] = source.port & 0xff;
  header[26] = destination.port >> 8;
  header[27] = destination.port & 0xff;
  return header;
}

/**
 * The SSRF guard for webhook targets: which IP addresses a delivery may never reach, name
 * resolution that refuses them. The sender connects only to the addresses `resolveTarget` checked
 * (no window for DNS rebinding between the check and the connect).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress } from "node:dns";
import { isIP } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Why a webhook target cannot be reached; `reason` is safe to show to the subscriber. */
export class TargetError extends Error {
  override readonly name: string = "TargetError";
  readonly reason: string;

  constructor(message: string, reason: string) {
    super(message);
    this.reason = reason;
  }
}

/** A target resolved to an address webhooks may not reach, e.g. `refused: private address 10.0.0.5`. */
export class TargetRefused extends TargetError {
  override readonly name: string = "TargetRefused";
  readonly code = "ERR_WEBHOOK_TARGET_REFUSED";
  readonly hostname: string;
  readonly address: string;
  readonly category: string;

  constructor(hostname: string, category: string, address: string) {
    const reason = `refused: ${category} address ${address}`;
    super(`Webhook target "${hostname}" ${reason}`, reason);
    this.hostname = hostname;
    this.address = address;
    this.category = category;
  }
}

/** The target's name did not resolve to any address. */
export class TargetLookupFailed extends TargetError {
  override readonly name: string = "TargetLookupFailed";
  readonly code = "ENOTFOUND";
  readonly hostname: string;

  constructor(hostname: string, options?: ErrorOptions) {
    const reason = `DNS lookup failed for "${hostname}"`;
    super(reason, reason);
    this.hostname = hostname;
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

type Ipv4Range = readonly [base: string, prefixLength: number, category: string];

/** First match wins, so the metadata address is named before the link-local range holding it. */
const IPV4_FORBIDDEN: readonly Ipv4Range[] = [
  ["0.0.0.0", 8, "unspecified"],
  ["127.0.0.0", 8, "loopback"],
  ["10.0.0.0", 8, "private"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["169.254.169.254", 32, "metadata"],
  ["169.254.0.0", 16, "link-local"],
  ["100.64.0.0", 10, "CGNAT"],
  // IETF protocol assignments (DS-Lite, NAT64 discovery, …) and the deprecated 6to4 relay anycast.
  ["192.0.0.0", 24, "reserved/broadcast"],
  ["192.88.99.0", 24, "reserved/broadcast"],
  ["192.0.2.0", 24, "documentation"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["198.18.0.0", 15, "benchmarking"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved/broadcast"],
];

const IPV4_RANGES = IPV4_FORBIDDEN.map(([base, prefixLength, category]) => {
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  return { network: (ipv4ToInt(base) & mask) >>> 0, mask, category };
});

/** The category of a forbidden IPv4 address given as an unsigned 32-bit integer, else null. */
function ipv4Category(value: number): string | null {
  for (const range of IPV4_RANGES) {
    if (((value & range.mask) >>> 0) === range.network) return range.category;
  }
  return null;
}

/** A dotted-quad that `isIP` accepted (four decimal octets without leading zeros). */
function ipv4ToInt(ip: string): number {
  const octets = ip.split(".").map(Number);
  return octets.reduce((value, octet) => ((value << 8) | octet) >>> 0, 0);
}

/**
 * The eight 16-bit groups of an IPv6 address in any textual form: compressed (`::`), with an
 * embedded dotted IPv4 tail, with a zone id. Null when it is not one.
 */
function parseIpv6(ip: string): number[] | null {
  let text = ip.toLowerCase();
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);

  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const dotted = text.slice(lastColon + 1);
    if (isIP(dotted) !== 4) return null;
    const value = ipv4ToInt(dotted);
    tail.push(value >>> 16, value & 0xffff);
    // Keep the colon when it is half of a "::" right before the dotted part.
    text = text.slice(0, lastColon) + (text[lastColon - 1] === ":" ? ":" : "");
  }

  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (part: string | undefined): number[] | null => {
    if (part === undefined || part === "") return [];
    const groups: number[] = [];
    for (const group of part.split(":")) {
      if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
      groups.push(parseInt(group, 16));
    }
    return groups;
  };
  const head = parseGroups(halves[0]);
  const rest = parseGroups(halves[1]);
  if (head === null || rest === null) return null;
  const explicit = head.length + rest.length + tail.length;
  if (halves.length === 1) {
    return explicit === 8 ? [...head, ...tail] : null;
  }
  if (explicit > 7) return null;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest, ...tail];
}

/** The IPv4 address held in two 16-bit groups. */
function embeddedIpv4(high: number, low: number): number {
  return ((high << 16) | low) >>> 0;
}

function ipv6Category(groups: readonly number[]): string | null {
  const g = (index: number): number => groups[index] ?? 0;
  const zeroUpTo = (end: number): boolean => groups.slice(0, end).every((group) => group === 0);
  const mappedCategory = (v4: number, otherwise: string | null): string | null =>
    ipv4Category(v4) === null ? otherwise : "IPv4-mapped private";

  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && g(7) === 1) return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped): the socket reaches the IPv4 address itself.
  if (zeroUpTo(5) && g(5) === 0xffff) return mappedCategory(embeddedIpv4(g(6), g(7)), null);
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT).
  if (zeroUpTo(4) && g(4) === 0xffff && g(5) === 0) {
    return mappedCategory(embeddedIpv4(g(6), g(7)), null);
  }
  // ::a.b.c.d (IPv4-compatible): deprecated, never a legitimate target.
  if (zeroUpTo(6)) return mappedCategory(embeddedIpv4(g(6), g(7)), "reserved/broadcast");
  // 64:ff9b::/96, the well-known NAT64 prefix: a NAT64 gateway forwards to the IPv4 address.
  if (g(0) === 0x64 && g(1) === 0xff9b && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0) {
    return mappedCategory(embeddedIpv4(g(6), g(7)), null);
  }
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215).
  if (g(0) === 0x64 && g(1) === 0xff9b && g(2) === 1) return "private";
  // 2002::/16, 6to4: the relay forwards to the IPv4 address in bits 16–47.
  if (g(0) === 0x2002) return mappedCategory(embeddedIpv4(g(1), g(2)), null);
  // 2001::/32, Teredo: the client's IPv4 address is the last 32 bits inverted.
  if (g(0) === 0x2001 && g(1) === 0) {
    return mappedCategory((~embeddedIpv4(g(6), g(7))) >>> 0, null);
  }
  if (
    g(0) === 0xfd00 && g(1) === 0x0ec2 && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0 &&
    g(6) === 0 && g(7) === 0x254
  ) {
    return "metadata";
  }
  if ((g(0) & 0xfe00) === 0xfc00) return "private";
  if ((g(0) & 0xffc0) === 0xfe80) return "link-local";
  // fec0::/10, the deprecated site-local range.
  if ((g(0) & 0xffc0) === 0xfec0) return "private";
  if ((g(0) & 0xff00) === 0xff00) return "multicast";
  if (g(0) === 0x2001 && g(1) === 0x0db8) return "documentation";
  if (g(0) === 0x3fff && (g(1) & 0xf000) === 0) return "documentation";
  if (g(0) === 0x2001 && g(1) === 0x0002 && g(2) === 0) return "benchmarking";
  // 100::/64, discard-only.
  if (g(0) === 0x0100 && g(1) === 0 && g(2) === 0 && g(3) === 0) return "reserved/broadcast";
  // Global unicast is allocated from 2000::/3 only; everything else is unassigned or special.
  if ((g(0) & 0xe000) !== 0x2000) return "reserved/broadcast";
  return null;
}

/**
 * Why `ip` (an IPv4 or IPv6 literal, IPv6 bracketed or not) must not be a webhook target: "loopback",
 * "private", "link-local", "CGNAT", "metadata", "unspecified", "multicast", "reserved/broadcast",
 * "documentation", "benchmarking" or "IPv4-mapped private". Null for a public address. Text that
 * is not an IP address is refused as "unrecognised" rather than let through.
 */
export function forbiddenAddressReason(ip: string): string | null {
  const address = stripBrackets(ip);
  switch (isIP(address)) {
    case 4:
      return ipv4Category(ipv4ToInt(address));
    case 6: {
      const groups = parseIpv6(address);
      return groups === null ? "unrecognised" : ipv6Category(groups);
    }
    default:
      return "unrecognised";
  }
}

/** URL hostnames write IPv6 literals in brackets (`[::1]`); DNS and sockets do not. */
function stripBrackets(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * The addresses `hostname` (a name, or an IP literal, bracketed or not) resolves to. Unless
 * `allowPrivate`, throws `TargetRefused` when any of them is forbidden (a name that resolves to
 * one public and one private address is refused). Throws `TargetLookupFailed` when DNS fails.
 */
export async function resolveTarget(
  hostname: string,
  allowPrivate: boolean,
): Promise<ResolvedAddress[]> {
  const host = stripBrackets(hostname);
  const literalFamily = isIP(host);
  let addresses: ResolvedAddress[];
  if (literalFamily === 4 || literalFamily === 6) {
    addresses = [{ address: host, family: literalFamily }];
  } else {
    // An empty name would resolve to this machine.
    if (host === "") throw new TargetLookupFailed(host);
    let found: LookupAddress[];
    try {
      found = await dnsLookup(host, { all: true });
    } catch (error) {
      throw new TargetLookupFailed(host, { cause: error });
    }
    addresses = found.flatMap(({ address, family }) =>
      family === 4 || family === 6 ? [{ address, family }] : []
    );
    if (addresses.length === 0) throw new TargetLookupFailed(host);
  }
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const category = forbiddenAddressReason(address);
      if (category !== null) throw new TargetRefused(host, category, address);
    }
  }
  return addresses;
}

/**
 * Subscribe-time validation of a webhook URL: null when deliveries may be sent to it, else a
 * message for a 400 response.
 */
export async function checkTargetUrl(url: string, allowPrivate: boolean): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "Webhook URL must be an absolute URL, like https://example.com/webhooks";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `Webhook URL must use http or https, not ${parsed.protocol.slice(0, -1)}`;
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return "Webhook URL must not contain a username or password";
  }
  const host = stripBrackets(parsed.hostname);
  try {
    await resolveTarget(host, allowPrivate);
  } catch (error) {
    if (error instanceof TargetRefused) {
      return `Webhook URL host "${host}" resolves to ${
        article(error.category)
      } ${error.category} ` +
        `address (${error.address}); webhooks can only be sent to public addresses (an ` +
        "operator can allow private ones, for development, with WEBHOOK_ALLOW_PRIVATE_TARGETS=true)";
    }
    if (error instanceof TargetLookupFailed) {
      return `Webhook URL host "${host}" could not be resolved (DNS lookup failed)`;
    }
    throw error;
  }
  return null;
}

function article(word: string): string {
  return /^[aeiouAEIOU]/.test(word) ? "an" : "a";
}

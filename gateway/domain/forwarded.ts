/**
 * The client a request came from, as proxies in front of the gateway say it: `Forwarded`
 * (RFC 7239) or, failing that, `X-Forwarded-For`. Each proxy appends the address it took the
 * request from, so the list is read from the right: addresses of trusted proxies are skipped,
 * and the first one that is not trusted is the client; anything to its left was written by the
 * client itself and is worth nothing. Read only for what is per request (the access line, the
 * evidence of an approval): per-address shares and limits take the connection's address, which
 * the PROXY protocol gives. Pure.
 */
import { parseIp } from "./cidr.ts";

/** A hop as written (`for=` of `Forwarded`, an entry of `X-Forwarded-For`), as an address. */
function hopAddress(text: string): string | null {
  let hop = text.trim();
  if (hop.startsWith('"') && hop.endsWith('"')) hop = hop.slice(1, -1);
  // `[2001:db8::1]:4711`, `[2001:db8::1]`, `192.0.2.1:4711`
  const bracketed = hop.match(/^\[([^\]]+)\](?::\d+)?$/);
  if (bracketed) hop = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(hop)) hop = hop.slice(0, hop.lastIndexOf(":"));
  return parseIp(hop) === null ? null : hop;
}

/** The `for=` of each element of a `Forwarded` value, in order; null when there are none. */
function forwardedFor(value: string): (string | null)[] | null {
  const hops: (string | null)[] = [];
  for (const element of value.split(",")) {
    const pair = element.split(";").map((part) => part.trim())
      .find((part) => part.toLowerCase().startsWith("for="));
    // An element without `for=`, or with `unknown` or an obfuscated name, names nobody.
    hops.push(pair === undefined ? null : hopAddress(pair.slice(4)));
  }
  return hops.length > 0 ? hops : null;
}

/**
 * The client of a request that came through `peer`, a trusted proxy: the rightmost hop its
 * proxies wrote that is not itself a trusted proxy; `peer` when they wrote nothing usable.
 */
export function forwardedClient(
  headers: { forwarded: string | null; xForwardedFor: string | null },
  isTrusted: (address: string) => boolean,
  peer: string,
): string {
  const hops = headers.forwarded !== null
    ? forwardedFor(headers.forwarded)
    : headers.xForwardedFor !== null
    ? headers.xForwardedFor.split(",").map(hopAddress)
    : null;
  if (hops === null) return peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    // A hop nobody can read ends the trail: what lies to its left cannot be trusted.
    if (hop === null || hop === undefined) return peer;
    if (!isTrusted(hop)) return hop;
  }
  return hops[0] ?? peer;
}

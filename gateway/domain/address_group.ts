/**
 * The group a client address is counted in by the limits the gateway keeps per address (the
 * edge's share of connections, failed look-ups). An IPv4 address is one client. An IPv6 client
 * is usually given a whole /64 (a home, an office, a server) and may take a fresh address in it
 * for every connection (privacy addresses), so counting single IPv6 addresses would limit
 * nobody: they are counted by their first 64 bits.
 */
import { parseIp } from "./cidr.ts";

/** The group of a request whose address is not known (an app called without its edge). */
export const UNKNOWN_ADDRESS_GROUP = "unknown";

/**
 * `203.0.113.7` stays itself; `2001:db8:1:2:aaaa::1` is `2001:db8:1:2::/64`, however it is
 * spelled; an IPv4 address written as IPv6 (`::ffff:203.0.113.7`, as a dual-stack socket
 * reports an IPv4 client) is that IPv4 address. Anything else (a name, a socket path) is its own
 * group, lower-cased.
 */
export function addressGroup(address: string | null): string {
  if (address === null) return UNKNOWN_ADDRESS_GROUP;
  let text = address.trim().toLowerCase();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  if (text === "") return UNKNOWN_ADDRESS_GROUP;
  const bytes = parseIp(text);
  if (bytes === null) return text;
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}

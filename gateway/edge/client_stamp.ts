/**
 * Who the client is, told by the edge to the app it guards. The app answers on a socket of its
 * own (on Linux an abstract Unix socket, which costs the kernel far less per request than a
 * loopback TCP connection), so its peer says nothing about the client: the edge therefore adds
 * one header field to every request head it passes on, right after the request line, holding
 * the client's address behind a token only this process knows. The app believes the field only
 * with that token, and only the first value (the edge's, since it comes first), so neither a
 * client sending the same field nor another local process connecting to the app's socket can
 * name an address of its choosing.
 */

/** The field the edge adds; a client may send one too, which the token leaves without effect. */
export const EDGE_CLIENT_HEADER = "x-edge-client";

const LF = 10;
const encoder = new TextEncoder();

/** A token for one process's edge and app: 128 random bits, as hex. */
export function newEdgeToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Marks a connection that came through a trusted proxy (TRUSTED_PROXIES). */
const PROXIED = "proxied";

/**
 * The header line the edge adds for one client connection (built once per connection): the
 * client's address, and whether a trusted proxy brought it, in which case the app may read the
 * proxy's `Forwarded` / `X-Forwarded-For` for what is per request.
 */
export function stampLine(token: string, address: string, proxied = false): Uint8Array {
  return encoder.encode(
    `${EDGE_CLIENT_HEADER}: ${token} ${address}${proxied ? ` ${PROXIED}` : ""}\r\n`,
  );
}

/** A Host line for a request that has none (HTTP/1.0 allows it), so the app can build its URL. */
export function hostLine(host: string): Uint8Array {
  return encoder.encode(`host: ${host}\r\n`);
}

/**
 * A request head (request line first, as the edge's framer passes it on) with `lines` after its
 * request line.
 */
export function stampHead(head: Uint8Array, ...lines: Uint8Array[]): Uint8Array {
  const lineEnd = head.indexOf(LF) + 1;
  let added = 0;
  for (const line of lines) added += line.length;
  const stamped = new Uint8Array(head.length + added);
  stamped.set(head.subarray(0, lineEnd));
  let at = lineEnd;
  for (const line of lines) {
    stamped.set(line, at);
    at += line.length;
  }
  stamped.set(head.subarray(lineEnd), at);
  return stamped;
}

/** What the edge stamped on a request's connection. */
export interface StampedConnection {
  /** The client's address: the peer's, or the one a trusted proxy's PROXY header named. */
  address: string;
  /** Whether the peer is a trusted proxy. */
  proxied: boolean;
}

/**
 * What the edge stamped on a request, from the field's value as the app's server gives it
 * (values of the same field joined by ", ", the edge's first), or null when the request did not
 * come through this process's edge.
 */
export function stampedConnection(value: string | null, token: string): StampedConnection | null {
  if (value === null || value.length <= token.length || value[token.length] !== " ") return null;
  // Every character compared, whatever the first difference: timing tells nothing of the token.
  let difference = 0;
  for (let i = 0; i < token.length; i++) difference |= value.charCodeAt(i) ^ token.charCodeAt(i);
  if (difference !== 0) return null;
  const comma = value.indexOf(",");
  const [address, mark] = value.slice(token.length + 1, comma === -1 ? undefined : comma).trim()
    .split(" ");
  return address ? { address, proxied: mark === PROXIED } : null;
}

/** The client address the edge stamped on a request (see stampedConnection). */
export function stampedClient(value: string | null, token: string): string | null {
  return stampedConnection(value, token)?.address ?? null;
}

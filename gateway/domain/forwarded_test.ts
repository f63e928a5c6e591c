import assert from "node:assert/strict";
import { forwardedClient } from "./forwarded.ts";
import { cidrMatcher, parseCidr } from "./cidr.ts";

const trusted = cidrMatcher(["10.0.0.0/8", "fd00::/8"].map((range) => parseCidr(range)!));
const PEER = "10.0.0.2";
const client = (forwarded: string | null, xForwardedFor: string | null = null): string =>
  forwardedClient({ forwarded, xForwardedFor }, trusted, PEER);

Deno.test("forwardedClient reads X-Forwarded-For from the right, past trusted proxies", () => {
  assert.equal(client(null, "203.0.113.7"), "203.0.113.7");
  assert.equal(client(null, "203.0.113.7, 10.1.1.1"), "203.0.113.7", "a CDN hop we trust");
  // What the client wrote itself (left of the first untrusted hop) is worth nothing.
  assert.equal(client(null, "6.6.6.6, 203.0.113.7"), "203.0.113.7");
  assert.equal(client(null, "6.6.6.6, 203.0.113.7, 10.1.1.1"), "203.0.113.7");
  assert.equal(client(null, "10.9.9.9, 10.1.1.1"), "10.9.9.9", "every hop ours: the first");
  assert.equal(client(null, "203.0.113.7:51000"), "203.0.113.7", "a port is not the address");
  assert.equal(client(null, "[2001:db8::1]:4711"), "2001:db8::1");
});

Deno.test("forwardedClient prefers Forwarded (RFC 7239) and reads its for= parameters", () => {
  assert.equal(
    client('for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"'),
    "2001:db8:cafe::17",
  );
  assert.equal(client("for=198.51.100.3, for=10.2.2.2", "6.6.6.6"), "198.51.100.3");
  assert.equal(client("For=198.51.100.4"), "198.51.100.4", "parameter names ignore case");
});

Deno.test("forwardedClient falls back to the connection when the trail names nobody it can read", () => {
  assert.equal(client(null), PEER);
  assert.equal(client("for=unknown"), PEER);
  assert.equal(client("for=_hidden, for=10.1.1.1"), PEER);
  assert.equal(client(null, "not-an-address"), PEER);
  assert.equal(client("proto=https"), PEER);
  assert.equal(client(null, ""), PEER);
});

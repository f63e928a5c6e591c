import assert from "node:assert/strict";
import { MAX_PROXY_HEADER_BYTES, proxyHeader, readProxyHeader } from "./proxy_protocol.ts";

const GET = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
const v4 = proxyHeader({ address: "203.0.113.7", port: 51000 }, {
  address: "10.0.0.2",
  port: 8080,
});

/** A version 2 header by hand: signature, command, family, then `block`. */
function header(command: number, family: number, block: number[]): Uint8Array {
  const head = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  return new Uint8Array([
    ...head,
    0x20 | command,
    family,
    block.length >> 8,
    block.length & 0xff,
    ...block,
  ]);
}

Deno.test("readProxyHeader reads the client's IPv4 address and where its own traffic begins", () => {
  const bytes = new Uint8Array([...v4, ...GET]);
  assert.deepEqual(readProxyHeader(bytes), {
    kind: "proxied",
    length: v4.length,
    address: "203.0.113.7",
  });
});

Deno.test("readProxyHeader reads IPv6, compressed, and an IPv4-mapped address as IPv4", () => {
  const ipv6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
  const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 4];
  const rest = [...new Array<number>(16 + 4).fill(0)];
  assert.deepEqual(readProxyHeader(header(1, 0x21, [...ipv6, ...rest])), {
    kind: "proxied",
    length: 52,
    address: "2001:db8::1",
  });
  assert.equal(
    (readProxyHeader(header(1, 0x21, [...mapped, ...rest])) as { address: string }).address,
    "198.51.100.4",
  );
});

Deno.test("readProxyHeader skips TLVs, and takes LOCAL and unknown families as the peer itself", () => {
  const tlv = [0x01, 0x00, 0x02, 0x68, 0x32]; // ALPN "h2"
  const block = [...v4.subarray(16), ...tlv];
  assert.deepEqual(readProxyHeader(header(1, 0x11, block)), {
    kind: "proxied",
    length: 16 + block.length,
    address: "203.0.113.7",
  });
  assert.deepEqual(readProxyHeader(header(0, 0x00, [])), { kind: "local", length: 16 });
  assert.deepEqual(readProxyHeader(header(1, 0x31, new Array(216).fill(0))), {
    kind: "local",
    length: 232,
  });
});

Deno.test("readProxyHeader waits for more bytes, and knows an ordinary request at once", () => {
  for (let cut = 1; cut < v4.length; cut++) {
    assert.deepEqual(readProxyHeader(v4.subarray(0, cut)), { kind: "incomplete" }, String(cut));
  }
  assert.deepEqual(readProxyHeader(GET), { kind: "absent" });
  assert.deepEqual(readProxyHeader(GET.subarray(0, 1)), { kind: "absent" });
  // Version 1's text form is not taken: it would be HTTP to the framer, and refused there.
  const text = new TextEncoder().encode("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n");
  assert.deepEqual(readProxyHeader(text), { kind: "absent" });
});

Deno.test("readProxyHeader refuses what no proxy sends", () => {
  const wrongVersion = new Uint8Array(v4);
  wrongVersion[12] = 0x11;
  assert.equal(readProxyHeader(wrongVersion).kind, "invalid");
  const unknownCommand = new Uint8Array(v4);
  unknownCommand[12] = 0x2f;
  assert.equal(readProxyHeader(unknownCommand).kind, "invalid");
  assert.equal(readProxyHeader(header(1, 0x11, [1, 2, 3])).kind, "invalid", "IPv4 cut short");
  const huge = header(1, 0x11, new Array(MAX_PROXY_HEADER_BYTES).fill(0));
  assert.equal(readProxyHeader(huge.subarray(0, 16)).kind, "invalid", "too long, known early");
});

import assert from "node:assert/strict";
import { cidrMatcher, parseCidr, parseIp } from "./cidr.ts";

Deno.test("parseIp reads IPv4 and IPv6 in their usual spellings, and nothing else", () => {
  assert.deepEqual(parseIp("10.0.0.1"), new Uint8Array([10, 0, 0, 1]));
  assert.deepEqual(parseIp("::1")?.at(15), 1);
  assert.equal(parseIp("2001:db8::8a2e:370:7334")?.length, 16);
  assert.equal(parseIp("fe80::1%eth0")?.length, 16);
  assert.deepEqual(parseIp("::ffff:192.0.2.1"), new Uint8Array([192, 0, 2, 1]));
  for (const bad of ["", "10.0.0", "10.0.0.256", "01.0.0.1", "1::2::3", "gggg::", "a.b.c.d"]) {
    assert.equal(parseIp(bad), null, bad);
  }
});

Deno.test("parseCidr takes ranges and single addresses, and refuses the malformed", () => {
  assert.deepEqual(parseCidr("10.0.0.0/8"), { bytes: new Uint8Array([10, 0, 0, 0]), prefix: 8 });
  assert.equal(parseCidr("192.0.2.7")?.prefix, 32);
  assert.equal(parseCidr("fd00::/8")?.prefix, 8);
  assert.equal(parseCidr("::ffff:10.0.0.0/104")?.prefix, 8, "an IPv4-mapped range is IPv4");
  for (const bad of ["10.0.0.0/33", "10.0.0.0/x", "fd00::/129", "10/8", "1.2.3.4/8/1", ""]) {
    assert.equal(parseCidr(bad), null, bad);
  }
});

Deno.test("cidrMatcher trusts exactly its ranges, in either spelling of an IPv4 address", () => {
  const trusted = cidrMatcher(["10.0.0.0/8", "192.0.2.7", "fd00::/8"].map((c) => parseCidr(c)!));
  for (const yes of ["10.1.2.3", "::ffff:10.9.9.9", "192.0.2.7", "fd12:3456::1"]) {
    assert.ok(trusted(yes), yes);
  }
  for (const no of ["11.0.0.1", "192.0.2.8", "fe80::1", "not an address", ""]) {
    assert.ok(!trusted(no), no);
  }
  assert.ok(!cidrMatcher([])("10.0.0.1"), "nothing is trusted by default");
  const slash12 = cidrMatcher([parseCidr("172.16.0.0/12")!]);
  assert.ok(slash12("172.31.255.255") && !slash12("172.32.0.0"), "a prefix within a byte");
});

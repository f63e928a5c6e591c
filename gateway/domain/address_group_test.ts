import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { addressGroup, UNKNOWN_ADDRESS_GROUP } from "./address_group.ts";

Deno.test("addressGroup: an IPv4 address is a group of its own", () => {
  assertEquals(addressGroup("203.0.113.7"), "203.0.113.7");
  assertEquals(addressGroup("127.0.0.2"), "127.0.0.2");
  // Neighbours are not grouped: one IPv4 address is one client (or one NAT).
  assertEquals(addressGroup("203.0.113.8") === addressGroup("203.0.113.7"), false);
});

Deno.test("addressGroup: every address of an IPv6 /64 is one group, however it is spelled", () => {
  const group = "2001:db8:1:2::/64";
  for (
    const address of [
      "2001:db8:1:2::1",
      "2001:db8:1:2:aaaa:bbbb:cccc:dddd",
      "2001:0DB8:0001:0002:0000:0000:0000:0001",
      "2001:db8:1:2:ffff::",
      "[2001:db8:1:2::5]",
      "2001:db8:1:2::9%eth0",
      "2001:db8:1:2:0:0:192.0.2.1",
    ]
  ) {
    assertEquals(addressGroup(address), group, address);
  }
  assertEquals(addressGroup("2001:db8:1:3::1"), "2001:db8:1:3::/64", "the next /64 is another");
  assertEquals(addressGroup("2001:db8::1"), "2001:db8:0:0::/64");
  assertEquals(addressGroup("::1"), "0:0:0:0::/64");
  assertEquals(addressGroup("::"), "0:0:0:0::/64");
});

Deno.test("addressGroup: an IPv4 client on a dual-stack socket is its IPv4 address", () => {
  assertEquals(addressGroup("::ffff:203.0.113.7"), "203.0.113.7");
  assertEquals(addressGroup("::FFFF:cb00:7107"), "203.0.113.7");
  assertEquals(addressGroup("0:0:0:0:0:ffff:203.0.113.7"), "203.0.113.7");
});

Deno.test("addressGroup: no address, or one it cannot read, is a group by itself", () => {
  assertEquals(addressGroup(null), UNKNOWN_ADDRESS_GROUP);
  assertEquals(addressGroup(""), UNKNOWN_ADDRESS_GROUP);
  // Not IPv6: kept as given (lower-cased), never merged with a real /64.
  for (const text of ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::1", "::1.2.3.256", "g::1"]) {
    assertEquals(addressGroup(text), text, text);
  }
  assertEquals(addressGroup("Proxy.Example"), "proxy.example");
});

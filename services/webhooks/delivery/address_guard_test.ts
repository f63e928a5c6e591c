import assert from "node:assert/strict";
import {
  checkTargetUrl,
  forbiddenAddressReason,
  resolveTarget,
  TargetError,
  TargetLookupFailed,
  TargetRefused,
} from "./address_guard.ts";

const FORBIDDEN: ReadonlyArray<readonly [ip: string, category: string]> = [
  // IPv4
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.5", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "metadata"],
  ["169.254.0.1", "link-local"],
  ["169.254.170.2", "link-local"],
  ["100.64.0.1", "CGNAT"],
  ["100.127.255.255", "CGNAT"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved/broadcast"],
  ["255.255.255.255", "reserved/broadcast"],
  ["192.0.0.8", "reserved/broadcast"],
  ["192.0.2.10", "documentation"],
  ["198.51.100.10", "documentation"],
  ["203.0.113.10", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  // IPv6
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::", "unspecified"],
  ["0000:0000:0000:0000:0000:0000:0000:0000", "unspecified"],
  ["fd00::1", "private"],
  ["fc00::1", "private"],
  ["FDFF:FFFF::1", "private"],
  ["fd00:ec2::254", "metadata"],
  ["fd00:0ec2:0000:0000:0000:0000:0000:0254", "metadata"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["ff05::1:3", "multicast"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["2001:2::1", "benchmarking"],
  ["100::1", "reserved/broadcast"],
  ["4000::1", "reserved/broadcast"],
  ["::ffff:127.0.0.1", "IPv4-mapped private"],
  ["::ffff:7f00:1", "IPv4-mapped private"],
  ["::FFFF:7F00:0001", "IPv4-mapped private"],
  ["0:0:0:0:0:ffff:7f00:1", "IPv4-mapped private"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::ffff:a00:1", "IPv4-mapped private"],
  ["::ffff:169.254.169.254", "IPv4-mapped private"],
  ["::ffff:100.64.0.1", "IPv4-mapped private"],
  ["::ffff:0:127.0.0.1", "IPv4-mapped private"],
  ["::127.0.0.1", "IPv4-mapped private"],
  ["::8.8.8.8", "reserved/broadcast"],
  ["64:ff9b::127.0.0.1", "IPv4-mapped private"],
  ["64:ff9b::a9fe:a9fe", "IPv4-mapped private"],
  ["64:ff9b:1::1", "private"],
  ["2002:7f00:1::1", "IPv4-mapped private"],
  ["2002:c0a8:101::1", "IPv4-mapped private"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "IPv4-mapped private"],
  // Not an IP address at all: refused rather than let through.
  ["localhost", "unrecognised"],
  ["", "unrecognised"],
  ["127.1", "unrecognised"],
  ["1::2::3", "unrecognised"],
];

const PUBLIC: readonly string[] = [
  "93.184.216.34",
  "8.8.8.8",
  "1.1.1.1",
  "172.15.255.255",
  "172.32.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "169.253.255.255",
  "223.255.255.255",
  "2606:4700::1111",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "::ffff:93.184.216.34",
  "::ffff:5db8:d822",
  "64:ff9b::5db8:d822",
  "2002:5db8:d822::1",
  "[2606:4700::1111]",
];

Deno.test("forbiddenAddressReason() names the category of every forbidden address", async (t) => {
  for (const [ip, category] of FORBIDDEN) {
    await t.step(`${JSON.stringify(ip)} is ${category}`, () => {
      assert.equal(forbiddenAddressReason(ip), category);
    });
  }
});

Deno.test("forbiddenAddressReason() returns null for public addresses", async (t) => {
  for (const ip of PUBLIC) {
    await t.step(ip, () => {
      assert.equal(forbiddenAddressReason(ip), null);
    });
  }
});

Deno.test("forbiddenAddressReason() treats every IPv4 loopback and private address the same when mapped", () => {
  for (const v4 of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.0.1", "100.100.100.200"]) {
    assert.notEqual(forbiddenAddressReason(v4), null, v4);
    assert.equal(forbiddenAddressReason(`::ffff:${v4}`), "IPv4-mapped private", v4);
    assert.equal(forbiddenAddressReason(`64:ff9b::${v4}`), "IPv4-mapped private", v4);
  }
});

Deno.test("resolveTarget() passes IP literals through without DNS", async (t) => {
  await t.step("a public IPv4 literal", async () => {
    assert.deepEqual(await resolveTarget("93.184.216.34", false), [
      { address: "93.184.216.34", family: 4 },
    ]);
  });
  await t.step("a bracketed IPv6 literal, as URL.hostname writes it", async () => {
    assert.deepEqual(await resolveTarget("[2606:4700::1111]", false), [
      { address: "2606:4700::1111", family: 6 },
    ]);
  });
  await t.step("a private literal when private targets are allowed", async () => {
    assert.deepEqual(await resolveTarget("10.0.0.5", true), [{ address: "10.0.0.5", family: 4 }]);
  });
});

Deno.test("resolveTarget() refuses forbidden addresses unless private targets are allowed", async (t) => {
  await t.step("a private literal", async () => {
    await assert.rejects(resolveTarget("10.0.0.5", false), (error: unknown) => {
      assert.ok(error instanceof TargetRefused);
      assert.ok(error instanceof TargetError);
      assert.equal(error.reason, "refused: private address 10.0.0.5");
      assert.equal(error.category, "private");
      assert.equal(error.address, "10.0.0.5");
      return true;
    });
  });
  await t.step("an IPv4-mapped loopback literal", async () => {
    await assert.rejects(resolveTarget("[::ffff:7f00:1]", false), (error: unknown) => {
      assert.ok(error instanceof TargetRefused);
      assert.equal(error.reason, "refused: IPv4-mapped private address ::ffff:7f00:1");
      return true;
    });
  });
  await t.step("localhost, through DNS", async () => {
    await assert.rejects(resolveTarget("localhost", false), (error: unknown) => {
      assert.ok(error instanceof TargetRefused);
      assert.match(error.reason, /^refused: loopback address (127\.0\.0\.1|::1)$/);
      assert.equal(error.hostname, "localhost");
      return true;
    });
  });
  await t.step("localhost resolves when private targets are allowed", async () => {
    const addresses = await resolveTarget("localhost", true);
    assert.ok(addresses.length > 0);
    for (const { address, family } of addresses) {
      assert.equal(forbiddenAddressReason(address), "loopback");
      assert.ok(family === 4 || family === 6);
    }
  });
});

Deno.test("resolveTarget() reports a DNS failure with the host name", async (t) => {
  await t.step("a name under .invalid", async () => {
    await assert.rejects(resolveTarget("nonexistent.invalid", false), (error: unknown) => {
      assert.ok(error instanceof TargetLookupFailed);
      assert.equal(error.reason, 'DNS lookup failed for "nonexistent.invalid"');
      return true;
    });
  });
  await t.step("an empty name, which DNS would treat as this machine", async () => {
    await assert.rejects(resolveTarget("", true), TargetLookupFailed);
  });
});

Deno.test("checkTargetUrl() accepts public http and https URLs", async () => {
  assert.equal(await checkTargetUrl("https://93.184.216.34/hooks?x=1", false), null);
  assert.equal(await checkTargetUrl("http://[2606:4700::1111]:8443/hooks", false), null);
  assert.equal(await checkTargetUrl("http://127.0.0.1:9000/hooks", true), null);
  assert.equal(await checkTargetUrl("http://localhost:9000/hooks", true), null);
});

Deno.test("checkTargetUrl() explains what is wrong with a URL it refuses", async (t) => {
  const cases: ReadonlyArray<readonly [name: string, url: string, expected: RegExp]> = [
    ["a relative URL", "/hooks", /must be an absolute URL/],
    ["not a URL", "not a url", /must be an absolute URL/],
    ["an ftp URL", "ftp://93.184.216.34/", /must use http or https, not ftp$/],
    ["a javascript URL", "javascript:alert(1)", /must use http or https, not javascript$/],
    ["a file URL", "file:///etc/passwd", /must use http or https, not file$/],
    ["a username and password", "https://user:pw@93.184.216.34/", /username or password/],
    ["a username alone", "https://user@93.184.216.34/", /username or password/],
    [
      "a loopback literal",
      "http://127.0.0.1/",
      /^Webhook URL host "127\.0\.0\.1" resolves to a loopback address \(127\.0\.0\.1\)/,
    ],
    ["a shortened loopback literal", "http://127.1/", /loopback address \(127\.0\.0\.1\)/],
    ["a hex loopback literal", "http://0x7f000001/", /loopback address \(127\.0\.0\.1\)/],
    ["an IPv6 loopback", "http://[::1]/", /loopback address \(::1\)/],
    [
      "an IPv4-mapped loopback",
      "http://[::ffff:127.0.0.1]/",
      /an IPv4-mapped private address \(::ffff:7f00:1\)/,
    ],
    ["the metadata service", "http://169.254.169.254/latest/", /a metadata address/],
    ["localhost", "http://localhost:8080/", /^Webhook URL host "localhost" resolves to a loopback/],
    [
      "a name that does not resolve",
      "https://nonexistent.invalid/",
      /^Webhook URL host "nonexistent\.invalid" could not be resolved/,
    ],
  ];
  for (const [name, url, expected] of cases) {
    await t.step(name, async () => {
      const message = await checkTargetUrl(url, false);
      assert.ok(message !== null, `${url} was accepted`);
      assert.match(message, expected);
      assert.ok(!message.endsWith("."), message);
    });
  }
  await t.step("a DNS failure is refused even when private targets are allowed", async () => {
    assert.match(
      await checkTargetUrl("https://nonexistent.invalid/", true) ?? "",
      /could not be resolved/,
    );
  });
});

/**
 * The production front door (proxy/haproxy.cfg, compose.yaml's `proxy`) in front of the real
 * gateway, with Debian's HAProxy: the gateway trusts only the proxy (TRUSTED_PROXIES), reads each
 * client from its PROXY protocol v2 header for limits and from X-Forwarded-For for what it
 * records, and a flood of idle connections through the proxy leaves ordinary requests served.
 * Clients bind to other loopback addresses (127.0.0.2, …) so each is a client of its own.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { HAPROXY_CONFIG, HAPROXY_PATH, startHaproxy } from "@printshop/shared/testing/haproxy";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";

interface Answer {
  status: number;
  body: string;
}

/** One request on a fresh connection from `localAddress`. */
function request(
  url: string,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { agent: false, localAddress, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => body += chunk);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${path} in 10 s`)));
    req.on("error", reject);
    req.end();
  });
}

/** The gateway's access lines for `path`, newest last. */
async function accessLines(stack: TestStack, path: string): Promise<Record<string, unknown>[]> {
  return (await stack.logs()).split("\n").filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) =>
      entry.service === "gateway" && entry.msg === "request" && entry.path === path
    );
}

Deno.test("compose's HAProxy configuration is valid, with and without TLS", async () => {
  const base = {
    PROXY_BIND: ":8080",
    GATEWAY_ADDRESS: "gateway:8080",
    PROXY_MAXCONN: "4000",
    PROXY_CONN_PER_IP: "100",
  };
  const check = async (env: Record<string, string>): Promise<void> => {
    const out = await new Deno.Command(HAPROXY_PATH, { args: ["-c", "-f", HAPROXY_CONFIG], env })
      .output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert(out.success, text);
    // Outside compose the gateway's name resolves to nothing, which the configuration allows.
    const warnings = text.split("\n").filter((line) =>
      line.includes("WARNING") && !line.includes("could not resolve address 'gateway'")
    );
    assertEquals(warnings, [], text);
  };
  await check(base);
  await check({ ...base, PROXY_RESOLVER: "127.0.0.11:53" });
  // TLS: a self-signed certificate and its key in one PEM file, as HAProxy reads them.
  const dir = await Deno.makeTempDir();
  try {
    const made = await new Deno.Command("openssl", {
      args: [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-days",
        "1",
        "-keyout",
        `${dir}/key.pem`,
        "-out",
        `${dir}/cert.pem`,
      ],
      stderr: "null",
    }).output();
    assert(made.success, "openssl made a certificate");
    await Deno.writeTextFile(
      `${dir}/tls.pem`,
      await Deno.readTextFile(`${dir}/cert.pem`) + await Deno.readTextFile(`${dir}/key.pem`),
    );
    await check({ ...base, TLS_BIND: ":8443", TLS_CERT: `${dir}/tls.pem` });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("behind HAProxy the gateway knows each client, and a flood through it leaves others served", async (t) => {
  await using stack = await startTestStack({
    // The proxy reaches the gateway from loopback; nothing else is trusted.
    processEnv: { gateway: { TRUSTED_PROXIES: "127.0.0.1" } },
  });
  const gateway = new URL(stack.gatewayUrl);
  await using proxy = await startHaproxy(`${gateway.hostname}:${gateway.port}`);
  const shop = await stack.tenant();
  const key = { "x-api-key": shop.apiKey };
  await waitFor(
    "HAProxy to find the gateway healthy",
    async () => (await request(proxy.url, "/v1/me", "127.0.0.1", key)).status === 200,
    15_000,
  );

  await t.step("the address the gateway records is the client's, whatever it claims", async () => {
    const res = await request(proxy.url, "/v1/me", "127.0.0.7", {
      ...key,
      "x-forwarded-for": "6.6.6.6",
      forwarded: "for=6.6.6.6",
    });
    assertEquals(res.status, 200, res.body);
    await waitFor(
      "the access line",
      async () => (await accessLines(stack, "/v1/me")).length > 0,
      5_000,
    );
    const lines = await accessLines(stack, "/v1/me");
    assertEquals(lines.at(-1)?.client, "127.0.0.7", JSON.stringify(lines.at(-1)));
    assert(!JSON.stringify(lines).includes("6.6.6.6"), "a client's own claim is not believed");
  });

  await t.step("limits count the real client from the PROXY header, not the proxy", async () => {
    // Failed credentials from one client through the proxy: that client is limited...
    let limited = 0;
    for (let i = 0; i < 40; i++) {
      const res = await request(proxy.url, "/v1/me", "127.0.0.3", {
        "x-api-key": `psk_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}_${
          "x".repeat(43)
        }`,
      });
      if (res.status === 429) limited++;
      else assertEquals(res.status, 401, res.body);
    }
    assert(limited > 0, "the guessing client was limited");
    // ...and another client behind the same proxy is not.
    const other = await request(proxy.url, "/v1/me", "127.0.0.4", { "x-api-key": "psk_nope" });
    assertEquals(other.status, 401, other.body);
    assertEquals((await request(proxy.url, "/v1/me", "127.0.0.4", key)).status, 200);
  });

  await t.step(
    "a flood of idle connections through the proxy leaves ordinary requests served",
    async () => {
      const flood: net.Socket[] = [];
      const { hostname, port } = new URL(proxy.url);
      try {
        for (let i = 0; i < 2_000; i++) {
          const socket = net.connect({
            host: hostname,
            port: Number(port),
            localAddress: `127.0.0.${10 + (i % 19)}`,
          });
          socket.on("error", () => {});
          // Half of them begin a head and never finish it.
          if (i % 2 === 0) socket.on("connect", () => socket.write("GET /v1/me HTTP/1.1\r\nHo"));
          flood.push(socket);
          if (i % 200 === 199) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        const answers = await Promise.all(
          Array.from({ length: 100 }, () => request(proxy.url, "/v1/me", "127.0.0.1", key)),
        );
        assertEquals(answers.map((res) => res.status), answers.map(() => 200));
        // The per-address limit held the flood back: many of its connections were refused.
        assert(flood.filter((socket) => socket.destroyed).length > 0, "the proxy refused some");
      } finally {
        for (const socket of flood) socket.destroy();
      }
      assert.match(proxy.output(), /GET \/v1\/me/, "HAProxy logged the requests it carried");
    },
  );
});

/**
 * The public port's edge against the real stack, over raw sockets, as an attacker (or an odd
 * client) would talk to it: deadlines on heads, bodies and idle connections, the connection cap,
 * refusals answered with the error envelope, HTTP/1.1 that must keep working, running out of file
 * descriptors, and the launcher bringing a killed gateway back while the rest keeps running.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import net from "node:net";
import { waitFor } from "@printshop/shared/net";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { readOpenFileLimit } from "@printshop/shared/open-files";

interface RawResponse {
  status: number;
  headers: Headers;
  body: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One client connection spoken to byte by byte, reading answers as HTTP/1.1 frames them. */
class RawConnection {
  #buffer = new Uint8Array(0);
  #ended = false;
  #closedHere = false;

  private constructor(readonly conn: Deno.TcpConn) {}

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new RawConnection(await Deno.connect({ hostname, port: Number(port) }));
  }

  async send(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    let offset = 0;
    while (offset < bytes.length) offset += await this.conn.write(bytes.subarray(offset));
  }

  /** Reads more bytes; false at the end (a close or a reset). */
  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const chunk = new Uint8Array(65536);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch {
      n = null;
    }
    if (n === null) {
      this.#ended = true;
      return false;
    }
    const grown = new Uint8Array(this.#buffer.length + n);
    grown.set(this.#buffer);
    grown.set(chunk.subarray(0, n), this.#buffer.length);
    this.#buffer = grown;
    return true;
  }

  async #take(length: number): Promise<Uint8Array> {
    while (this.#buffer.length < length) {
      if (!await this.#fill()) throw new Error("connection closed mid-response");
    }
    const taken = this.#buffer.slice(0, length);
    this.#buffer = this.#buffer.slice(length);
    return taken;
  }

  async #line(): Promise<string> {
    for (;;) {
      const text = decoder.decode(this.#buffer);
      const end = text.indexOf("\r\n");
      if (end !== -1) return decoder.decode(await this.#take(end + 2)).slice(0, -2);
      if (!await this.#fill()) throw new Error("connection closed mid-line");
    }
  }

  /** The next final response; null when the server closed before sending one. */
  async response(method = "GET"): Promise<RawResponse | null> {
    for (;;) {
      if (this.#buffer.length === 0 && !await this.#fill()) return null;
      const statusLine = await this.#line();
      const status = Number(statusLine.split(" ")[1]);
      const headers = new Headers();
      for (let line = await this.#line(); line !== ""; line = await this.#line()) {
        const colon = line.indexOf(":");
        headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
      }
      if (status < 200) continue; // 100 Continue: the answer follows
      let body = "";
      if (method === "HEAD" || status === 204 || status === 304) {
        // no body
      } else if (headers.get("transfer-encoding") === "chunked") {
        for (let size = parseInt(await this.#line(), 16); size > 0;) {
          body += decoder.decode(await this.#take(size));
          await this.#line();
          size = parseInt(await this.#line(), 16);
        }
        await this.#line();
      } else if (headers.has("content-length")) {
        body = decoder.decode(await this.#take(Number(headers.get("content-length"))));
      } else {
        while (await this.#fill()) { /* to the close */ }
        body = decoder.decode(this.#buffer);
        this.#buffer = new Uint8Array(0);
      }
      return { status, headers, body };
    }
  }

  /** Whether the server closes the connection (after any answer) within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    const timer = setTimeout(() => this.close(), ms);
    while (await this.#fill()) { /* drop what is left */ }
    clearTimeout(timer);
    return !this.#closedHere;
  }

  close(): void {
    this.#closedHere = true;
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

/** One request on a fresh connection, as a client with no pool would send it. */
async function once(url: string, request: string, method = "GET"): Promise<RawResponse | null> {
  const conn = await RawConnection.open(url);
  try {
    await conn.send(request);
    return await conn.response(method);
  } finally {
    conn.close();
  }
}

function assertEnvelope(res: RawResponse | null, status: number, code: string): void {
  assert(res, `expected ${status} ${code}, but the connection closed without an answer`);
  assertEquals(res.status, status, res.body);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(res.headers.get("connection"), "close");
  const body = JSON.parse(res.body);
  assertEquals([body.error, body.status], [code, false]);
  assert(typeof body.message === "string" && body.message.length > 0);
}

const HEALTH = "GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n";
/** Deadlines short enough to watch, long enough that a busy machine still meets ordinary use. */
const HEADER_MS = 1_000;
const BODY_MS = 1_500;
const IDLE_MS = 1_000;
/** A deadline passed, plus the sweep's granularity and a loaded machine's slack. */
const grace = (ms: number): number => ms + 5_000;

Deno.test("the edge bounds slow clients, refuses bad heads with the envelope, and serves HTTP/1.1", async (t) => {
  await using stack: TestStack = await startTestStack({
    processEnv: {
      gateway: {
        HEADER_TIMEOUT_MS: String(HEADER_MS),
        BODY_TIMEOUT_MS: String(BODY_MS),
        IDLE_TIMEOUT_MS: String(IDLE_MS),
      },
    },
  });
  const url = stack.gatewayUrl;
  const shop = await stack.tenant();
  const auth = `Host: gateway.test\r\nX-Api-Key: ${shop.apiKey}\r\n`;

  await t.step("the connection cap comes from the process's real descriptor limit", async () => {
    const listening = (await stack.logs()).split("\n").filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line)).find((entry) =>
        entry.service === "gateway" && entry.msg === "listening" && entry.api === "public"
      );
    const limit = await readOpenFileLimit();
    assert(limit !== null && limit > 1024, `this machine allows ${limit} descriptors`);
    assertEquals(listening?.openFiles, limit, JSON.stringify(listening));
    assert(listening.maxConnections > 176, "more than the 1,024-descriptor guess allowed");
    assert.doesNotMatch(await stack.logs(), /descriptor limit unknown/);
  });

  await t.step("half a request line gets 408 and a close within the header deadline", async () => {
    const conn = await RawConnection.open(url);
    await conn.send("GET /healthz HT");
    const timer = setTimeout(() => conn.close(), grace(HEADER_MS));
    const res = await conn.response();
    clearTimeout(timer);
    assertEnvelope(res, 408, "request_timeout");
    assert(await conn.closesWithin(grace(0)), "the connection is closed after the 408");
  });

  await t.step("a body trickled in is cut off with 408 at the body deadline", async () => {
    const conn = await RawConnection.open(url);
    await conn.send(
      `POST /v1/quotes HTTP/1.1\r\n${auth}Content-Type: application/json\r\n` +
        "Content-Length: 1000\r\n\r\n{",
    );
    let trickling = true;
    const trickle = (async () => {
      // One byte every 200 ms, as the attack did, until the edge stops taking them.
      while (trickling) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        try {
          await conn.send(" ");
        } catch {
          return;
        }
      }
    })();
    const timer = setTimeout(() => conn.close(), grace(BODY_MS));
    const res = await conn.response();
    clearTimeout(timer);
    trickling = false;
    await trickle;
    assertEnvelope(res, 408, "request_timeout");
    conn.close();
  });

  await t.step("an idle keep-alive connection is closed", async () => {
    const conn = await RawConnection.open(url);
    await conn.send(HEALTH);
    const res = await conn.response();
    assertEquals(res?.status, 200);
    assertEquals(res?.headers.get("connection"), null, "kept alive after the answer");
    assert(await conn.closesWithin(grace(IDLE_MS)), "closed once idle");
  });

  await t.step("bare refusals get the envelope: 414, 431 and 400", async () => {
    assertEnvelope(
      await once(url, `GET /v1/quotes?q=${"a".repeat(65 * 1024)} HTTP/1.1\r\n${auth}\r\n`),
      414,
      "uri_too_long",
    );
    assertEnvelope(
      await once(url, `GET /v1/me HTTP/1.1\r\n${auth}X-Big: ${"a".repeat(70 * 1024)}\r\n\r\n`),
      431,
      "request_header_fields_too_large",
    );
    assertEnvelope(
      await once(url, `POST /v1/quotes HTTP/1.1\r\n${auth}Content-Length: -1\r\n\r\n`),
      400,
      "bad_request",
    );
    assertEnvelope(
      await once(
        url,
        `POST /v1/quotes HTTP/1.1\r\n${auth}Content-Length: 5\r\n` +
          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      ),
      400,
      "bad_request",
    );
  });

  await t.step("keep-alive, pipelining, HEAD and a chunked body still work", async () => {
    const conn = await RawConnection.open(url);
    try {
      for (let i = 0; i < 25; i++) {
        await conn.send(`GET /v1/me HTTP/1.1\r\n${auth}\r\n`);
        assertEquals((await conn.response())?.status, 200, `request ${i + 1} on one connection`);
      }
      // A pipelined pair in one write: answered in order.
      await conn.send(
        `GET /v1/me HTTP/1.1\r\n${auth}\r\nGET /v1/reference/limits HTTP/1.1\r\n${auth}\r\n`,
      );
      const me = await conn.response();
      const limits = await conn.response();
      assertEquals([me?.status, limits?.status], [200, 200]);
      assertEquals(JSON.parse(me!.body).data.organization.id, shop.organizationId);
      assert("data" in JSON.parse(limits!.body));
      // HEAD: a head with no body, and the connection is still in step afterwards.
      await conn.send(`HEAD /v1/me HTTP/1.1\r\n${auth}\r\n`);
      const head = await conn.response("HEAD");
      assertEquals([head?.status, head?.body], [200, ""]);
      const body = JSON.stringify({ reference: "chunked through the edge" });
      const half = Math.floor(body.length / 2);
      await conn.send(
        `POST /v1/quotes HTTP/1.1\r\n${auth}Content-Type: application/json\r\n` +
          `Transfer-Encoding: chunked\r\n\r\n${half.toString(16)}\r\n${body.slice(0, half)}\r\n`,
      );
      await conn.send(`${(body.length - half).toString(16)}\r\n${body.slice(half)}\r\n0\r\n\r\n`);
      const created = await conn.response();
      assertEquals(created?.status, 201, created?.body);
      assertEquals(JSON.parse(created!.body).data.reference, "chunked through the edge");
    } finally {
      conn.close();
    }
    // And an ordinary client.
    const res = await stack.call(shop.apiKey, "GET", "/v1/quotes?limit=5");
    assertEquals(res.status, 200);
    assertEquals((await res.json()).data.totalCount, 1);
  });
});

/** A connection from `localAddress`, another loopback address (Deno.connect cannot choose one). */
function netConnect(url: string, localAddress: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** The first bytes a socket receives, as text. */
function firstBytes(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => socket.once("data", (data) => resolve(String(data))));
}

const gatewayOf = (stack: TestStack) => stack.processes.find((p) => p.name === "gateway")!;

async function healthy(url: string): Promise<boolean> {
  try {
    return (await once(url, HEALTH))?.status === 200;
  } catch {
    return false;
  }
}

Deno.test("the edge caps connections, survives running out of descriptors, and a killed gateway comes back", async (t) => {
  await using stack: TestStack = await startTestStack({
    // Connections held open for the whole test must not be timed out meanwhile.
    processEnv: { gateway: { MAX_CONNECTIONS: "4", IDLE_TIMEOUT_MS: "60000" } },
  });
  const url = stack.gatewayUrl;

  await t.step(
    "over the cap, a newcomer takes the place of the heaviest address's connection idle longest",
    async () => {
      // Held from an address of their own (the test's other connections come from 127.0.0.1).
      const holders: net.Socket[] = [];
      // The connections this process used to start the stack are past their grace first.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      try {
        for (let i = 0; i < 4; i++) {
          const holder = await netConnect(url, "127.0.0.2");
          holder.write(HEALTH);
          assert.match(await firstBytes(holder), /^HTTP\/1\.1 200 /);
          holders.push(holder);
        }
        // Idle keep-alive connections past their grace: a newcomer is served in the place of
        // the one idle longest of the address holding the most, closed without a word.
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        assertEquals((await once(url, HEALTH))?.status, 200);
        await waitFor(
          "the holder idle longest to be closed",
          () => Promise.resolve(holders[0]!.closed),
          5_000,
        );
        assert(holders.slice(1).every((holder) => !holder.closed), "only one made room");
        // A burst over the cap: each is served or told 503 with the envelope; none is dropped.
        const burst = await Promise.all(Array.from({ length: 30 }, () => once(url, HEALTH)));
        for (const res of burst) {
          if (res?.status === 200) continue;
          assertEnvelope(res, 503, "service_unavailable");
          assertEquals(res!.headers.get("retry-after"), "1");
        }
        assert(burst.some((res) => res?.status === 200), "some of the burst was served");
      } finally {
        for (const holder of holders) holder.destroy();
      }
      await waitFor("a new connection to be served", () => healthy(url), 10_000);
      assert(!gatewayOf(stack).exited, "the gateway never died");
    },
  );

  const prlimit = await new Deno.Command("prlimit", { args: ["--version"] }).output()
    .then((out) => out.success, () => false);
  await t.step({
    name: "out of file descriptors, the gateway waits and keeps serving",
    ignore: !prlimit,
    fn: async () => {
      const gateway = gatewayOf(stack);
      const pid = gateway.child.pid;
      let used = 0;
      for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) used++;
      const setSoftLimit = async (soft: number | string): Promise<void> => {
        const out = await new Deno.Command("prlimit", {
          args: ["--pid", String(pid), `--nofile=${soft}:`],
        }).output();
        assert(out.success, decoder.decode(out.stderr));
      };
      const before = (await Deno.readTextFile(`/proc/${pid}/limits`))
        .match(/^Max open files\s+(\d+)/m)![1]!;
      // A handful of descriptors to spare: the flood below runs the process out of them.
      await setSoftLimit(used + 12);
      const flood: Deno.TcpConn[] = [];
      try {
        const { hostname, port } = new URL(url);
        for (let i = 0; i < 200; i++) {
          flood.push(await Deno.connect({ hostname, port: Number(port) }));
        }
        await waitFor(
          "the gateway to run out of descriptors",
          async () => /accepting a connection failed/.test(await stack.logs()),
          10_000,
        );
      } finally {
        for (const conn of flood) conn.close();
        await setSoftLimit(before);
      }
      await waitFor("the gateway to serve again", () => healthy(url), 20_000);
      assertEquals(gateway.child.pid, pid);
      assert(!gateway.exited, "the same gateway process, never restarted");
      assert(/Too many open files/.test(await stack.logs()));
    },
  });

  await t.step(
    "a gateway killed by SIGKILL is restarted; services and the database keep running",
    async () => {
      const gateway = gatewayOf(stack);
      const services = stack.processes.filter((p) => p.name !== "gateway");
      const pids = services.map((p) => p.child.pid);
      gateway.child.kill("SIGKILL");
      await gateway.child.status;
      await waitFor("the gateway to answer again", () => healthy(url), 30_000);
      const restarted = gatewayOf(stack);
      assert(restarted.child.pid !== gateway.child.pid, "a new gateway process");
      assertEquals(services.map((p) => p.child.pid), pids);
      assert(services.every((p) => !p.exited), "no service stopped");
      // The database and a service, through the new gateway.
      const shop = await stack.tenant();
      const res = await once(
        url,
        `POST /v1/quotes HTTP/1.1\r\nHost: gateway.test\r\nX-Api-Key: ${shop.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      );
      assertEquals(res?.status, 201, res?.body);
      const logs = await stack.logs();
      assert.match(
        logs,
        /gateway exited with code 137 \(SIGKILL\); restarting in 0.5 s \(attempt 2\)/,
      );
      await waitFor(
        "the launcher to say the gateway is back",
        async () => /gateway is running again \(attempt 2\)/.test(await stack.logs()),
        10_000,
      );
    },
  );
});

/**
 * Who the edge serves when connections run short, and who it says the client is, between real
 * sockets: attackers bind to other loopback addresses (127.0.0.2, …) so the victim on 127.0.0.1
 * is a different address, as it would be on a network.
 */
import assert from "node:assert/strict";
import { waitFor } from "@printshop/shared/net";
import { connect, PeerSocket, readToClose, send, statuses, withEdge } from "./_edge_harness.ts";
import { proxyHeader } from "./proxy_protocol.ts";

const GET = (path: string, extra = ""): string => `GET ${path} HTTP/1.1\r\nHost: a\r\n${extra}\r\n`;
/** Past the edge's grace for a connection that has just arrived. */
const PAST_GRACE_MS = 1_100;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("edge: an idle or slow connection holds no link to the app; links are shared", async () => {
  await withEdge(async (edge) => {
    const idle = await Promise.all(Array.from({ length: 30 }, () => connect(edge)));
    for (const conn of idle.slice(0, 10)) await send(conn, "GET / HT"); // slow heads
    await waitFor("the edge to hold them", () => Promise.resolve(edge.open === 30), 5_000);
    assert.equal(edge.links, 0, "nothing reached the app, so nothing holds a link");
    // Requests one after another on fresh connections share one link.
    for (let i = 0; i < 5; i++) {
      const client = await PeerSocket.open(edge, "127.0.0.1");
      await client.write(GET("/one"));
      assert.match(await client.until((text) => text.endsWith("}")), /^HTTP\/1\.1 200 /);
      client.close();
    }
    assert.equal(edge.links, 1, "one link, reused");
    for (const conn of idle) conn.close();
  }, { limits: { idleTimeoutMs: 60_000, headerTimeoutMs: 60_000 } });
});

Deno.test("edge: at the cap a newcomer takes an idle connection's place; only when all are busy is it told 503", async () => {
  await withEdge(async (edge, app) => {
    const idle = await PeerSocket.open(edge, "127.0.0.2");
    const slowHead = await PeerSocket.open(edge, "127.0.0.3");
    await slowHead.write("GET /one HTTP/1.1\r\nHo");
    const busy = await Promise.all([connect(edge), connect(edge)]);
    for (const conn of busy) await send(conn, GET("/hold", "Connection: close\r\n"));
    await waitFor("the app to hold two", () => Promise.resolve(app.requests.length === 2), 5_000);
    await sleep(PAST_GRACE_MS);
    // Two newcomers with requests the app holds: the idle connection makes room first, then the
    // slow head (told why).
    const newcomers: Deno.TcpConn[] = [];
    for (const [expected, held] of [[idle, 3], [slowHead, 4]] as const) {
      const conn = await connect(edge);
      await send(conn, GET("/hold", "Connection: close\r\n"));
      newcomers.push(conn);
      await expected.closed;
      await waitFor(
        "the app to hold it",
        () => Promise.resolve(app.requests.length === held),
        5_000,
      );
    }
    assert.equal(idle.received, "", "an idle connection is closed without a word");
    assert.match(slowHead.received, /^HTTP\/1\.1 503 /);
    assert.match(slowHead.received, /retry-after: 1/);
    // Every connection is busy now: 503 for the next, and nobody was cut short for it.
    await sleep(PAST_GRACE_MS);
    const refused = await connect(edge);
    const text = await readToClose(refused);
    assert.deepEqual(statuses(text), [503], text);
    assert.match(text, /"error":"service_unavailable"/);
    assert.match(text, /retry-after: 1/);
    app.release();
    for (const conn of [...busy, ...newcomers]) {
      assert.deepEqual(statuses(await readToClose(conn)).slice(0, 1), [200], "never cut short");
    }
  }, { limits: { maxConnections: 4, idleTimeoutMs: 60_000, headerTimeoutMs: 60_000 } });
});

Deno.test("edge: one address holds at most its share; its surplus goes, others are untouched", async () => {
  await withEdge(async (edge) => {
    const victim = await connect(edge);
    const flood: PeerSocket[] = [];
    for (let i = 0; i < 3; i++) flood.push(await PeerSocket.open(edge, "127.0.0.2"));
    await sleep(PAST_GRACE_MS);
    for (let i = 0; i < 9; i++) flood.push(await PeerSocket.open(edge, "127.0.0.2"));
    // The address holds 3 (its share): each of its newcomers replaced one of its own, once
    // those were past their grace; then the newcomers, within theirs, were refused.
    await waitFor("the surplus to be closed", () => Promise.resolve(edge.open === 4), 5_000);
    await waitFor(
      "its surplus to be closed",
      () => Promise.resolve(flood.filter((s) => !s.isClosed).length === 3),
      5_000,
    );
    assert.ok(flood.slice(0, 3).every((s) => s.isClosed), "its oldest made room");
    const refused = flood.slice(6).map((s) => s.received);
    assert.ok(refused.every((text) => /^HTTP\/1\.1 503 /.test(text)), refused.join());
    await send(victim, GET("/one"));
    const buffer = new Uint8Array(4096);
    const n = await victim.read(buffer);
    assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 /);
    // Past their grace, its newcomer with a request is served in place of one of its own.
    await sleep(PAST_GRACE_MS);
    const fresh = await PeerSocket.open(edge, "127.0.0.2");
    await fresh.write(GET("/one"));
    assert.match(await fresh.until((text) => text.includes("}")), /^HTTP\/1\.1 200 /);
    for (const socket of [...flood, fresh]) socket.close();
    victim.close();
  }, { limits: { maxPerAddress: 3, idleTimeoutMs: 60_000 } });
});

Deno.test("edge: a trusted proxy's PROXY header names the client; its share and stamp follow it", async () => {
  await withEdge(async (edge) => {
    const asClient = (address: string): Uint8Array =>
      proxyHeader({ address, port: 40000 }, { address: "127.0.0.1", port: edge.addr.port });
    // Through the proxy (127.0.0.5): each connection carries the client its header names.
    const through = await PeerSocket.open(edge, "127.0.0.5");
    await through.write(
      new Uint8Array([...asClient("203.0.113.9"), ...new TextEncoder().encode(GET("/one"))]),
    );
    const answer = await through.until((text) => text.includes("}"));
    assert.match(answer, /"client":"203\.0\.113\.9","proxied":true/);
    // The same client on more connections than its share: its own oldest goes, or, when all
    // its others have only just connected, the newcomer is refused.
    await sleep(PAST_GRACE_MS);
    const more: PeerSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const socket = await PeerSocket.open(edge, "127.0.0.5");
      await socket.write(asClient("203.0.113.9"));
      more.push(socket);
    }
    await through.closed;
    await waitFor(
      "the client's oldest to go",
      () => Promise.resolve(more.filter((s) => !s.isClosed).length === 2),
      5_000,
    );
    // The first newcomer took the place of its connection idle past its grace; the last came
    // while the others were within theirs, and was refused.
    assert.ok(more.slice(0, 2).every((s) => !s.isClosed));
    assert.match(more[2]!.received, /^HTTP\/1\.1 503 /);
    // Another client through the same proxy is not counted with it.
    const other = await PeerSocket.open(edge, "127.0.0.5");
    await other.write(
      new Uint8Array([...asClient("198.51.100.1"), ...new TextEncoder().encode(GET("/one"))]),
    );
    assert.match(await other.until((text) => text.includes("}")), /"client":"198\.51\.100\.1"/);
    // A trusted proxy that sends no header stands for its clients.
    const bare = await PeerSocket.open(edge, "127.0.0.5");
    await bare.write(GET("/one"));
    assert.match(
      await bare.until((text) => text.includes("}")),
      /"client":"127\.0\.0\.5","proxied":true/,
    );
    // From an untrusted peer a PROXY header is not believed: it is not HTTP, and is refused.
    const spoof = await PeerSocket.open(edge, "127.0.0.6");
    await spoof.write(
      new Uint8Array([...asClient("10.10.10.10"), ...new TextEncoder().encode(GET("/one"))]),
    );
    const refused = await spoof.until(() => false, 2_000);
    assert.match(refused, /^HTTP\/1\.1 400 /);
    assert.doesNotMatch(refused, /10\.10\.10\.10/);
    // And an untrusted peer's own requests carry its own address, whatever it says.
    const plain = await PeerSocket.open(edge, "127.0.0.6");
    await plain.write(
      GET("/one", "X-Forwarded-For: 10.10.10.10\r\nForwarded: for=10.10.10.10\r\n"),
    );
    assert.match(
      await plain.until((text) => text.includes("}")),
      /"client":"127\.0\.0\.6","proxied":false/,
    );
    for (const socket of [through, ...more, other, bare, spoof, plain]) socket.close();
  }, {
    limits: { maxPerAddress: 2, idleTimeoutMs: 60_000 },
    trustedProxy: (address) => address === "127.0.0.5",
  });
});

Deno.test("edge: above the high-water mark idle connections are closed, longest idle first", async () => {
  await withEdge(async (edge) => {
    const old = await Promise.all(Array.from({ length: 6 }, () => connect(edge)));
    await sleep(PAST_GRACE_MS);
    const busy = await connect(edge);
    await send(busy, GET("/hold", "Connection: close\r\n"));
    await waitFor(
      "idle ones to be closed down to the mark",
      () => Promise.resolve(edge.open <= 4),
      5_000,
    );
    for (const conn of old.slice(0, 3)) assert.equal(await readToClose(conn), "");
    busy.close();
    for (const conn of old.slice(3)) conn.close();
  }, { limits: { maxConnections: 10, highWater: 4, idleTimeoutMs: 60_000 } });
});

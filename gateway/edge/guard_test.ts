/**
 * The guard between real sockets: a client connection on one side, a real Deno.serve app on the
 * other, on the private socket the gateway gives its app (an abstract Unix socket on Linux), as
 * the gateway runs them (e2e/edge_test.ts does the same against the whole stack).
 */
import assert from "node:assert/strict";
import { waitFor } from "@printshop/shared/net";
import { BIG_BODY_BYTES, connect, readToClose, send, statuses, withEdge } from "./_edge_harness.ts";

Deno.test("guard: a refused head after pipelined requests is answered after their answers", async () => {
  await withEdge(async (edge, app) => {
    const conn = await connect(edge);
    await send(
      conn,
      "GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /one HTTP/1.1\r\nHost: a\r\n\r\n" +
        "GET /two HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200, 200, 400], text);
    assert.match(text, /"error":"bad_request"/);
    assert.deepEqual(app.requests, ["GET /slow", "GET /one"], "the refused head never reached it");
  });
});

Deno.test("guard: a client that half-closes after its request still gets the answer", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    await send(conn, "POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi");
    await conn.closeWrite();
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200]);
    assert.match(text, /"body":"hi"/);
  });
});

Deno.test("guard: Expect 100-continue passes through", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    await send(
      conn,
      "POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n" +
        "Connection: close\r\n\r\n",
    );
    const buffer = new Uint8Array(1024);
    const n = await conn.read(buffer);
    assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 100 /);
    await send(conn, "abc");
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200]);
    assert.match(text, /"body":"abc"/);
  });
});

Deno.test("guard: a client that stops reading its answer is cut off", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    await send(conn, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
    // Read nothing: socket buffers fill, the edge's write to us stalls, its deadline passes.
    await waitFor(
      "the edge to give up on the connection",
      () => Promise.resolve(edge.open === 0),
      10_000,
    );
    let received = 0;
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) received += n;
    } catch { /* reset */ }
    conn.close();
    assert.ok(received < BIG_BODY_BYTES, `${received} bytes: the answer was cut short`);
  });
});

Deno.test("guard: shutdown closes idle connections and lets an answer in flight finish", async () => {
  await withEdge(async (edge, app, stop) => {
    const idle = await connect(edge);
    const busy = await connect(edge);
    await send(busy, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
    await waitFor(
      "the app to have the request",
      () => Promise.resolve(app.requests.length === 1),
      5_000,
    );
    assert.equal(edge.open, 2);
    const [idleText, busyText] = await Promise.all([
      readToClose(idle),
      readToClose(busy),
      stop(),
    ]);
    assert.equal(idleText, "", "closed without a word");
    assert.deepEqual(statuses(busyText), [200]);
  });
});

Deno.test("guard: the app is told each request's client by the edge, and a client cannot say otherwise", async () => {
  await withEdge(async (edge, app) => {
    if (Deno.build.os === "linux") {
      const addr = app.addr as Deno.UnixAddr;
      assert.equal(addr.transport, "unix");
      assert.ok(addr.path.startsWith("\0"), "an abstract socket: nothing on disk");
    }
    const conn = await connect(edge);
    // Pipelined: every head is stamped, the second one's forged fields notwithstanding, and a
    // body in the same packet as its head still arrives whole.
    await send(
      conn,
      "GET /one HTTP/1.1\r\nHost: a\r\n\r\n" +
        `POST /two HTTP/1.1\r\nHost: a\r\nX-Edge-Client: ${"0".repeat(32)} 6.6.6.6\r\n` +
        "x-edge-client: 10.0.0.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200, 200], text);
    const answers = [...text.matchAll(/\{"path".*?\}/g)].map((m) => JSON.parse(m[0]));
    assert.deepEqual(answers, [
      { path: "/one", body: "", client: "127.0.0.1", proxied: false, host: "a" },
      { path: "/two", body: "hello", client: "127.0.0.1", proxied: false, host: "a" },
    ]);
    // Straight to the app's socket, past the edge, a stamp without the token names nobody.
    const direct = app.addr.transport === "unix"
      ? await Deno.connect({ transport: "unix", path: (app.addr as Deno.UnixAddr).path })
      : await Deno.connect({
        hostname: (app.addr as Deno.NetAddr).hostname,
        port: (app.addr as Deno.NetAddr).port,
      });
    await send(
      direct,
      `GET /three HTTP/1.1\r\nHost: a\r\nX-Edge-Client: ${app.token.replace(/./, "x")} ` +
        "6.6.6.6\r\nConnection: close\r\n\r\n",
    );
    assert.match(await readToClose(direct), /"client":null/);
  });
});

Deno.test("guard: HTTP/1.0 keep-alive gets every answer in order, and one without Host is served", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    await send(
      conn,
      "POST /one HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi" +
        "GET /two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" +
        "GET /three HTTP/1.0\r\n\r\n",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200, 200, 200], text);
    assert.equal(text.match(/connection: keep-alive/gi)?.length, 2, "kept alive where asked");
    assert.match(text, /"path":"\/one","body":"hi"/);
    // No Host in HTTP/1.0: the app is given the edge's own, so it can build the request's URL.
    assert.match(text, new RegExp(`"host":"127\\.0\\.0\\.1:${edge.addr.port}"`));
  });
});

Deno.test("guard: an HTTP/1.0 answer that runs to the close ends the connection, and says so", async () => {
  await withEdge(async (edge, app) => {
    const conn = await connect(edge);
    await send(
      conn,
      "GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /one HTTP/1.0\r\n\r\n",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200], text);
    assert.doesNotMatch(text, /keep-alive/i, "the client is not told the connection stays");
    assert.match(text, /streamed$/);
    assert.deepEqual(app.requests, ["GET /stream"], "the next request never reached the app");
  });
});

Deno.test("guard: a valid pipelined request keeps its answer when the next one's body is malformed", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    await send(
      conn,
      "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n" +
        "POST /two HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200, 400], text);
    assert.match(text, /"path":"\/slow"/);
    assert.match(text, /"error":"bad_request".*chunked/);
  });
});

Deno.test("guard: CONNECT and an HTTP/1.1 head without Host are refused with the envelope", async () => {
  await withEdge(async (edge, app) => {
    for (const head of ["CONNECT /path HTTP/1.1\r\nHost: a\r\n\r\n", "GET /one HTTP/1.1\r\n\r\n"]) {
      const conn = await connect(edge);
      await send(conn, head);
      const text = await readToClose(conn);
      assert.deepEqual(statuses(text), [400], text);
      assert.match(text, /content-type: application\/json/);
      assert.match(text, /"error":"bad_request"/);
    }
    assert.deepEqual(app.requests, []);
  });
});

Deno.test("guard: an Upgrade request is served as HTTP/1.1, the upgrade ignored", async () => {
  await withEdge(async (edge) => {
    const conn = await connect(edge);
    // What `curl --http2` sends over plain HTTP.
    await send(
      conn,
      "GET /one HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" +
        "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n" +
        "Connection: close\r\n\r\n",
    );
    const text = await readToClose(conn);
    assert.deepEqual(statuses(text), [200, 200], text);
    assert.doesNotMatch(text, /101 Switching/);
  });
});

/**
 * The guard between real sockets: a client connection on one side, a real Deno.serve app on the
 * other, on the private socket the gateway gives its app (an abstract Unix socket on Linux), as
 * the gateway runs them (e2e/edge_test.ts does the same against the whole stack).
 */
import assert from "node:assert/strict";
import { waitFor } from "@printshop/shared/net";
import { createLogger } from "@printshop/shared/log";
import { type EdgeGuard, type EdgeLimits, startEdgeGuard } from "./guard.ts";
import { privateListenAt, serveResiliently } from "./resilient_server.ts";
import { EDGE_CLIENT_HEADER, newEdgeToken, stampedClient } from "./client_stamp.ts";

const LIMITS: EdgeLimits = {
  headerTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 300,
  maxConnections: 100,
  maxHeaderBytes: 32_768,
  maxUrlBytes: 16_384,
};
const BIG_BODY_BYTES = 32 * 1024 * 1024;

interface TestApp {
  requests: string[];
  addr: Deno.Addr;
  token: string;
}

/**
 * An app like the gateway's: echoes (with the client the edge stamped), answers slowly on /slow,
 * and sends a large body on /big.
 */
async function withEdge(
  run: (edge: EdgeGuard, app: TestApp, stop: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const logger = createLogger({ level: "error", fields: { service: "guard-test" } });
  const token = newEdgeToken();
  const requests: string[] = [];
  const app = serveResiliently<Deno.Addr>(
    { ...privateListenAt(), name: "app", logger },
    async (request) => {
      const path = new URL(request.url).pathname;
      requests.push(`${request.method} ${path}`);
      const body = await request.text();
      if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 200));
      if (path === "/big") return new Response(new Uint8Array(BIG_BODY_BYTES));
      const client = stampedClient(request.headers.get(EDGE_CLIENT_HEADER), token);
      return Response.json({ path, body, client });
    },
  );
  const edge = startEdgeGuard({
    hostname: "127.0.0.1",
    port: 0,
    upstream: () => app.addr,
    clientToken: token,
    limits: LIMITS,
    logger,
  });
  const seen: TestApp = {
    requests,
    get addr() {
      return app.addr;
    },
    token,
  };
  let stopped: Promise<void> | undefined;
  // As the gateway stops: the app's graceful shutdown drains what the edge still carries.
  const stop = (): Promise<void> => stopped ??= edge.shutdown(() => app.shutdown());
  try {
    await run(edge, seen, stop);
  } finally {
    await stop();
  }
}

async function connect(edge: EdgeGuard): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port: edge.addr.port });
}

const send = async (conn: Deno.Conn, text: string): Promise<void> => {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
};

/** Everything the edge sends until it closes the connection. */
async function readToClose(conn: Deno.Conn): Promise<string> {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(16 * 1024);
  let text = "";
  try {
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  } catch { /* reset counts as closed */ }
  conn.close();
  return text;
}

const statuses = (text: string): number[] =>
  [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

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
      { path: "/one", body: "", client: "127.0.0.1" },
      { path: "/two", body: "hello", client: "127.0.0.1" },
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

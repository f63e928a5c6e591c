/**
 * The guard between real sockets: a client connection on one side, a real Deno.serve app on the
 * other, as the gateway runs them (e2e/edge_test.ts does the same against the whole stack).
 */
import assert from "node:assert/strict";
import { waitFor } from "@printshop/shared/net";
import { createLogger } from "@printshop/shared/log";
import { type EdgeGuard, type EdgeLimits, startEdgeGuard } from "./guard.ts";
import { serveResiliently } from "./resilient_server.ts";

const LIMITS: EdgeLimits = {
  headerTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 300,
  maxConnections: 100,
  maxHeaderBytes: 32_768,
  maxUrlBytes: 16_384,
};
const BIG_BODY_BYTES = 32 * 1024 * 1024;

/** An app like the gateway's: echoes, answers slowly on /slow, and sends a large body on /big. */
async function withEdge(
  run: (edge: EdgeGuard, app: { requests: string[] }, stop: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const logger = createLogger({ level: "error", fields: { service: "guard-test" } });
  const seen = { requests: [] as string[] };
  const app = serveResiliently(
    { hostname: "127.0.0.1", port: 0, name: "app", logger },
    async (request) => {
      const path = new URL(request.url).pathname;
      seen.requests.push(`${request.method} ${path}`);
      const body = await request.text();
      if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 200));
      if (path === "/big") return new Response(new Uint8Array(BIG_BODY_BYTES));
      return Response.json({ path, body });
    },
  );
  const edge = startEdgeGuard({
    hostname: "127.0.0.1",
    port: 0,
    upstream: () => app.addr,
    limits: LIMITS,
    logger,
  });
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

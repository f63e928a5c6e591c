/**
 * The edge between real sockets, for its tests: a client connection on one side, a real
 * Deno.serve app on the other, on the private socket the gateway gives its app (an abstract Unix
 * socket on Linux), as the gateway runs them (e2e/edge_test.ts does the same against the whole
 * stack).
 */
import net from "node:net";
import { createLogger } from "@printshop/shared/log";
import { type EdgeGuard, type EdgeLimits, type EdgeOptions, startEdgeGuard } from "./guard.ts";
import { privateListenAt, serveResiliently } from "./resilient_server.ts";
import { EDGE_CLIENT_HEADER, newEdgeToken, stampedConnection } from "./client_stamp.ts";

export const LIMITS: EdgeLimits = {
  headerTimeoutMs: 300,
  bodyTimeoutMs: 300,
  idleTimeoutMs: 300,
  maxConnections: 100,
  maxLinks: 16,
  maxPerAddress: 100,
  highWater: 100,
  maxHeaderBytes: 32_768,
  maxUrlBytes: 16_384,
};
export const BIG_BODY_BYTES = 32 * 1024 * 1024;

export interface TestApp {
  requests: string[];
  addr: Deno.Addr;
  token: string;
  /** Answers every request waiting on /hold. */
  release(): void;
}

export interface EdgeSetup {
  limits?: Partial<EdgeLimits>;
  trustedProxy?: EdgeOptions["trustedProxy"];
}

/**
 * An app like the gateway's: echoes (with what the edge stamped and the Host it saw), answers
 * slowly on /slow, waits for `release()` on /hold, sends a large body on /big and a streamed one
 * (no length) on /stream.
 */
export async function withEdge(
  run: (edge: EdgeGuard, app: TestApp, stop: () => Promise<void>) => Promise<void>,
  setup: EdgeSetup = {},
): Promise<void> {
  const logger = createLogger({ level: "error", fields: { service: "guard-test" } });
  const token = newEdgeToken();
  const requests: string[] = [];
  let held = Promise.withResolvers<void>();
  const app = serveResiliently<Deno.Addr>(
    { ...privateListenAt(), name: "app", logger },
    async (request) => {
      const path = new URL(request.url).pathname;
      requests.push(`${request.method} ${path}`);
      const body = await request.text();
      if (path === "/slow") await new Promise((resolve) => setTimeout(resolve, 200));
      if (path === "/hold") await held.promise;
      if (path === "/big") return new Response(new Uint8Array(BIG_BODY_BYTES));
      if (path === "/stream") {
        return new Response(ReadableStream.from([new TextEncoder().encode("streamed")]));
      }
      const stamped = stampedConnection(request.headers.get(EDGE_CLIENT_HEADER), token);
      return Response.json({
        path,
        body,
        client: stamped?.address ?? null,
        proxied: stamped?.proxied ?? null,
        host: request.headers.get("host"),
      });
    },
  );
  const edge = startEdgeGuard({
    hostname: "127.0.0.1",
    port: 0,
    upstream: () => app.addr,
    clientToken: token,
    limits: { ...LIMITS, ...setup.limits },
    logger,
    ...(setup.trustedProxy ? { trustedProxy: setup.trustedProxy } : {}),
  });
  const seen: TestApp = {
    requests,
    get addr() {
      return app.addr;
    },
    token,
    release() {
      held.resolve();
      held = Promise.withResolvers<void>();
    },
  };
  let stopped: Promise<void> | undefined;
  // As the gateway stops: the app's graceful shutdown drains what the edge still carries.
  const stop = (): Promise<void> => {
    seen.release();
    return stopped ??= edge.shutdown(() => app.shutdown());
  };
  try {
    await run(edge, seen, stop);
  } finally {
    await stop();
  }
}

export async function connect(edge: EdgeGuard): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port: edge.addr.port });
}

export const send = async (conn: Deno.Conn, text: string | Uint8Array): Promise<void> => {
  const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
};

/** Everything the edge sends until it closes the connection. */
export async function readToClose(conn: Deno.Conn): Promise<string> {
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

/** The status of every answer in `text`, in order. */
export const statuses = (text: string): number[] =>
  [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));

/**
 * A client socket from another loopback address (`127.0.0.2`, …): Deno.connect cannot choose its
 * source address, node:net can. What it receives is collected; `closed` settles at its end.
 */
export class PeerSocket {
  readonly socket: net.Socket;
  received = "";
  readonly closed: Promise<void>;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.received += chunk);
    socket.on("error", () => {});
    this.closed = new Promise((resolve) => socket.on("close", () => resolve()));
  }

  static open(edge: EdgeGuard, localAddress: string): Promise<PeerSocket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port: edge.addr.port, localAddress });
      socket.once("connect", () => resolve(new PeerSocket(socket)));
      socket.once("error", reject);
    });
  }

  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(data, (error) => error ? reject(error) : resolve())
    );
  }

  /** Waits until `predicate` holds of what arrived, or the socket closed. */
  async until(predicate: (received: string) => boolean, ms = 5_000): Promise<string> {
    const deadline = Date.now() + ms;
    while (!predicate(this.received) && !this.socket.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.received;
  }

  get isClosed(): boolean {
    return this.socket.closed;
  }

  close(): void {
    this.socket.destroy();
  }
}

import { sleep } from "../net.ts";

/** One request a test receiver got: what a webhook endpoint would see. */
export interface ReceivedRequest {
  headers: Headers;
  body: string;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** What the receiver answers from now on (a function may vary it per request). */
  respondWith(status: number | ((request: ReceivedRequest) => number)): void;
  /** Resolves once `count` requests matching `filter` have arrived; rejects after `timeoutMs`. */
  waitFor(
    count: number,
    options?: { timeoutMs?: number; filter?: (r: ReceivedRequest) => boolean },
  ): Promise<ReceivedRequest[]>;
  /** Closes the listener: connections are refused until `start` runs again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A real HTTP endpoint on loopback that records every webhook delivery sent to it. */
export async function startWebhookReceiver(
  options: { port?: number; path?: string; /** Answer only after this long. */ delayMs?: number } =
    {},
): Promise<WebhookReceiver> {
  // A path of its own: a port freed by this receiver can be reused by another test's receiver,
  // and late retries from that other test's stack must not count as deliveries here.
  const path = options.path ?? `/hooks/${crypto.randomUUID()}`;
  const received: ReceivedRequest[] = [];
  let status: number | ((request: ReceivedRequest) => number) = 204;
  let server: Deno.HttpServer<Deno.NetAddr> | null = null;
  let port = options.port ?? 0;

  const start = (): Promise<void> => {
    server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (req) => {
      if (new URL(req.url).pathname !== path) {
        await req.body?.cancel();
        return new Response(null, { status: 404 });
      }
      const request = { headers: req.headers, body: await req.text(), receivedAt: Date.now() };
      received.push(request);
      if (options.delayMs) await sleep(options.delayMs);
      return new Response(null, {
        status: typeof status === "function" ? status(request) : status,
      });
    });
    port = server.addr.port;
    return Promise.resolve();
  };
  await start();

  const stop = async (): Promise<void> => {
    const running = server;
    server = null;
    await running?.shutdown();
  };

  return {
    get url() {
      return `http://127.0.0.1:${port}${path}`;
    },
    get port() {
      return port;
    },
    received,
    respondWith(next) {
      status = next;
    },
    async waitFor(count, opts = {}) {
      const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
      const matching = (): ReceivedRequest[] =>
        opts.filter ? received.filter(opts.filter) : [...received];
      while (matching().length < count) {
        if (Date.now() > deadline) {
          throw new Error(
            `Receiver got ${matching().length} of ${count} expected requests in time`,
          );
        }
        await sleep(20);
      }
      return matching();
    },
    stop,
    start,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * `Deno.serve` that comes back. Deno's server stops for good at the first failed accept (out of
 * file descriptors, say) and rejects `finished`, which, unawaited, ends the process: here the
 * failure is logged and the server started again, after a pause that grows while it keeps failing.
 */
import type { Logger } from "@printshop/shared/log";
import { Backoff } from "@printshop/shared/events/waker";

export interface ResilientServer<A extends Deno.Addr = Deno.NetAddr> {
  /** Where it listens now: a server on port 0 may come back on another port. */
  readonly addr: A;
  shutdown(): Promise<void>;
}

/** Where to listen: a TCP address, or a Unix socket's path (`\0…` for an abstract one). */
export type ListenAt = { hostname: string; port: number } | { path: string };

/**
 * Where a server only this process talks to listens: on Linux an abstract Unix socket named at
 * random (nothing on disk, so no write permission; and far less kernel work per request than
 * loopback TCP), elsewhere a loopback port.
 */
export function privateListenAt(): ListenAt {
  return Deno.build.os === "linux"
    ? { path: `\0printshop-${crypto.randomUUID()}` }
    : { hostname: "127.0.0.1", port: 0 };
}

export type ResilientServerOptions<A extends Deno.Addr = Deno.NetAddr> = ListenAt & {
  /** Names the server in logs ("app", "admin"). */
  name: string;
  logger: Logger;
  onListen?: (addr: A) => void;
};

/** A server that lived this long before failing starts again at the shortest pause. */
const STABLE_MS = 10_000;

/**
 * `A` is the address kind `options` listens at: Deno.NetAddr for a hostname and port (the
 * default), Deno.UnixAddr for a path.
 */
export function serveResiliently<A extends Deno.Addr = Deno.NetAddr>(
  options: ResilientServerOptions<A>,
  handler: Deno.ServeHandler<A>,
): ResilientServer<A> {
  const { logger, name } = options;
  const backoff = new Backoff(100, 5_000);
  let stopping = false;
  let server: Deno.HttpServer<A>;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const start = (): void => {
    const startedAt = Date.now();
    // Deno types a server by its options; the caller's `A` says which of the two these are.
    const onListen = (addr: Deno.Addr): void => options.onListen?.(addr as A);
    const started = "path" in options
      ? Deno.serve(
        { path: options.path, onListen },
        handler as unknown as Deno.ServeHandler<Deno.UnixAddr>,
      )
      : Deno.serve(
        { hostname: options.hostname, port: options.port, onListen },
        handler as unknown as Deno.ServeHandler<Deno.NetAddr>,
      );
    server = started as unknown as Deno.HttpServer<A>;
    server.finished.catch((error) => {
      if (stopping) return;
      if (Date.now() - startedAt > STABLE_MS) backoff.reset();
      logger.error("server stopped; starting it again", { server: name, error: String(error) });
      again();
    });
  };
  const again = (): void => {
    timer = setTimeout(() => {
      if (stopping) return;
      try {
        start();
      } catch (error) {
        logger.error("server could not start again", { server: name, error: String(error) });
        again();
      }
    }, backoff.next());
  };

  // The first start throws (a port in use) to the caller, as Deno.serve does.
  start();
  return {
    get addr() {
      return server.addr;
    },
    async shutdown() {
      stopping = true;
      clearTimeout(timer);
      await server.shutdown().catch(() => {});
    },
  };
}

/**
 * `Deno.serve` that comes back. Deno's server stops for good at the first failed accept (out of
 * file descriptors, say) and rejects `finished`, which, unawaited, ends the process: here the
 * failure is logged and the server started again, after a pause that grows while it keeps failing.
 */
import type { Logger } from "@printshop/shared/log";
import { Backoff } from "@printshop/shared/events/waker";

export interface ResilientServer {
  /** Where it listens now: a server on port 0 may come back on another port. */
  readonly addr: Deno.NetAddr;
  shutdown(): Promise<void>;
}

export interface ResilientServerOptions {
  hostname: string;
  port: number;
  /** Names the server in logs ("app", "admin"). */
  name: string;
  logger: Logger;
  onListen?: (addr: Deno.NetAddr) => void;
}

/** A server that lived this long before failing starts again at the shortest pause. */
const STABLE_MS = 10_000;

export function serveResiliently(
  options: ResilientServerOptions,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): ResilientServer {
  const { logger, name } = options;
  const backoff = new Backoff(100, 5_000);
  let stopping = false;
  let server: Deno.HttpServer<Deno.NetAddr>;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const start = (): void => {
    const startedAt = Date.now();
    server = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      onListen: (addr) => options.onListen?.(addr),
    }, handler);
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

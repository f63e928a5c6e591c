/**
 * The public port's edge: a connection guard in front of the gateway app. Deno.serve has no
 * header, body or idle timeout and dies at the first failed accept, so the public port is a plain
 * listener here: each client connection is counted (over the cap it is told 503 and closed),
 * paired with a connection to the app's private server (an abstract Unix socket on Linux,
 * loopback elsewhere), and its bytes are passed on unchanged, but for the client's address
 * stamped on each request head (client_stamp.ts), while the framing (http_framing.ts) says what
 * the client is doing, so that the deadlines (deadlines.ts) can close what is too slow. Request
 * heads the app's server would refuse with an empty 400 are refused here with an error envelope
 * instead. Accept failures (EMFILE) are waited out, never fatal.
 */
import type { Logger } from "@printshop/shared/log";
import { Backoff } from "@printshop/shared/events/waker";
import { type HeadLimits, RequestFramer, ResponseFramer } from "./http_framing.ts";
import {
  type ConnectionClock,
  type EdgeTimeouts,
  expiryAnswer,
  newClock,
  nextDeadline,
  sweepIntervalMs,
} from "./deadlines.ts";
import { type Refusal, refusal, refusalResponse } from "./refusals.ts";
import { SHED_SLOTS } from "./descriptors.ts";
import { stampHead, stampLine } from "./client_stamp.ts";
import { concatBytes } from "@printshop/shared/bytes";

export interface EdgeLimits extends EdgeTimeouts, HeadLimits {
  maxConnections: number;
}

export interface EdgeOptions {
  hostname: string;
  port: number;
  /** The app's server; asked for each connection, as a restart may move it. */
  upstream: () => Deno.Addr;
  /** The token the app knows the edge's client stamp by (client_stamp.ts). */
  clientToken: string;
  limits: EdgeLimits;
  logger: Logger;
}

export interface EdgeGuard {
  readonly addr: Deno.NetAddr;
  /** Client connections being served now (not those being shed). */
  readonly open: number;
  /**
   * Stops accepting and closes idle connections; `drain` (the app server's graceful shutdown)
   * lets the answers in flight finish; whatever is left is then closed.
   */
  shutdown(drain?: () => Promise<void>): Promise<void>;
}

// Read buffers, per connection and direction. Every open connection waits in a read on both
// sides, so one that has not yet been busy (an idle or a slow client, what an attack holds open)
// waits with the small ones; the large ones are allocated when there is traffic to carry.
const SMALL_BUFFER_BYTES = 2 * 1024;
const REQUEST_BUFFER_BYTES = 8 * 1024;
const RESPONSE_BUFFER_BYTES = 16 * 1024;
/**
 * A read that fills the response buffer means a large answer is on its way: the next reads take
 * a buffer this size from a pool shared by every connection, and give it back once its bytes are
 * written, so a large answer passes in a few reads and writes rather than many, while a
 * connection holds one only for as long as it carries one.
 */
const LARGE_BUFFER_BYTES = 64 * 1024;
const LARGE_BUFFERS_KEPT = 16;
const largeBuffers: Uint8Array<ArrayBuffer>[] = [];
const takeLargeBuffer = (): Uint8Array<ArrayBuffer> =>
  largeBuffers.pop() ?? new Uint8Array(LARGE_BUFFER_BYTES);
const giveBackLargeBuffer = (buffer: Uint8Array<ArrayBuffer>): void => {
  if (largeBuffers.length < LARGE_BUFFERS_KEPT) largeBuffers.push(buffer);
};
/** After the app has drained, how long connections get to pass on what they hold. */
const SHUTDOWN_FLUSH_MS = 5_000;
/** The same warning (shedding, accept failures) at most this often. */
const WARN_EVERY_MS = 10_000;

const close = (conn: Deno.Conn): void => {
  try {
    conn.close();
  } catch { /* already closed */ }
};

function throttledWarn(logger: Logger): (message: string, fields: Record<string, unknown>) => void {
  const last = new Map<string, number>();
  const suppressed = new Map<string, number>();
  return (message, fields) => {
    const now = Date.now();
    if (now - (last.get(message) ?? 0) < WARN_EVERY_MS) {
      suppressed.set(message, (suppressed.get(message) ?? 0) + 1);
      return;
    }
    logger.warn(message, { ...fields, since_last_warning: suppressed.get(message) ?? 0 });
    last.set(message, now);
    suppressed.set(message, 0);
  };
}

/** Writes all of `bytes`, noting in `clock` since when a write has been waiting. */
async function writeAll(
  conn: Deno.Conn,
  bytes: Uint8Array,
  clock?: ConnectionClock,
): Promise<void> {
  let offset = 0;
  try {
    while (offset < bytes.length) {
      if (clock) clock.sendingSince = Date.now();
      offset += await conn.write(bytes.subarray(offset));
    }
  } finally {
    if (clock) clock.sendingSince = null;
  }
}

/**
 * Tells a client why it is being closed, then closes: the answer, a FIN, and a moment (at most
 * `lingerMs`) in which what the client still sends is read and dropped, since closing a socket
 * with unread bytes resets it and the client may lose the answer.
 */
async function answerAndClose(conn: Deno.Conn, answer: Refusal, lingerMs: number): Promise<void> {
  const timer = setTimeout(() => close(conn), lingerMs);
  try {
    await writeAll(conn, refusalResponse(answer, crypto.randomUUID(), new Date()));
    await conn.closeWrite();
    const sink = new Uint8Array(4096);
    while (await conn.read(sink) !== null) { /* dropped */ }
  } catch {
    // closed by the timer, or by the client
  } finally {
    clearTimeout(timer);
    close(conn);
  }
}

/** One client connection and its pair to the app. */
class GuardedConnection {
  readonly clock: ConnectionClock;
  readonly #client: Deno.Conn;
  readonly #app: Deno.Conn;
  readonly #limits: EdgeLimits;
  readonly #logger: Logger;
  readonly #requests: RequestFramer;
  readonly #responses = new ResponseFramer();
  /** The header line naming this client, added after each request line. */
  readonly #stamp: Uint8Array;
  #serial = 0;
  /** Set once the connection is being closed (with or without an answer). */
  #ending = false;
  /** A refused head while answers are owed: read and drop, answer once they are out. */
  #discarding = false;
  #pendingRefusal: Refusal | null = null;
  #clientEnded = false;
  #shuttingDown = false;
  #appWrite: Promise<unknown> = Promise.resolve();
  #readerDone: Promise<void>;
  #readerFinished!: () => void;
  #lingering: Promise<void> = Promise.resolve();

  constructor(
    client: Deno.Conn,
    app: Deno.Conn,
    stamp: Uint8Array,
    limits: EdgeLimits,
    logger: Logger,
  ) {
    this.#client = client;
    this.#stamp = stamp;
    this.#app = app;
    this.#limits = limits;
    this.#logger = logger;
    this.#requests = new RequestFramer(limits);
    this.clock = newClock(Date.now());
    this.#readerDone = new Promise((resolve) => this.#readerFinished = resolve);
  }

  async run(): Promise<void> {
    await Promise.all([this.#pumpRequests(), this.#pumpResponses()]);
    await this.#lingering;
    close(this.#client);
    close(this.#app);
  }

  /** Closes the connection if its deadline has passed, with a 408 where one can be sent. */
  expire(now: number): void {
    const deadline = nextDeadline(this.clock, this.#limits);
    if (deadline === null || now < deadline.at) return;
    if (this.#ending) {
      // The answer was given (or is stuck on its way) and the moment to read it is over.
      close(this.#client);
      return;
    }
    const answer = expiryAnswer(
      deadline.reason,
      this.clock,
      this.#responses.midResponse,
      this.#limits,
    );
    if (answer) this.#logRefusal(answer);
    this.#terminate(answer);
  }

  /** For shutdown: closes now if nothing is in progress, else after the answers owed. */
  closeWhenIdle(): void {
    this.#shuttingDown = true;
    if (this.clock.request === "idle" && this.clock.owed === 0) this.#terminate(null);
  }

  close(): void {
    this.#terminate(null);
    close(this.#client);
  }

  async #pumpRequests(): Promise<void> {
    const small = new Uint8Array(SMALL_BUFFER_BYTES);
    let large: Uint8Array<ArrayBuffer> | null = null;
    let buffer = small;
    let ended = false;
    for (;;) {
      let n: number | null;
      try {
        n = await this.#client.read(buffer);
      } catch {
        break; // closed under us: a deadline, the app's end, shutdown
      }
      if (n === null) {
        ended = true;
        break;
      }
      if (this.#ending || this.#discarding) continue; // refused: drop what follows
      try {
        await this.#forward(buffer.subarray(0, n));
        // Past a request line and a few headers, or into a body: this client carries traffic.
        if (buffer === small && (n === small.length || this.#requests.phase === "body")) {
          buffer = large ??= new Uint8Array(REQUEST_BUFFER_BYTES);
        }
      } catch {
        // The app closed its end; the response pump finishes what it sent, then closes.
        this.#discarding = true;
      }
    }
    this.#clientEnded = true;
    this.#readerFinished();
    if (this.#ending) return;
    // A client may half-close after its last request and still read the answers owed to it.
    const between = this.#discarding || this.#requests.phase === "idle";
    if (ended && between && this.clock.owed > 0) return;
    this.#terminate(null);
  }

  async #forward(chunk: Uint8Array): Promise<void> {
    // Adjacent pieces of the same chunk go to the app as one write; a stamped head is a buffer of
    // its own, written together with what follows it.
    const pieces: Uint8Array[] = [];
    let stampNext = false;
    const flush = async (): Promise<void> => {
      if (pieces.length === 0) return;
      const bytes = pieces.length === 1 ? pieces[0]! : concatBytes(pieces);
      pieces.length = 0;
      this.#appWrite = writeAll(this.#app, bytes);
      await this.#appWrite;
    };
    for (const event of this.#requests.push(chunk)) {
      switch (event.type) {
        case "data": {
          let bytes = event.bytes;
          if (stampNext) {
            // The head's bytes, which follow its event: the app learns who the client is.
            stampNext = false;
            bytes = stampHead(bytes, this.#stamp);
          }
          const last = pieces.at(-1);
          if (
            last !== undefined && last.buffer === bytes.buffer &&
            last.byteOffset + last.byteLength === bytes.byteOffset
          ) {
            pieces[pieces.length - 1] = new Uint8Array(
              last.buffer,
              last.byteOffset,
              last.byteLength + bytes.byteLength,
            );
          } else {
            pieces.push(bytes);
          }
          break;
        }
        case "head":
          // Counted before its bytes leave, so the answer is expected however fast it comes.
          this.clock.owed++;
          this.#responses.expect(event.head.method === "HEAD");
          stampNext = true;
          break;
        case "end":
          break;
        case "refuse":
          await flush();
          this.#syncPhase();
          this.#refuse(event.refusal, event.during);
          return;
      }
    }
    await flush();
    this.#syncPhase();
  }

  /** Starts the clock of a new phase (a head begun, a body begun, back between requests). */
  #syncPhase(): void {
    if (this.#requests.serial === this.#serial) return;
    this.#serial = this.#requests.serial;
    this.clock.request = this.#requests.phase;
    this.clock.since = Date.now();
  }

  #refuse(answer: Refusal, during: "head" | "body"): void {
    this.#logRefusal(answer);
    if (during === "head") {
      // The app never saw this head; answers owed for earlier requests go out first.
      if (this.clock.owed === 0) this.#terminate(answer);
      else {
        this.#discarding = true;
        this.#pendingRefusal = answer;
        // Nothing more is read from this client: only the app's answers are awaited now.
        this.clock.request = "idle";
        this.clock.since = Date.now();
      }
      return;
    }
    // The app has this request's head: the client can only be told why if nothing of the app's
    // answer to it has gone out.
    this.#terminate(this.clock.owed === 1 && !this.#responses.midResponse ? answer : null);
  }

  #logRefusal(answer: Refusal): void {
    this.#logger.info("request refused at the edge", {
      status: answer.status,
      code: answer.code,
      reason: answer.message,
    });
  }

  async #pumpResponses(): Promise<void> {
    let own = new Uint8Array(SMALL_BUFFER_BYTES);
    let filled = false;
    for (;;) {
      // Until the first answer is owed, the app can only close: a small buffer will do.
      if (own.length < RESPONSE_BUFFER_BYTES && this.clock.owed > 0) {
        own = new Uint8Array(RESPONSE_BUFFER_BYTES);
      }
      const buffer: Uint8Array<ArrayBuffer> = filled ? takeLargeBuffer() : own;
      let n: number | null;
      try {
        n = await this.#app.read(buffer);
      } catch {
        break;
      }
      if (n === null) {
        this.clock.owed -= this.#responses.end();
        break;
      }
      if (this.#ending) break;
      const chunk = buffer.subarray(0, n);
      let completed: number;
      try {
        const progress = this.#responses.push(chunk);
        // The app upgrades nothing (no WebSocket); a 101 would be a bug, and is not followed.
        if (progress.upgraded) break;
        completed = progress.completed;
        await writeAll(this.#client, chunk, this.clock);
      } catch {
        break;
      }
      filled = n === buffer.length;
      if (buffer !== own) giveBackLargeBuffer(buffer);
      if (completed > 0) {
        this.clock.owed -= completed;
        if (this.clock.owed === 0) {
          this.clock.idleSince = Date.now();
          if (this.#pendingRefusal) {
            this.#terminate(this.#pendingRefusal);
            return;
          }
          if (this.#clientEnded) break;
          if (this.#shuttingDown && this.#requests.phase === "idle") break;
        }
      }
    }
    this.#terminate(null);
  }

  /** Closes the app's side at once and the client's after `answer`, if there is one. */
  #terminate(answer: Refusal | null): void {
    if (this.#ending) return;
    this.#ending = true;
    close(this.#app);
    if (answer === null) {
      close(this.#client);
      return;
    }
    this.#lingering = this.#answer(answer);
  }

  async #answer(answer: Refusal): Promise<void> {
    // The answer and the moment to read it are bounded by the "closing" deadline.
    this.clock.request = "closing";
    this.clock.since = Date.now();
    try {
      await this.#appWrite.catch(() => {});
      await writeAll(
        this.#client,
        refusalResponse(answer, crypto.randomUUID(), new Date()),
        this.clock,
      );
      await this.#client.closeWrite();
      // The request pump reads and drops what the client still sends, until it closes.
      await this.#readerDone;
    } catch {
      // the client went away, or the deadline closed it
    } finally {
      close(this.#client);
    }
  }
}

/** Listens on the public port and guards every connection to the app. */
export function startEdgeGuard(options: EdgeOptions): EdgeGuard {
  const { limits, logger } = options;
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  /** Each connection being served, and the promise that settles when it has closed. */
  const connections = new Map<GuardedConnection, Promise<void>>();
  const warn = throttledWarn(logger);
  let open = 0;
  let shedding = 0;
  let accepting = true;

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const connection of connections.keys()) connection.expire(now);
  }, sweepIntervalMs(limits));

  const shed = (conn: Deno.Conn, answer: Refusal): void => {
    if (shedding >= SHED_SLOTS) {
      close(conn);
      return;
    }
    shedding++;
    void answerAndClose(conn, answer, limits.idleTimeoutMs).finally(() => shedding--);
  };

  const serve = async (client: Deno.TcpConn): Promise<void> => {
    let app: Deno.Conn;
    try {
      const upstream = options.upstream();
      app = upstream.transport === "tcp"
        ? await Deno.connect({ hostname: upstream.hostname, port: upstream.port })
        : await Deno.connect({ transport: "unix", path: (upstream as Deno.UnixAddr).path });
    } catch (error) {
      warn("the app server cannot be reached", { error: String(error) });
      await answerAndClose(
        client,
        refusal("service_unavailable", "The gateway cannot take this request now; retry shortly"),
        limits.idleTimeoutMs,
      );
      return;
    }
    // Pieces of an answer go out as they come; Nagle's delay would hold each back.
    try {
      client.setNoDelay(true);
      if (app.localAddr.transport === "tcp") (app as Deno.TcpConn).setNoDelay(true);
    } catch { /* closed already */ }
    const stamp = stampLine(options.clientToken, client.remoteAddr.hostname);
    const connection = new GuardedConnection(client, app, stamp, limits, logger);
    const running = connection.run();
    connections.set(connection, running);
    try {
      await running;
    } finally {
      connections.delete(connection);
    }
  };

  (async () => {
    // Out of descriptors, accept fails until some close: wait, longer while it keeps failing.
    const backoff = new Backoff(10, 1_000);
    while (accepting) {
      let client: Deno.TcpConn;
      try {
        client = await listener.accept();
      } catch (error) {
        if (!accepting) break;
        const delay = backoff.next();
        warn("accepting a connection failed; retrying", { error: String(error), delayMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      backoff.reset();
      if (open >= limits.maxConnections) {
        warn("connection cap reached; shedding", { maxConnections: limits.maxConnections });
        shed(
          client,
          refusal("service_unavailable", "The gateway is at its connection limit; retry shortly"),
        );
        continue;
      }
      open++;
      serve(client).catch((error) => {
        logger.error("connection failed", { error: String(error) });
      }).finally(() => {
        open--;
      });
    }
  })();

  return {
    addr: listener.addr,
    get open() {
      return open;
    },
    async shutdown(drain) {
      accepting = false;
      try {
        listener.close();
      } catch { /* closed already */ }
      for (const connection of connections.keys()) connection.closeWhenIdle();
      await drain?.();
      // The app has answered what it had and closed its ends: each connection passes on what it
      // still holds and closes (a client that will not read is cut off by its send deadline).
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled(connections.values()),
        new Promise((resolve) => timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS)),
      ]);
      clearTimeout(timer);
      for (const connection of connections.keys()) connection.close();
      clearInterval(sweeper);
    },
  };
}

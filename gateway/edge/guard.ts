/**
 * The public port's edge: a connection guard in front of the gateway app. Deno.serve has no
 * header, body or idle timeout, no fair share of connections and dies at the first failed
 * accept, so the public port is a plain listener here:
 *
 * - Each client connection is admitted by `Admission`: one address group holds at most its
 *   share; at the cap a newcomer takes the place of the connection that costs others most (idle
 *   first, then the slowest heads and bodies), never one with a request in flight; only when
 *   every connection is busy is a newcomer told 503.
 * - A connection costs one descriptor until a complete request head has arrived; then it borrows
 *   a link to the app's private server (app_links.ts) for that one request and gives it back
 *   when the answer is out. Requests of one connection go to the app one at a time, in order,
 *   so every complete request gets its answer, or the connection is closed with the envelope in
 *   place of the first unanswered one (RFC 9112 §9.3.2).
 * - The framing (http_framing.ts) says what the client is doing, so that the deadlines
 *   (deadlines.ts) can close what is too slow; heads the app's server would refuse with an empty
 *   400 are refused here with the error envelope.
 * - Bytes pass unchanged, but for one header line on each request head naming the client
 *   (client_stamp.ts); from a trusted proxy (TRUSTED_PROXIES) the client is the one its PROXY
 *   protocol v2 header names.
 *
 * Accept failures (EMFILE) are waited out, never fatal.
 */
import type { ObservableResult } from "@opentelemetry/api";
import type { Logger } from "@printshop/shared/log";
import { Backoff } from "@printshop/shared/events/waker";
import { concatBytes } from "@printshop/shared/bytes";
import {
  edgeConnectionsEvicted,
  edgeConnectionsOpen,
  edgeConnectionsShed,
} from "@printshop/shared/metrics";
import {
  type HeadLimits,
  type RequestEvent,
  RequestFramer,
  type RequestHead,
  withoutField,
} from "./http_framing.ts";
import {
  type ConnectionClock,
  type EdgeTimeouts,
  expiryAnswer,
  newClock,
  nextDeadline,
  sweepIntervalMs,
} from "./deadlines.ts";
import { type Refusal, refusal, refusalResponse } from "./refusals.ts";
import { SHED_SLOTS } from "./capacity.ts";
import { hostLine, stampHead, stampLine } from "./client_stamp.ts";
import { Admission, type Standing } from "./admission.ts";
import { type AppLink, AppLinks } from "./app_links.ts";
import { MAX_PROXY_HEADER_BYTES, readProxyHeader } from "./proxy_protocol.ts";
import { addressGroup } from "../domain/address_group.ts";

/** Why a connection was given up for others (the eviction metric's `reason`). */
type EvictionReason = "cap" | "high_water" | "links" | "address_share";

export interface EdgeLimits extends EdgeTimeouts, HeadLimits {
  maxConnections: number;
  /** Requests at the app at once (each holds a link while it is carried). */
  maxLinks: number;
  /** Connections one address group (an IPv4 address, an IPv6 /64) may hold. */
  maxPerAddress: number;
  /** Above it, idle connections are given up, longest idle first. */
  highWater: number;
}

export interface EdgeOptions {
  hostname: string;
  port: number;
  /** The app's server; asked for each new link, as a restart may move it. */
  upstream: () => Deno.Addr;
  /** The token the app knows the edge's client stamp by (client_stamp.ts). */
  clientToken: string;
  limits: EdgeLimits;
  logger: Logger;
  /** Whether a peer is a trusted proxy, whose PROXY header names the client. None by default. */
  trustedProxy?: (address: string) => boolean;
}

export interface EdgeGuard {
  readonly addr: Deno.NetAddr;
  /** Client connections being served now (not those being shed). */
  readonly open: number;
  /** Links to the app open now, lent or idle. */
  readonly links: number;
  /**
   * Stops accepting and closes idle connections; `drain` (the app server's graceful shutdown)
   * lets the answers in flight finish; whatever is left is then closed.
   */
  shutdown(drain?: () => Promise<void>): Promise<void>;
}

// Read buffers of a client connection. Every open connection waits in a read, so one that has
// not yet been busy (an idle or a slow client, what an attack holds open) waits with the small
// one, which holds an API client's whole request head; the larger one is allocated when there
// is traffic to carry.
const SMALL_BUFFER_BYTES = 512;
const REQUEST_BUFFER_BYTES = 8 * 1024;
/**
 * A body up to this size (the default MAX_BODY_BYTES) is held at the edge until it is whole,
 * then passed on in one write: a request the app sees is complete, and a client trickling a body
 * in (a slow-body attack, or a poor mobile link) holds the few bytes it sent here instead of a
 * request in the app's server, which costs that some 300 KB (measured: 500 bodies at a byte a
 * second, straight to Deno.serve). Larger bodies are streamed, as are bodies once the edge holds
 * BODY_HOLD_TOTAL_BYTES in all.
 */
export const BODY_HOLD_BYTES = 1024 * 1024;
export const BODY_HOLD_TOTAL_BYTES = 32 * 1024 * 1024;
const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

/** Whether a request's body is held until whole: small or of unknown size (chunked). */
const holdsBody = (head: RequestHead): boolean =>
  head.body.kind === "chunked" ||
  (head.body.kind === "length" && head.body.length <= BODY_HOLD_BYTES);

/** The bytes of bodies held across every connection, within BODY_HOLD_TOTAL_BYTES. */
class HeldBodies {
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  take(size: number): boolean {
    if (this.#bytes + size > BODY_HOLD_TOTAL_BYTES) return false;
    this.#bytes += size;
    return true;
  }

  give(size: number): void {
    this.#bytes -= size;
  }
}

/** After the app has drained, how long connections get to pass on what they hold. */
const SHUTDOWN_FLUSH_MS = 5_000;
/** How long a connection given up to make room is given to take its 503. */
const EVICTION_ANSWER_MS = 1_000;
/**
 * How long a new or idle connection keeps its place before it may be given up for a newcomer
 * from elsewhere: long enough for a client that has just connected to send its request, far
 * shorter than an idle or slow flood holds its connections.
 */
const EVICTION_GRACE_MS = 1_000;
/** The same warning (shedding, accept failures) at most this often. */
const WARN_EVERY_MS = 10_000;

const closeQuietly = (conn: Deno.Conn): void => {
  try {
    conn.close();
  } catch { /* already closed */ }
};

type Warn = (message: string, fields: Record<string, unknown>) => void;

function throttledWarn(logger: Logger): Warn {
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

const envelope = (answer: Refusal): Uint8Array =>
  refusalResponse(answer, crypto.randomUUID(), new Date());

/**
 * Tells a client why it is being closed, then closes: the answer, a FIN, and a moment (at most
 * `lingerMs`) in which what the client still sends is read and dropped, since closing a socket
 * with unread bytes resets it and the client may lose the answer.
 */
async function answerAndClose(conn: Deno.Conn, answer: Refusal, lingerMs: number): Promise<void> {
  const timer = setTimeout(() => closeQuietly(conn), lingerMs);
  try {
    await writeAll(conn, envelope(answer));
    await conn.closeWrite();
    const sink = new Uint8Array(4096);
    while (await conn.read(sink) !== null) { /* dropped */ }
  } catch {
    // closed by the timer, or by the client
  } finally {
    clearTimeout(timer);
    closeQuietly(conn);
  }
}

/** Best effort, for a connection given up to make room: no lingering, it holds a descriptor. */
function answerBriefly(conn: Deno.Conn, answer: Refusal): void {
  const timer = setTimeout(() => closeQuietly(conn), EVICTION_ANSWER_MS);
  writeAll(conn, envelope(answer)).catch(() => {}).finally(() => {
    clearTimeout(timer);
    closeQuietly(conn);
  });
}

const atCapacity = (): Refusal =>
  refusal("service_unavailable", "The gateway is at its connection limit; retry shortly");

/** How one request's answer went. */
type Answered =
  /** The app's answer is out; the connection may carry another request if `persistent`. */
  | { kind: "answered"; persistent: boolean }
  /** The app closed or broke the link; `sent` if part of its answer reached the client. */
  | { kind: "failed"; sent: boolean }
  /** The client stopped taking the answer. */
  | { kind: "gone" };

/** What every connection shares: the edge's limits, links, admission and who the app trusts. */
interface EdgeShared {
  limits: EdgeLimits;
  logger: Logger;
  warn: Warn;
  links: AppLinks;
  admission: Admission<EdgeConnection>;
  token: string;
  /** The Host line given to a request without one. */
  hostLine: Uint8Array;
  /** A connection has closed: forget it. */
  left(connection: EdgeConnection): void;
  holding: HeldBodies;
}

/** One client connection. */
class EdgeConnection {
  readonly clock: ConnectionClock;
  readonly #client: Deno.TcpConn;
  readonly #edge: EdgeShared;
  readonly #requests: RequestFramer;
  /** The header line naming this client, added after each request line; made at the first. */
  #stamp: Uint8Array | null = null;
  /** Who the client is: the peer, or the client a trusted proxy's PROXY header names. */
  #address: string;
  readonly #proxied: boolean;
  /** Bytes of a trusted proxy's PROXY header, until it is whole; null once it is read. */
  #proxyBytes: Uint8Array | null;
  #standing: Standing = "idle";
  #serial = 0;
  /** The request in progress, from its head to its answer. */
  #request: RequestHead | null = null;
  /** Whether its body is being held here until it is whole. */
  #holding = false;
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  /** The link carrying the request in progress, from its head (or held body) to its answer. */
  #link: AppLink | null = null;
  /** The answer to the request in progress, relayed as it comes. */
  #answer: Promise<Answered> | null = null;
  /** Set once the connection is being closed (with or without an answer). */
  #ending = false;
  #shuttingDown = false;
  #closed = false;
  #readerEnded = false;
  /** Resolved when the request pump ends; made only when a goodbye waits for it. */
  #readerDone: PromiseWithResolvers<void> | null = null;
  /** A goodbye being given (an answer, a FIN, a moment to read them). */
  #lingering: Promise<void> | null = null;

  constructor(client: Deno.TcpConn, edge: EdgeShared, proxied: boolean) {
    this.#client = client;
    this.#edge = edge;
    this.#requests = new RequestFramer(edge.limits);
    this.#address = client.remoteAddr.hostname;
    this.#proxied = proxied;
    this.#proxyBytes = proxied ? new Uint8Array(0) : null;
    this.clock = newClock(Date.now());
  }

  get standing(): Standing {
    return this.#standing;
  }

  /**
   * Serves the connection to its end, reading what the client sends (one async frame per
   * connection: an idle one is what a flood holds by the thousand), then tells the edge it left.
   */
  async run(): Promise<void> {
    const small = new Uint8Array(SMALL_BUFFER_BYTES);
    let large: Uint8Array | null = null;
    let buffer: Uint8Array = small;
    try {
      for (;;) {
        let n: number | null;
        try {
          n = await this.#client.read(buffer);
        } catch {
          break; // closed under us: a deadline, an eviction, shutdown
        }
        if (n === null) break; // the client is done (after its answers: they were awaited)
        if (this.#ending) continue; // refused or finishing: drop what follows
        let chunk: Uint8Array = buffer.subarray(0, n);
        if (this.#proxyBytes !== null) {
          const rest = this.#readProxy(chunk);
          if (rest === null) continue;
          chunk = rest;
        }
        await this.#frame(chunk);
        // Past a request line and a few headers, or into a body: this client carries traffic.
        if (buffer === small && (n === small.length || this.#requests.phase === "body")) {
          buffer = large ??= new Uint8Array(REQUEST_BUFFER_BYTES);
        }
      }
    } catch (error) {
      // A bug here must cost one connection, never the process (an unhandled rejection would).
      this.#edge.logger.error("connection failed", { error: String(error) });
    } finally {
      this.#readerEnded = true;
      this.#readerDone?.resolve();
      if (this.#lingering) await this.#lingering;
      this.#closeAll();
      this.#edge.left(this);
    }
  }

  /** Closes the connection if its deadline has passed, with a 408 where one can be sent. */
  expire(now: number): void {
    const deadline = nextDeadline(this.clock, this.#edge.limits);
    if (deadline === null || now < deadline.at) return;
    if (this.#ending) {
      // The answer was given (or is stuck on its way) and the moment to read it is over.
      this.#closeAll();
      return;
    }
    const answer = expiryAnswer(
      deadline.reason,
      this.clock,
      this.#link?.responses.midResponse ?? false,
      this.#edge.limits,
    );
    if (answer) this.#logRefusal(answer);
    this.#endWith(answer);
  }

  /** Given up to make room for another (already forgotten by the admission), for `reason`. */
  evict(reason: EvictionReason): void {
    edgeConnectionsEvicted.add(1, { reason });
    if (this.#ending || this.#standing === "idle") {
      // Between requests a close is no answer lost: a client must be ready for it (RFC 9112 §9.6).
      this.#closeAll();
      return;
    }
    const answerStarted = this.#link?.responses.midResponse ?? false;
    this.#ending = true;
    this.#dropLink();
    if (answerStarted) this.#closeAll();
    else {
      this.#closed = true;
      answerBriefly(this.#client, atCapacity());
    }
  }

  /** For shutdown: closes now if nothing is in progress, else after the answer owed. */
  closeWhenIdle(): void {
    this.#shuttingDown = true;
    if (this.#standing === "idle" && this.#answer === null) this.#closeAll();
  }

  close(): void {
    this.#closeAll();
  }

  /**
   * Takes a trusted proxy's PROXY header off the front of the connection: answers the bytes
   * after it, or null while it is incomplete or when the connection was refused.
   */
  #readProxy(chunk: Uint8Array): Uint8Array | null {
    const bytes = this.#proxyBytes!.length === 0 ? chunk : concatBytes([this.#proxyBytes!, chunk]);
    const header = readProxyHeader(bytes);
    switch (header.kind) {
      case "incomplete":
        this.#proxyBytes = bytes.slice(0, MAX_PROXY_HEADER_BYTES);
        this.#enterHeadPhase();
        return null;
      case "invalid":
        this.#proxyBytes = null;
        this.#endWith(refusal("bad_request", `Malformed PROXY protocol header: ${header.reason}`));
        return null;
      case "absent":
        // A trusted proxy that sends no header: it stands for its clients itself.
        this.#proxyBytes = null;
        return bytes;
      case "local":
        this.#proxyBytes = null;
        return bytes.subarray(header.length);
      case "proxied": {
        this.#proxyBytes = null;
        const moved = this.#edge.admission.regroup(this, addressGroup(header.address));
        if (!moved.admitted) {
          this.#edge.warn("an address is at its share of connections; refusing", {
            maxPerAddress: this.#edge.limits.maxPerAddress,
          });
          edgeConnectionsShed.add(1, { reason: "address_share" });
          this.#endWith(atCapacity());
          return null;
        }
        moved.evict?.evict("address_share");
        this.#address = header.address;
        return bytes.subarray(header.length);
      }
    }
  }

  /** Frames what the client sent: each request is carried, then answered, before the next. */
  async #frame(chunk: Uint8Array): Promise<void> {
    let rest = chunk;
    while (rest.length > 0 && !this.#ending) {
      const step = this.#requests.push(rest);
      rest = rest.subarray(step.consumed);
      await this.#carry(step.events);
      this.#syncPhase();
      if (step.ended && !this.#ending && !await this.#awaitAnswer()) return;
    }
  }

  /**
   * Passes one step's bytes on. A request with no body, or one too large to hold, borrows a link
   * as soon as its head is complete and streams; a body up to BODY_HOLD_BYTES is held here until
   * it is whole, so that a client trickling one in costs the app nothing, as a proxy buffers a
   * request before it troubles its upstream.
   */
  async #carry(events: RequestEvent[]): Promise<void> {
    let pieces: Uint8Array[] = [];
    let ended = false;
    let head: RequestHead | null = null;
    for (const event of events) {
      switch (event.type) {
        case "head":
          head = this.#request = event.head;
          this.clock.owed = 1;
          this.#holding = holdsBody(event.head);
          if (!this.#holding) {
            this.#setStanding("busy");
            if (!await this.#borrow()) return;
          } else if (event.head.expectsContinue && event.head.version === "HTTP/1.1") {
            // The body is held here, so the client is asked for it here (and the app is not).
            try {
              await writeAll(this.#client, CONTINUE, this.clock);
            } catch {
              this.#closeAll();
              return;
            }
          }
          break;
        case "data":
          // The head's bytes follow its event: the app learns who the client is.
          pieces.push(head ? this.#stamped(event.bytes, head) : event.bytes);
          head = null;
          break;
        case "end":
          ended = true;
          break;
        case "refuse":
          this.#logRefusal(event.refusal);
          // A refused head reached nobody; a refused body's head is at the app, and the client
          // is told why only if nothing of the app's answer has gone out.
          this.#endWith(event.refusal);
          return;
      }
    }
    if (this.#holding) {
      let size = 0;
      for (const piece of pieces) size += piece.length;
      if (!ended && this.#hold(pieces, size)) return;
      // Whole, or more than may be held: the app takes it from here.
      pieces = this.#held.concat(pieces);
      this.#releaseHeld();
      this.#holding = false;
      if (ended) this.#setStanding("busy");
      if (!await this.#borrow()) return;
    }
    const link = this.#link;
    if (pieces.length === 0 || link === null) return; // nothing, or answered early: dropped
    try {
      await link.write(pieces.length === 1 ? pieces[0]! : concatBytes(pieces));
    } catch {
      // The app closed the link: the answer's relay finds out and says what to do.
    }
  }

  /** A head's bytes as the app gets them: stamped with the client, and a Host if it had none. */
  #stamped(bytes: Uint8Array, head: RequestHead): Uint8Array {
    const stamp = this.#stamp ??= stampLine(this.#edge.token, this.#address, this.#proxied);
    const stamped = head.hasHost
      ? stampHead(bytes, stamp)
      : stampHead(bytes, stamp, this.#edge.hostLine);
    // A held body's `100 Continue` was given here; the app must not give another.
    return this.#holding && head.expectsContinue ? withoutField(stamped, "expect") : stamped;
  }

  /** Holds more of a body, if this connection and the edge as a whole may hold that much. */
  #hold(pieces: Uint8Array[], size: number): boolean {
    if (this.#heldBytes + size > BODY_HOLD_BYTES || !this.#edge.holding.take(size)) return false;
    // Copies: the pieces are views of a read buffer that the next read reuses.
    for (const piece of pieces) this.#held.push(piece.slice());
    this.#heldBytes += size;
    return true;
  }

  #releaseHeld(): void {
    if (this.#heldBytes === 0 && this.#held.length === 0) return;
    this.#edge.holding.give(this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
  }

  /** Borrows a link for the request in progress; false when none can be had. */
  async #borrow(): Promise<boolean> {
    const lent = this.#edge.links.borrow();
    let link: AppLink;
    try {
      link = lent instanceof Promise ? await lent : lent;
    } catch (error) {
      this.#edge.warn("the app server cannot be reached", { error: String(error) });
      this.#endWith(
        refusal("service_unavailable", "The gateway cannot take this request now; retry shortly"),
      );
      return false;
    }
    if (this.#ending) {
      this.#edge.links.giveBack(link, true);
      return false;
    }
    this.#link = link;
    link.responses.expect(this.#request?.method === "HEAD");
    this.#answer = this.#relay(link);
    return true;
  }

  /**
   * Passes the app's answer to the client as it comes. An answer that ends while its request is
   * still arriving (the app refused it early) ends the request's use of the link: what the client
   * still sends of it is dropped.
   */
  async #relay(link: AppLink): Promise<Answered> {
    const serial = this.#requests.serial;
    let sent = false;
    for (;;) {
      const chunk = await link.read();
      if (chunk === null) {
        // A body that runs until the close is complete; anything else was cut short.
        if (link.responses.end() > 0) {
          return this.#answered({ kind: "answered", persistent: false });
        }
        return { kind: "failed", sent };
      }
      let completed: number;
      let persistent: boolean;
      try {
        const progress = link.responses.push(chunk);
        // The app upgrades nothing (no WebSocket); a 101 would be a bug, and is not followed.
        if (progress.upgraded) return { kind: "failed", sent };
        ({ completed, persistent } = progress);
      } catch {
        return { kind: "failed", sent };
      }
      try {
        await writeAll(this.#client, chunk, this.clock);
      } catch {
        return { kind: "gone" };
      }
      sent = true;
      if (completed > 0) {
        if (this.#requests.serial === serial && this.#requests.phase === "body") {
          this.#dropLink();
        }
        return this.#answered({ kind: "answered", persistent });
      }
    }
  }

  #answered(outcome: Answered): Answered {
    this.clock.owed = 0;
    this.clock.idleSince = Date.now();
    return outcome;
  }

  /** After a request has been carried whole: waits for its answer; false when that is the end. */
  async #awaitAnswer(): Promise<boolean> {
    const outcome = await this.#answer!;
    this.#answer = null;
    const link = this.#link;
    this.#link = null;
    if (link) {
      this.#edge.links.giveBack(link, outcome.kind === "answered" && outcome.persistent);
    }
    if (this.#ending) return false;
    switch (outcome.kind) {
      case "gone":
        this.#closeAll();
        return false;
      case "failed":
        this.#endWith(
          outcome.sent ? null : refusal(
            "service_unavailable",
            "The gateway could not complete this request; retry shortly",
          ),
        );
        return false;
      case "answered":
        if (!outcome.persistent || this.#shuttingDown) {
          this.#endWith(null, true);
          return false;
        }
        this.#setStanding("idle");
        return true;
    }
  }

  /** Starts the clock of a new phase (a head begun, a body begun, back between requests). */
  #syncPhase(): void {
    if (this.#requests.serial === this.#serial) return;
    this.#serial = this.#requests.serial;
    const phase = this.#requests.phase;
    this.clock.request = phase;
    this.clock.since = Date.now();
    if (phase === "head" || phase === "body") this.#setStanding(phase);
  }

  /** The PROXY header is arriving: it is part of the first head, under the same deadline. */
  #enterHeadPhase(): void {
    if (this.clock.request === "head") return;
    this.clock.request = "head";
    this.clock.since = Date.now();
    this.#setStanding("head");
  }

  #setStanding(standing: Standing): void {
    this.#standing = standing;
    this.#edge.admission.set(this, standing);
  }

  #logRefusal(answer: Refusal): void {
    this.#edge.logger.info("request refused at the edge", {
      status: answer.status,
      code: answer.code,
      reason: answer.message,
    });
  }

  /** The link is done with this connection's request: closed, since the app may be mid-way. */
  #dropLink(): void {
    const link = this.#link;
    this.#link = null;
    if (link) this.#edge.links.giveBack(link, false);
  }

  /**
   * Ends the connection: the request in progress loses its link; the client gets `answer` if
   * nothing of an answer reached it, then a FIN and a moment to read it (the closing deadline)
   * while what it still sends is dropped. `graceful` does the same after a complete answer.
   */
  #endWith(answer: Refusal | null, graceful = false): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#setStanding("closing");
    this.clock.request = "closing";
    this.clock.since = Date.now();
    this.#dropLink();
    this.#lingering = this.#finish(answer, graceful);
  }

  async #finish(answer: Refusal | null, graceful: boolean): Promise<void> {
    // An answer under way stops with its link; what it sent decides whether ours may follow.
    const outcome = await this.#answer;
    this.#answer = null;
    if (outcome?.kind === "failed" && outcome.sent) answer = null;
    if (answer === null && !graceful) {
      this.#closeAll();
      return;
    }
    try {
      if (answer !== null) await writeAll(this.#client, envelope(answer), this.clock);
      await this.#client.closeWrite();
      // The request pump reads and drops what the client still sends, until it closes.
      if (!this.#readerEnded) await (this.#readerDone ??= Promise.withResolvers()).promise;
    } catch {
      // the client went away, or the deadline closed it
    } finally {
      this.#closeAll();
    }
  }

  #closeAll(): void {
    this.#dropLink();
    this.#releaseHeld();
    if (this.#closed) return;
    this.#closed = true;
    closeQuietly(this.#client);
  }
}

/** Listens on the public port and guards every connection to the app. */
export function startEdgeGuard(options: EdgeOptions): EdgeGuard {
  const { limits, logger } = options;
  const trusted = options.trustedProxy ?? (() => false);
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const warn = throttledWarn(logger);
  const admission = new Admission<EdgeConnection>({ ...limits, graceMs: EVICTION_GRACE_MS });
  const links = new AppLinks({
    upstream: options.upstream,
    maxLinks: limits.maxLinks,
    // Every link is carrying a request: free the one whose client sends its body slowest.
    onShortage: () => {
      const victim = admission.reclaimBody();
      if (victim === null) return false;
      warn("every link to the app is in use; giving up the slowest body", {
        maxLinks: limits.maxLinks,
      });
      victim.evict("links");
      return true;
    },
  });
  const shared: EdgeShared = {
    limits,
    logger,
    warn,
    links,
    admission,
    token: options.clientToken,
    hostLine: hostLine(`${listener.addr.hostname}:${listener.addr.port}`),
    left: (connection) => {
      connections.delete(connection);
      admission.remove(connection);
    },
    holding: new HeldBodies(),
  };
  /** Each connection being served, and the promise that settles when it has closed. */
  const connections = new Map<EdgeConnection, Promise<void>>();
  let shedding = 0;
  let accepting = true;
  const observeOpen = (result: ObservableResult): void => result.observe(connections.size);
  edgeConnectionsOpen.addCallback(observeOpen);

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const connection of connections.keys()) connection.expire(now);
    // Above the high-water mark, idle connections go, the heaviest addresses' first.
    let reclaimed = 0;
    for (let victim = admission.reclaim(); victim !== null; victim = admission.reclaim()) {
      victim.evict("high_water");
      reclaimed++;
    }
    if (reclaimed > 0) {
      warn("connections above the high-water mark; closing idle ones", {
        highWater: limits.highWater,
        closed: reclaimed,
      });
    }
  }, sweepIntervalMs(limits));

  const shed = (conn: Deno.Conn): void => {
    if (shedding >= SHED_SLOTS) {
      closeQuietly(conn);
      return;
    }
    shedding++;
    void answerAndClose(conn, atCapacity(), limits.idleTimeoutMs).finally(() => shedding--);
  };

  const serve = (client: Deno.TcpConn, group: string, proxied: boolean): void => {
    try {
      client.setNoDelay(true);
    } catch { /* closed already */ }
    const connection = new EdgeConnection(client, shared, proxied);
    admission.add(connection, group, proxied);
    connections.set(connection, connection.run());
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
      const peer = client.remoteAddr.hostname;
      const proxied = trusted(peer);
      const group = addressGroup(peer);
      const admitted = admission.admit(group, proxied);
      if (!admitted.admitted) {
        warn("every connection is busy; shedding", {
          maxConnections: limits.maxConnections,
          maxPerAddress: limits.maxPerAddress,
        });
        edgeConnectionsShed.add(1, { reason: "capacity" });
        shed(client);
        continue;
      }
      if (admitted.evict !== null) {
        warn("connection cap reached; giving up the connection that costs others most", {
          maxConnections: limits.maxConnections,
          maxPerAddress: limits.maxPerAddress,
        });
        admitted.evict.evict("cap");
      }
      serve(client, group, proxied);
    }
  })();

  return {
    addr: listener.addr,
    get open() {
      return connections.size;
    },
    get links() {
      return links.open;
    },
    async shutdown(drain) {
      accepting = false;
      try {
        listener.close();
      } catch { /* closed already */ }
      for (const connection of connections.keys()) connection.closeWhenIdle();
      await drain?.();
      links.close();
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
      edgeConnectionsOpen.removeCallback(observeOpen);
    },
  };
}

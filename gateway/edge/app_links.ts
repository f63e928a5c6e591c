/**
 * Links: the edge's connections to the app's private server, shared by every client connection
 * as a proxy shares its upstream connections. A client connection borrows one when a complete
 * request head has arrived and gives it back once the answer is out, so a client that is idle or
 * slow with its head holds no link at all (one descriptor, not four), and a keep-alive link is
 * reused rather than opened per client.
 *
 * A link given back waits in the pool with a read outstanding: if the app closes it meanwhile,
 * the read says so and the link is dropped, never lent out dead. When every link is lent and the
 * cap is reached, a borrower waits its turn; the pool asks the edge to free one (`onShortage`,
 * which gives up the slowest body, since a request still in flight is never cut short).
 */
import { ResponseFramer } from "./http_framing.ts";

const OWN_BUFFER_BYTES = 16 * 1024;
/**
 * A read that fills a link's own buffer means a large answer is on its way: the next reads take a
 * buffer this size from a pool shared by every link and give it back at the read after, so a
 * large answer passes in a few reads and writes rather than many.
 */
const LARGE_BUFFER_BYTES = 64 * 1024;
const LARGE_BUFFERS_KEPT = 16;
const largeBuffers: Uint8Array<ArrayBuffer>[] = [];
/** Idle links kept open; more than this are closed when given back. */
const IDLE_LINKS_KEPT = 64;

const closeQuietly = (conn: Deno.Conn): void => {
  try {
    conn.close();
  } catch { /* already closed */ }
};

export class AppLink {
  /** Frames the app's answers on this link; between answers it waits for the next head. */
  readonly responses = new ResponseFramer();
  readonly #conn: Deno.Conn;
  readonly #own = new Uint8Array(OWN_BUFFER_BYTES);
  #large: Uint8Array<ArrayBuffer> | null = null;
  #filled = false;
  /** The read outstanding while the link waits in the pool. */
  #waiting: Promise<Uint8Array | null> | null = null;
  #closed = false;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes all of `bytes` to the app. */
  async write(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) offset += await this.#conn.write(bytes.subarray(offset));
  }

  /**
   * The app's next bytes (valid until the next call), or null once it has closed the link or the
   * link failed.
   */
  read(): Promise<Uint8Array | null> {
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = null;
      return waiting;
    }
    return this.#read();
  }

  close(): void {
    this.#closed = true;
    closeQuietly(this.#conn);
  }

  /** Starts the read a link in the pool waits in; `onEnd` runs if the app ends it meanwhile. */
  park(onEnd: () => void): void {
    const read = this.#read();
    this.#waiting = read;
    read.then((bytes) => {
      // Still parked: nothing should come from the app between answers.
      if (this.#waiting === read) {
        this.#waiting = null;
        if (bytes !== null) this.close();
        onEnd();
      }
    });
  }

  async #read(): Promise<Uint8Array | null> {
    if (this.#large) {
      if (largeBuffers.length < LARGE_BUFFERS_KEPT) largeBuffers.push(this.#large);
      this.#large = null;
    }
    const buffer = this.#filled
      ? this.#large = largeBuffers.pop() ?? new Uint8Array(LARGE_BUFFER_BYTES)
      : this.#own;
    let n: number | null;
    try {
      n = await this.#conn.read(buffer);
    } catch {
      n = null;
    }
    if (n === null) {
      this.close();
      return null;
    }
    this.#filled = n === buffer.length;
    return buffer.subarray(0, n);
  }
}

export interface AppLinksOptions {
  /** The app's server; asked at each connect, since a restart may move it. */
  upstream: () => Deno.Addr;
  maxLinks: number;
  /** Asked to free a link when a borrower waits; false when nothing could be freed. */
  onShortage: () => boolean;
}

interface Waiter {
  resolve: (link: AppLink) => void;
  reject: (error: unknown) => void;
}

export class AppLinks {
  readonly #options: AppLinksOptions;
  /** Idle links, the most recently used last (taken first: its buffers are warm). */
  readonly #idle: AppLink[] = [];
  readonly #waiters: Waiter[] = [];
  /** Links open, lent or idle, and those being opened. */
  #open = 0;
  #closed = false;
  /** Links already counted out: a parked link's read may end after it was dropped. */
  readonly #dropped = new WeakSet<AppLink>();

  constructor(options: AppLinksOptions) {
    this.#options = options;
  }

  /** Links open now, lent or idle. */
  get open(): number {
    return this.#open;
  }

  /** Borrowers waiting for a link. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * A link to lend: an idle one at once, else a new one while under the cap, else the next one
   * given back. Rejects when the app cannot be reached.
   */
  borrow(): AppLink | Promise<AppLink> {
    if (this.#closed) return Promise.reject(new Error("the edge is shutting down"));
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#open < this.#options.maxLinks) return this.#connect();
    const turn = new Promise<AppLink>((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
    });
    this.#options.onShortage();
    return turn;
  }

  /** Takes a link back: into the pool if it may carry another request, else closed. */
  giveBack(link: AppLink, reusable: boolean): void {
    if (!reusable || link.closed || this.#closed) {
      this.#drop(link);
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.resolve(link);
      return;
    }
    if (this.#idle.length >= IDLE_LINKS_KEPT) {
      this.#drop(link);
      return;
    }
    this.#idle.push(link);
    link.park(() => {
      const at = this.#idle.indexOf(link);
      if (at !== -1) this.#idle.splice(at, 1);
      this.#drop(link);
    });
  }

  /** Stops lending: idle links are closed, waiters refused, lent links closed when given back. */
  close(): void {
    this.#closed = true;
    for (const link of this.#idle.splice(0)) this.#drop(link);
    for (const waiter of this.#waiters.splice(0)) {
      waiter.reject(new Error("the edge is shutting down"));
    }
  }

  #drop(link: AppLink): void {
    if (!link.closed) link.close();
    if (this.#dropped.has(link)) return;
    this.#dropped.add(link);
    this.#open--;
    // A link freed while someone waits: open a new one for them.
    if (this.#waiters.length > 0 && this.#open < this.#options.maxLinks && !this.#closed) {
      const waiter = this.#waiters.shift()!;
      this.#connect().then(waiter.resolve, waiter.reject);
    }
  }

  async #connect(): Promise<AppLink> {
    this.#open++;
    try {
      const upstream = this.#options.upstream();
      const conn = upstream.transport === "tcp"
        ? await Deno.connect({ hostname: upstream.hostname, port: upstream.port })
        : await Deno.connect({ transport: "unix", path: (upstream as Deno.UnixAddr).path });
      // Pieces of an answer go out as they come; Nagle's delay would hold each back.
      if (conn.localAddr.transport === "tcp") (conn as Deno.TcpConn).setNoDelay(true);
      return new AppLink(conn);
    } catch (error) {
      this.#open--;
      throw error;
    }
  }
}

/**
 * The attackers of the edge part of `deno task bench` (scripts/bench_edge.ts), run as a Worker
 * of the bench process: idle connections, slowloris heads and slow bodies against the gateway's
 * public port, each bound to another loopback address with node:net's `localAddress`
 * (`Deno.connect` cannot choose a source address).
 *
 * A Worker, not code in the bench's own thread: the victim requests are timed on the bench's
 * event loop, which must not be the one juggling eleven thousand sockets and a thousand writes a
 * second. A Worker rather than a child process: its sockets end with the bench, whichever way
 * the bench ends, so a crash cannot leave a flood running.
 *
 * Every kind is held at its target: a connection the server closes (an idle timeout, a 408, an
 * eviction) or refuses is replaced after `replacePauseMs`. First connections leave at
 * `openPerSecond` at most, so the build-up measures the edge rather than the kernel's accept
 * backlog; replacements at `replacePerSecond` at most, fast enough to hold the targets against a
 * server that drops idle connections after a few seconds (10,000 of them against a 5 s timeout
 * is 2,000 a second), bounded so that a server that closes everything at once meets a steady
 * stream, not a storm. Each goes to the kind furthest below its target first.
 */
import net from "node:net";

export type AttackKind = "idle" | "slowloris" | "slowBody";
export const ATTACK_KINDS: readonly AttackKind[] = ["idle", "slowloris", "slowBody"];

export interface AttackPlan {
  host: string;
  port: number;
  /** The slow bodies' key: a head the gateway would accept, so it is the body that is slow. */
  apiKey: string;
  targets: Record<AttackKind, number>;
  /** Source addresses, taken round-robin. */
  addresses: readonly string[];
  /** First connections per second, at most. */
  openPerSecond: number;
  /** Replacements per second, at most. */
  replacePerSecond: number;
  replacePauseMs: number;
  connectTimeoutMs: number;
}

/** Counters of one kind since the attack began (`open` and `connecting` are the current ones). */
export interface KindCounters {
  target: number;
  /** Connected now and not closed. */
  open: number;
  /** Connects in flight now. */
  connecting: number;
  /** Connects that succeeded. */
  opened: number;
  /** Connected, then closed by the server (its FIN or a reset), not by the attacker. */
  closedByServer: number;
  /** Of those: the status of the answer the server sent first ("503", "408"), "none" if none. */
  answeredBeforeClose: Record<string, number>;
  /** Total time the server-closed ones were held, for their mean lifetime. */
  lifetimeMsSum: number;
  /** Connects that failed: refused, reset, out of descriptors, or `timeout` (ours). */
  failedToConnect: number;
  connectErrors: Record<string, number>;
  /** Errors on connected sockets, by code (the reset behind a close, usually). */
  socketErrors: Record<string, number>;
}

export interface AttackerStats {
  /** Date.now() of the snapshot; the worker's performance.now() has another origin. */
  at: number;
  startedAt: number;
  /** When every kind first held its target at once; null until then. */
  fullStrengthAt: number | null;
  kinds: Record<AttackKind, KindCounters>;
}

export type AttackerCommand = { type: "start"; plan: AttackPlan } | { type: "stop" };
export type AttackerEvent =
  | { type: "stats"; stats: AttackerStats }
  | { type: "stopped"; stats: AttackerStats }
  | { type: "failed"; message: string };

const STATS_EVERY_MS = 250;
const OPEN_TICK_MS = 20;
/** The slow writers each send a byte a second, in ten groups a tenth of a second apart. */
const WRITE_TICK_MS = 100;
const WRITE_GROUPS = 10;
const STOP_GRACE_MS = 2_000;

/** The status code of an answer's first bytes ("HTTP/1.1 503 …"), or "other". */
export function statusOf(firstBytes: Uint8Array): string {
  const line = new TextDecoder("latin1").decode(firstBytes.subarray(0, 12));
  return /^HTTP\/1\.[01] \d{3}$/.test(line) ? line.slice(9, 12) : "other";
}

/**
 * Byte `index` of a request head that never ends: a request line and headers, then one more
 * header after another, never the blank line that would finish it.
 */
export function slowlorisByte(host: string, index: number): number {
  const start = `GET /v1/me HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: bench-edge-slowloris\r\n`;
  const more = "X-Slow: 1\r\n";
  const char = index < start.length ? start[index]! : more[(index - start.length) % more.length]!;
  return char.charCodeAt(0);
}

/** The complete head of a `POST /v1/quotes` whose 100,000-byte body then comes a byte a second. */
export function slowBodyHead(host: string, apiKey: string): string {
  return `POST /v1/quotes HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${apiKey}\r\n` +
    "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
}

const BODY_BYTES = new TextEncoder().encode('{"reference":"' + "a".repeat(64));

function emptyCounters(target: number): KindCounters {
  return {
    target,
    open: 0,
    connecting: 0,
    opened: 0,
    closedByServer: 0,
    answeredBeforeClose: {},
    lifetimeMsSum: 0,
    failedToConnect: 0,
    connectErrors: {},
    socketErrors: {},
  };
}

const bump = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

const codeOf = (error: unknown): string =>
  (error as { code?: unknown })?.code !== undefined
    ? String((error as { code: unknown }).code)
    : error instanceof Error
    ? error.message.slice(0, 60)
    : String(error);

interface Attacker {
  kind: AttackKind;
  socket: net.Socket;
  /** Which tenth of a second it writes in. */
  group: number;
  /** Bytes of its head or body sent so far. */
  sent: number;
}

/** Runs `plan` until `stop()`; `report` gets the counters every 250 ms. */
function attack(plan: AttackPlan, report: (stats: AttackerStats) => void): {
  stop(): Promise<AttackerStats>;
} {
  const startedAt = Date.now();
  const kinds = Object.fromEntries(
    ATTACK_KINDS.map((kind) => [kind, emptyCounters(plan.targets[kind])]),
  ) as Record<AttackKind, KindCounters>;
  /** Closed ones waiting out their replacement pause. */
  const waiting: Record<AttackKind, number> = { idle: 0, slowloris: 0, slowBody: 0 };
  const sockets = new Set<net.Socket>();
  const writers = new Set<Attacker>();
  const host = `${plan.host}:${plan.port}`;
  let fullStrengthAt: number | null = null;
  let stopping = false;
  let nextAddress = 0;
  let nextGroup = 0;
  const snapshot = (): AttackerStats => ({ at: Date.now(), startedAt, fullStrengthAt, kinds });

  const replaceLater = (kind: AttackKind): void => {
    if (stopping) return;
    waiting[kind]++;
    setTimeout(() => waiting[kind]--, plan.replacePauseMs);
  };

  const open = (kind: AttackKind): void => {
    const counters = kinds[kind];
    const localAddress = plan.addresses[nextAddress++ % plan.addresses.length]!;
    let socket: net.Socket;
    try {
      socket = net.connect({ host: plan.host, port: plan.port, localAddress, noDelay: true });
    } catch (error) {
      // EMFILE may be thrown here rather than emitted: out of descriptors in this process.
      counters.failedToConnect++;
      bump(counters.connectErrors, codeOf(error));
      replaceLater(kind);
      return;
    }
    counters.connecting++;
    sockets.add(socket);
    let connectedAt: number | null = null;
    let status: string | null = null;
    let error: string | null = null;
    let timedOut = false;
    const attacker: Attacker = { kind, socket, group: nextGroup++ % WRITE_GROUPS, sent: 0 };
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, plan.connectTimeoutMs);
    socket.on("connect", () => {
      clearTimeout(timer);
      connectedAt = Date.now();
      counters.connecting--;
      counters.open++;
      counters.opened++;
      if (kind === "slowloris") {
        socket.write(Uint8Array.of(slowlorisByte(host, 0)));
        attacker.sent = 1;
        writers.add(attacker);
      } else if (kind === "slowBody") {
        socket.write(slowBodyHead(host, plan.apiKey));
        writers.add(attacker);
      }
      if (
        fullStrengthAt === null && ATTACK_KINDS.every((k) => kinds[k].open >= kinds[k].target)
      ) {
        fullStrengthAt = Date.now();
      }
    });
    socket.on("data", (chunk: Uint8Array) => {
      status ??= statusOf(chunk);
    });
    socket.on("error", (e) => {
      error = codeOf(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      sockets.delete(socket);
      writers.delete(attacker);
      if (connectedAt !== null) {
        counters.open--;
        if (!stopping) {
          counters.closedByServer++;
          bump(counters.answeredBeforeClose, status ?? "none");
          counters.lifetimeMsSum += Date.now() - connectedAt;
          if (error !== null) bump(counters.socketErrors, error);
        }
      } else {
        counters.connecting--;
        if (!stopping) {
          counters.failedToConnect++;
          bump(counters.connectErrors, timedOut ? "timeout" : error ?? "closed");
        }
      }
      replaceLater(kind);
    });
  };

  /** Slots whose first connection has not left yet. */
  const unstarted: Record<AttackKind, number> = { ...plan.targets };
  /** Slots that had a connection, lost it and have waited out the pause. */
  const toReplace = (kind: AttackKind): number => {
    const c = kinds[kind];
    return c.target - unstarted[kind] - c.open - c.connecting - waiting[kind];
  };
  /** The kind with the largest share of its target in `need`, or null if none needs any. */
  const neediest = (need: (kind: AttackKind) => number): AttackKind | null => {
    let found: AttackKind | null = null;
    let share = 0;
    for (const kind of ATTACK_KINDS) {
      const target = kinds[kind].target;
      const missing = target === 0 ? 0 : need(kind) / target;
      if (missing > share) [found, share] = [kind, missing];
    }
    return found;
  };
  // Two token buckets, each at most a tenth of a second's worth at once.
  const firsts = { rate: plan.openPerSecond, tokens: 0 };
  const replacements = { rate: plan.replacePerSecond, tokens: 0 };
  let lastTick = performance.now();
  const opener = setInterval(() => {
    const now = performance.now();
    for (const bucket of [firsts, replacements]) {
      bucket.tokens = Math.min(
        Math.max(1, bucket.rate / 10),
        bucket.tokens + (bucket.rate * (now - lastTick)) / 1000,
      );
    }
    lastTick = now;
    while (firsts.tokens >= 1) {
      const kind = neediest((k) => unstarted[k]);
      if (kind === null) break;
      firsts.tokens--;
      unstarted[kind]--;
      open(kind);
    }
    while (replacements.tokens >= 1) {
      const kind = neediest(toReplace);
      if (kind === null) break;
      replacements.tokens--;
      open(kind);
    }
  }, OPEN_TICK_MS);

  let tick = 0;
  const writer = setInterval(() => {
    const group = tick++ % WRITE_GROUPS;
    for (const attacker of writers) {
      // A byte is written only once the last one has left: a server that stops reading gets
      // no queue of bytes from us, as a real slow client would not send faster either.
      if (attacker.group !== group || attacker.socket.writableLength > 0) continue;
      const byte = attacker.kind === "slowloris"
        ? slowlorisByte(host, attacker.sent)
        : BODY_BYTES[Math.min(attacker.sent, BODY_BYTES.length - 1)]!;
      attacker.socket.write(Uint8Array.of(byte));
      attacker.sent++;
    }
  }, WRITE_TICK_MS);

  const reporter = setInterval(() => report(snapshot()), STATS_EVERY_MS);

  return {
    async stop() {
      stopping = true;
      clearInterval(opener);
      clearInterval(writer);
      clearInterval(reporter);
      for (const socket of sockets) socket.destroy();
      const until = Date.now() + STOP_GRACE_MS;
      while (sockets.size > 0 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return snapshot();
    },
  };
}

// The worker's side of the messages; typed here, as this module is also imported for its types.
const scope = globalThis as unknown as {
  postMessage(message: AttackerEvent): void;
  onmessage: ((event: MessageEvent<AttackerCommand>) => void) | null;
};
let running: ReturnType<typeof attack> | null = null;
if (typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined") {
  scope.onmessage = async (event) => {
    const command = event.data;
    try {
      if (command.type === "start" && running === null) {
        running = attack(command.plan, (stats) => scope.postMessage({ type: "stats", stats }));
      } else if (command.type === "stop") {
        const stats = running ? await running.stop() : null;
        running = null;
        if (stats) scope.postMessage({ type: "stopped", stats });
        else scope.postMessage({ type: "failed", message: "stopped before it started" });
      }
    } catch (error) {
      scope.postMessage({ type: "failed", message: String(error) });
    }
  };
}

/**
 * A local stand-in for Deno Deploy's platform, for `deno task deploy:simulate`: per app, a front
 * that routes each request round-robin to one of at most `maxInstances` instances, starting one
 * (from the app's entrypoint, under Deploy's Deno version, with only the app's variables) when
 * none runs; stops an instance after `idleMs` without requests, and evicts instances at random
 * moments, mid-request, as the platform does: SIGINT, then SIGKILL 5 s later (or, for a share of
 * evictions, SIGKILL at once: a machine lost). What happened is kept as a timeline, so that the
 * checks can match a duplicate delivery to the kill that caused it.
 */

/** What the platform allows between SIGINT and SIGKILL. */
export const KILL_AFTER_MS = 5_000;

export interface AppSpec {
  name: string;
  /** The app directory (its deno.json carries `deploy`): the instances' working directory. */
  dir: string;
  entrypoint: string;
  env: Record<string, string>;
}

/**
 * How an instance ended: stopped when idle or evicted (SIGINT, and it exited 0 in time), killed
 * (SIGKILL, at once or 5 s after SIGINT, or it gave up on its own stop deadline), or crashed
 * (it exited without being asked: a failure of the app).
 */
export type InstanceEnd = "idle" | "evicted" | "killed" | "crashed";

/** One instance's life, as the checks read it. */
export interface InstanceRecord {
  app: string;
  id: number;
  startedAt: number;
  readyAt: number | null;
  /** When the platform sent SIGINT (idle or eviction) or SIGKILL at once. */
  stopAskedAt: number | null;
  /** SIGKILL at once, with no SIGINT before it. */
  killedAtOnce: boolean;
  /** When the process was gone, and how: SIGKILL counts as killed, whenever it came. */
  endedAt: number | null;
  end: InstanceEnd | null;
  exitCode: number | null;
  signal: string | null;
  /** Its output, for a failure to quote. */
  logPath: string;
}

interface Instance {
  record: InstanceRecord;
  child: Deno.ChildProcess;
  port: number;
  inFlight: number;
  lastRequestAt: number;
  stopping: boolean;
  ready: Promise<void>;
  exited: Promise<void>;
}

export interface FrontOptions {
  deno: string;
  maxInstances: number;
  idleMs: number;
  logDir: string;
  /** The platform's baseline for every process (HOME, PATH…), under the app's own variables. */
  baseEnv: Record<string, string>;
}

/** Cold starts: the first request's latency when no instance ran, per app. */
export interface ColdStart {
  app: string;
  ms: number;
}

export class AppFront {
  readonly instances: InstanceRecord[] = [];
  readonly coldStarts: ColdStart[] = [];
  /** Requests the front could not complete because their instance died under them. */
  brokenByKill = 0;
  #live: Instance[] = [];
  #next = 0;
  #server: Deno.HttpServer<Deno.NetAddr>;
  #idleTimer: ReturnType<typeof setInterval>;
  #ids = 0;
  #starting: Promise<Instance> | null = null;

  constructor(readonly spec: AppSpec, private readonly options: FrontOptions) {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => this.#route(request),
    );
    this.#idleTimer = setInterval(() => this.#stopIdle(), 250);
  }

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Instances serving now (not stopping). */
  running(): number {
    return this.#live.filter((instance) => !instance.stopping).length;
  }

  /** Evicts one busy instance (one with a request in flight, else any): the platform's whim. */
  evict(hard: boolean): boolean {
    const candidates = this.#live.filter((instance) => !instance.stopping);
    if (candidates.length === 0) return false;
    const busy = candidates.filter((instance) => instance.inFlight > 0);
    const pool = busy.length > 0 ? busy : candidates;
    const victim = pool[Math.floor(Math.random() * pool.length)]!;
    this.#stop(victim, hard ? "killed" : "evicted", hard);
    return true;
  }

  /** Every instance stopped (SIGINT, SIGKILL after 5 s), the front closed. */
  async close(): Promise<void> {
    clearInterval(this.#idleTimer);
    for (const instance of this.#live) this.#stop(instance, "idle", false);
    await Promise.all(this.#live.map((instance) => instance.exited));
    await this.#server.shutdown();
  }

  async #route(request: Request): Promise<Response> {
    const arrivedAt = performance.now();
    const cold = this.running() === 0;
    let instance: Instance;
    try {
      instance = await this.#pick();
    } catch (error) {
      return platformError(503, `no instance could start: ${String(error)}`);
    }
    instance.inFlight++;
    instance.lastRequestAt = Date.now();
    const url = new URL(request.url);
    try {
      const response = await fetch(
        `http://127.0.0.1:${instance.port}${url.pathname}${url.search}`,
        {
          method: request.method,
          headers: request.headers,
          body: request.body,
          redirect: "manual",
        },
      );
      const body = await response.arrayBuffer();
      if (cold) this.coldStarts.push({ app: this.spec.name, ms: performance.now() - arrivedAt });
      // fetch() has decoded the body: its encoding and length no longer describe it.
      const headers = new Headers(response.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(body, { status: response.status, headers });
    } catch (error) {
      // The instance died with the request on it: Deploy answers such a request with an error
      // of its own. The checks count these and match each to a kill.
      this.brokenByKill++;
      return platformError(502, `instance ${instance.record.id} went away: ${String(error)}`);
    } finally {
      instance.inFlight--;
      instance.lastRequestAt = Date.now();
    }
  }

  /** Round-robin over the serving instances, starting one when there are fewer than wanted. */
  async #pick(): Promise<Instance> {
    const serving = this.#live.filter((instance) => !instance.stopping);
    if (serving.length === 0) return await this.#startOne();
    // Under load, a second instance joins (as the platform scales out); requests meanwhile go
    // to the one there is.
    const busy = serving.every((instance) => instance.inFlight > 0);
    if (busy && serving.length < this.options.maxInstances && !this.#starting) {
      void this.#startOne().catch(() => {});
    }
    const instance = serving[this.#next++ % serving.length]!;
    await instance.ready;
    return instance;
  }

  #startOne(): Promise<Instance> {
    this.#starting ??= this.#spawn().finally(() => this.#starting = null);
    return this.#starting;
  }

  async #spawn(): Promise<Instance> {
    const port = freePort();
    const id = ++this.#ids;
    const record: InstanceRecord = {
      app: this.spec.name,
      id,
      startedAt: Date.now(),
      readyAt: null,
      stopAskedAt: null,
      killedAtOnce: false,
      endedAt: null,
      end: null,
      exitCode: null,
      signal: null,
      logPath: `${this.options.logDir}/${this.spec.name}-${id}.log`,
    };
    this.instances.push(record);
    const log = await Deno.open(record.logPath, {
      create: true,
      write: true,
      truncate: true,
    });
    const child = new Deno.Command(this.options.deno, {
      // The runtime's own permissions on Deploy are --allow-all; no other flag can be passed.
      args: ["run", "-A", this.spec.entrypoint],
      cwd: this.spec.dir,
      clearEnv: true,
      env: { ...this.options.baseEnv, ...this.spec.env, PORT: String(port) },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const sink = log.writable;
    void pipeBoth(child, sink);
    const exited = child.status.then((status) => {
      record.endedAt = Date.now();
      record.exitCode = status.code;
      record.signal = status.signal;
      if (record.stopAskedAt === null) record.end = "crashed";
      // SIGKILL, or an exit of its own with an error (its stop deadline passed); a SIGINT that
      // ended it before it had a handler (still starting) holds nothing.
      else if (status.signal === "SIGKILL" || (status.signal === null && status.code !== 0)) {
        record.end = "killed";
      }
      this.#live = this.#live.filter((instance) => instance.child !== child);
    });
    const instance: Instance = {
      record,
      child,
      port,
      inFlight: 0,
      lastRequestAt: Date.now(),
      stopping: false,
      ready: waitForPort(port, exited, 60_000).then(() => void (record.readyAt = Date.now())),
      exited,
    };
    this.#live.push(instance);
    try {
      await instance.ready;
    } catch (error) {
      this.#stop(instance, "killed", true);
      throw error;
    }
    return instance;
  }

  #stop(instance: Instance, end: InstanceEnd, hard: boolean): void {
    if (instance.stopping) return;
    instance.stopping = true;
    instance.record.stopAskedAt = Date.now();
    instance.record.end = end;
    instance.record.killedAtOnce = hard;
    const signal = (name: Deno.Signal): void => {
      try {
        instance.child.kill(name);
      } catch {
        // Gone already.
      }
    };
    if (hard) return signal("SIGKILL");
    signal("SIGINT");
    const timer = setTimeout(() => signal("SIGKILL"), KILL_AFTER_MS);
    void instance.exited.then(() => clearTimeout(timer));
  }

  #stopIdle(): void {
    const now = Date.now();
    for (const instance of this.#live) {
      if (
        !instance.stopping && instance.inFlight === 0 && instance.record.readyAt !== null &&
        now - instance.lastRequestAt >= this.options.idleMs
      ) this.#stop(instance, "idle", false);
    }
  }
}

function platformError(status: number, message: string): Response {
  return new Response(JSON.stringify({ platform: true, message }), {
    status,
    headers: { "content-type": "application/json", "x-simulated-platform": "true" },
  });
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function waitForPort(port: number, exited: Promise<void>, timeoutMs: number): Promise<void> {
  let gone = false;
  void exited.then(() => gone = true);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error("the instance exited before it listened");
    try {
      const connection = await Deno.connect({ hostname: "127.0.0.1", port });
      connection.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error(`the instance did not listen within ${timeoutMs} ms`);
}

async function pipeBoth(child: Deno.ChildProcess, sink: WritableStream<Uint8Array>): Promise<void> {
  const writer = sink.getWriter();
  const pump = async (stream: ReadableStream<Uint8Array>): Promise<void> => {
    for await (const chunk of stream) await writer.write(chunk).catch(() => {});
  };
  await Promise.all([pump(child.stdout), pump(child.stderr)]).catch(() => {});
  await writer.close().catch(() => {});
}

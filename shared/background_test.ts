/**
 * Background work on demand: the kick route a peer or a cron tick calls, the kicker that calls
 * it (against a real server), the order and cap of a drain's stages, and the wrapper that drains
 * after each answered write.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Hono } from "hono";
import {
  addKickRoute,
  KICK_PATH,
  kicker,
  kickHeader,
  type Settleable,
  settleInOrder,
} from "./background.ts";
import {
  type ContextKey,
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  PLATFORM_ORGANIZATION_ID,
  signInternalContextSync,
  verifyInternalContextSync,
} from "./internal_context.ts";
import { createLogger, type Logger } from "./log.ts";
import { freePort, sleep, waitFor } from "./net.ts";
import { kickAfterWrites } from "./service_main.ts";

const SECRET = "kick-secret-for-tests-0123456789abcdef";
const OTHER_SECRET = "another-secret-for-tests-0123456789abcdef";
const quiet = createLogger({ level: "error" });

/** One line a logger wrote: its level, its message and its fields. */
type Line = { level: string; msg: string; [field: string]: unknown };

/** A logger that keeps its lines, to see what was warned of. */
function recordingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A promise and what settles it, for work a test holds open. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

/** Whether `promise` has settled yet (after letting pending work run for `ms`). */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => settled = true, () => settled = true);
  await sleep(ms);
  return settled;
}

/** `promise`, or a failure naming `what` should it take longer than `ms` (it would hang). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function platformContext(overrides: Partial<InternalContext> = {}): InternalContext {
  return {
    organizationId: PLATFORM_ORGANIZATION_ID,
    credentialKind: "tenant_key",
    credentialId: "background-kick",
    scopes: [],
    requestId: crypto.randomUUID(),
    issuedAt: Date.now(),
    ...overrides,
  };
}

function kickApp(key: ContextKey, drain: () => Promise<void>): Hono {
  return addKickRoute(new Hono(), key, drain);
}

function kick(app: Hono, header?: string, query = ""): Promise<Response> {
  return Promise.resolve(app.request(`${KICK_PATH}${query}`, {
    method: "POST",
    headers: header === undefined ? {} : { [INTERNAL_CONTEXT_HEADER]: header },
  }));
}

Deno.test("addKickRoute() starts one drain and answers 202 without waiting for it", async () => {
  const key = await importContextKey(SECRET);
  const held = deferred();
  let drains = 0;
  const app = kickApp(key, () => {
    drains++;
    return held.promise;
  });
  try {
    // The drain never ends until told: the answer must not wait for it.
    const res = await within(
      kick(app, kickHeader(key, crypto.randomUUID())),
      5_000,
      "the kick's answer while its drain runs",
    );
    assertEquals(res.status, 202);
    assertEquals(await res.text(), "");
    assertEquals(drains, 1, "one kick, one drain, started before the answer");
  } finally {
    held.resolve();
  }
});

Deno.test("addKickRoute() with ?wait=true answers 204 only once its drain is done", async () => {
  const key = await importContextKey(SECRET);
  const held = deferred();
  let drains = 0;
  const app = kickApp(key, () => {
    drains++;
    return held.promise;
  });
  const answer = kick(app, kickHeader(key, crypto.randomUUID()), "?wait=true");
  assertEquals(await settledWithin(answer, 50), false, "no answer while the drain runs");
  assertEquals(drains, 1);
  held.resolve();
  const res = await within(answer, 5_000, "the kick's answer");
  assertEquals(res.status, 204);
  assertEquals(await res.text(), "");
  assertEquals(drains, 1, "one kick, one drain");
});

Deno.test("addKickRoute() answers 401 and drains nothing without the platform's kick context", async (t) => {
  const key = await importContextKey(SECRET);
  const other = await importContextKey(OTHER_SECRET);
  let drains = 0;
  const app = kickApp(key, () => {
    drains++;
    return Promise.resolve();
  });
  const refused: [string, string | undefined][] = [
    ["no header", undefined],
    ["a kick signed with another secret", kickHeader(other, crypto.randomUUID())],
    [
      "a platform context signed for another path",
      signInternalContextSync(key, "POST", "/internal/other", platformContext()),
    ],
    [
      "a context for /internal/kick with a tenant organisation",
      signInternalContextSync(
        key,
        "POST",
        KICK_PATH,
        platformContext({ organizationId: "0190b1c2-0000-7000-8000-0000000000aa" }),
      ),
    ],
    [
      "a platform context for /internal/kick with another credential",
      signInternalContextSync(key, "POST", KICK_PATH, platformContext({ credentialId: "admin" })),
    ],
    [
      "a kick context signed for GET",
      signInternalContextSync(key, "GET", KICK_PATH, platformContext()),
    ],
    [
      "a kick context gone stale",
      signInternalContextSync(
        key,
        "POST",
        KICK_PATH,
        platformContext({ issuedAt: Date.now() - 5 * 60_000 }),
      ),
    ],
    ["a malformed header", "not-a-context"],
  ];
  for (const [what, header] of refused) {
    for (const query of ["", "?wait=true"]) {
      await t.step(`${what}${query && ` (${query})`}`, async () => {
        const res = await kick(app, header, query);
        assertEquals(res.status, 401);
        const body = await res.json();
        assertEquals(body.error, "unauthenticated");
        assertEquals(body.status, false);
        assertEquals(drains, 0, "nothing drained");
      });
    }
  }
  await t.step("while the platform's own kick is let in (the key is right)", async () => {
    const res = await kick(app, kickHeader(key, crypto.randomUUID()));
    assertEquals(res.status, 202);
    assertEquals(drains, 1);
  });
});

/**
 * A server that answers kicks as addKickRoute does (202), holds the first open until told, and
 * checks each one's header.
 */
function kickTarget(key: ContextKey) {
  const firstHeld = deferred();
  const release = deferred();
  const seen: { method: string; path: string; ok: boolean; requestIdMatches: boolean }[] = [];
  let answered = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      const verified = verifyInternalContextSync(
        key,
        request.method,
        url.pathname,
        request.headers.get(INTERNAL_CONTEXT_HEADER),
      );
      seen.push({
        method: request.method,
        path: url.pathname,
        ok: verified.ok && verified.context.organizationId === PLATFORM_ORGANIZATION_ID &&
          verified.context.credentialId === "background-kick",
        requestIdMatches: verified.ok &&
          verified.context.requestId === request.headers.get("x-request-id"),
      });
      if (seen.length === 1) {
        firstHeld.resolve();
        await release.promise;
      }
      answered++;
      return new Response(null, { status: 202 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    answered: () => answered,
    firstHeld: firstHeld.promise,
    release: release.resolve,
    async close() {
      release.resolve();
      await server.shutdown();
    },
  };
}

/** Waits until `target` has answered `n` kicks, and a moment more for the kicker to read them. */
async function answered(target: ReturnType<typeof kickTarget>, n: number): Promise<void> {
  await waitFor(`${n} kicks answered`, () => Promise.resolve(target.answered() >= n), 10_000);
  // Room for a kick that should not come (a third, a late one), and for the answers to be read.
  await sleep(150);
}

Deno.test("kicker() keeps one kick in flight per target and makes the ones asked meanwhile one more", async () => {
  const key = await importContextKey(SECRET);
  const target = kickTarget(key);
  const { logger, lines } = recordingLogger();
  const kicks = kicker([target.url], key, logger);
  try {
    kicks.kick();
    await within(target.firstHeld, 5_000, "the first kick reaching the target");
    for (let i = 0; i < 9; i++) kicks.kick();
    await sleep(100);
    assertEquals(target.seen.length, 1, "no second kick while the first is in flight");
    target.release();
    await answered(target, 2);
    assertEquals(target.seen.length, 2, "ten kicks: the one in flight and one more after it");
    for (const request of target.seen) {
      assertEquals(request, { method: "POST", path: KICK_PATH, ok: true, requestIdMatches: true });
    }
    kicks.kick();
    await answered(target, 3);
    assertEquals(target.seen.length, 3, "a kick after the target went quiet goes out");
    assertEquals(lines, [], "a kick answered 202 is nothing to log");
  } finally {
    kicks.stop();
    await target.close();
  }
});

Deno.test("kicker() kicks every target, one held open holding up none of the others", async () => {
  const key = await importContextKey(SECRET);
  const slow = kickTarget(key);
  const fast = kickTarget(key);
  const kicks = kicker([slow.url, fast.url], key, quiet);
  try {
    // The fast one's first request is let through at once.
    fast.release();
    kicks.kick();
    await within(slow.firstHeld, 5_000, "the kick reaching the held target");
    await answered(fast, 1);
    assertEquals([slow.answered(), fast.seen.length], [0, 1]);
    slow.release();
    await answered(slow, 1);
    assertEquals([slow.seen.length, fast.seen.length], [1, 1]);
  } finally {
    kicks.stop();
    await slow.close();
    await fast.close();
  }
});

Deno.test("kicker() stop() lets go of a kick in flight, sends no follow-up and no kick after it", async () => {
  const key = await importContextKey(SECRET);
  const target = kickTarget(key);
  const { logger, lines } = recordingLogger();
  const kicks = kicker([target.url], key, logger);
  try {
    kicks.kick();
    await within(target.firstHeld, 5_000, "the first kick reaching the target");
    kicks.kick(); // would make one more once the first is answered
    kicks.stop();
    await waitFor(
      "the kick in flight to be let go",
      () => Promise.resolve(lines.some((l) => l.msg.includes("kick not delivered"))),
      5_000,
    );
    kicks.kick();
    target.release();
    await answered(target, 1);
    assertEquals(target.seen.length, 1, "neither the follow-up nor a kick after stop() went out");
    assertEquals(
      lines.map((l) => [l.level, l.msg]),
      [["debug", "kick not delivered; the target's tick will catch up"]],
      "only the kick let go is logged: nothing was even tried after stop()",
    );
  } finally {
    kicks.stop();
    await target.close();
  }
});

Deno.test("kicker() to a target that refuses connections neither throws nor stops kicking", async () => {
  const key = await importContextKey(SECRET);
  const { logger, lines } = recordingLogger();
  const kicks = kicker([`http://127.0.0.1:${freePort()}`], key, logger, 2_000);
  try {
    kicks.kick();
    kicks.kick();
    const undelivered = () => lines.filter((l) => l.msg.includes("kick not delivered")).length;
    await waitFor("both attempts to fail", () => Promise.resolve(undelivered() >= 2), 10_000);
    kicks.kick();
    await waitFor("a later attempt", () => Promise.resolve(undelivered() >= 3), 10_000);
    await sleep(100);
    assertEquals(undelivered(), 3, "the kick and its follow-up, then the later one");
    assert(lines.every((l) => l.level === "debug"), "a missed kick is not worth a warning");
  } finally {
    kicks.stop();
  }
});

Deno.test("kicker() against addKickRoute: accepted with the same secret, logged as refused with another", async () => {
  const key = await importContextKey(SECRET);
  const other = await importContextKey(OTHER_SECRET);
  let drains = 0;
  const app = kickApp(key, () => {
    drains++;
    return Promise.resolve();
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const { logger, lines } = recordingLogger();
  const accepted = kicker([url], key, logger);
  const refused = kicker([url], other, logger);
  try {
    accepted.kick();
    await waitFor("the kick's drain", () => Promise.resolve(drains === 1), 5_000);
    refused.kick();
    await waitFor(
      "the refusal to be logged",
      () => Promise.resolve(lines.some((l) => l.msg === "kick refused")),
      5_000,
    );
    assertEquals(drains, 1, "a kick signed with another secret drains nothing");
    const warned = lines.filter((l) => l.level !== "debug");
    assertEquals(warned.length, 1, "the accepted kick (202) is not warned of");
    assertEquals([warned[0]!.msg, warned[0]!.status], ["kick refused", 401]);
  } finally {
    accepted.stop();
    refused.stop();
    await server.shutdown();
  }
});

/** A stage that records when it starts and ends, taking `ms` (or failing, or never ending). */
function stage(
  name: string,
  log: string[],
  behaviour: "ok" | "reject" | "throw" | "hang" = "ok",
  ms = 10,
): { name: string; work: Settleable } {
  return {
    name,
    work: {
      settle: () => {
        log.push(`${name}:start`);
        if (behaviour === "throw") throw new Error(`${name} broke at once`);
        if (behaviour === "hang") return new Promise<void>(() => {});
        return sleep(ms).then(() => {
          log.push(`${name}:end`);
          if (behaviour === "reject") throw new Error(`${name} failed`);
        });
      },
    },
  };
}

Deno.test("settleInOrder() settles each stage after the one before it is done", async () => {
  const log: string[] = [];
  // The first stage is the slowest: run side by side, the others would end before it.
  await settleInOrder(
    [stage("relay", log, "ok", 40), stage("consumers", log, "ok", 20), stage("workers", log)],
    quiet,
    10_000,
  );
  assertEquals(log, [
    "relay:start",
    "relay:end",
    "consumers:start",
    "consumers:end",
    "workers:start",
    "workers:end",
  ]);
});

Deno.test("settleInOrder() logs a stage that fails and still runs the next", async () => {
  const log: string[] = [];
  const { logger, lines } = recordingLogger();
  await within(
    settleInOrder(
      [stage("relay", log, "reject"), stage("consumers", log, "throw"), stage("workers", log)],
      logger,
      10_000,
    ),
    5_000,
    "settleInOrder()",
  );
  assertEquals(log, [
    "relay:start",
    "relay:end",
    "consumers:start",
    "workers:start",
    "workers:end",
  ]);
  const failed = lines.filter((l) => l.msg === "background work failed on a tick");
  assertEquals(failed.map((l) => l.stage), [
    "relay",
    "consumers",
  ]);
});

Deno.test("settleInOrder() stops waiting for a stage at the cap and skips the stages after it", async () => {
  const log: string[] = [];
  const { logger, lines } = recordingLogger();
  await within(
    settleInOrder(
      [stage("relay", log), stage("consumers", log, "hang"), stage("workers", log)],
      logger,
      300,
    ),
    5_000,
    "settleInOrder() with a stage that never ends",
  );
  assertEquals(log, ["relay:start", "relay:end", "consumers:start"]);
  const capped = lines.filter((l) => l.msg === "background work still running past the tick's cap");
  assertEquals(capped.map((l) => l.stage), ["consumers"]);
});

Deno.test("settleInOrder() lets go at once when the process is stopping, so a tick never holds the shutdown", async () => {
  const log: string[] = [];
  const stopping = new AbortController();
  const settling = settleInOrder(
    [stage("relay", log), stage("consumers", log, "hang"), stage("workers", log)],
    quiet,
    60_000,
    stopping.signal,
  );
  await sleep(50);
  stopping.abort();
  await within(settling, 2_000, "settleInOrder() after the stop was asked");
  assertEquals(log, ["relay:start", "relay:end", "consumers:start"]);
  // Asked to stop before it starts: it settles nothing.
  const none: string[] = [];
  await settleInOrder([stage("relay", none)], quiet, 60_000, stopping.signal);
  assertEquals(none, []);
});

Deno.test("settleInOrder() leaves no listener behind on the process's stop signal", async () => {
  // Every answered write drains with the one signal: a listener left per drain is a leak.
  const stopping = new AbortController();
  let listening = 0;
  const signal = stopping.signal;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listening++;
    add(...args);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listening--;
    remove(...args);
  }) as typeof signal.removeEventListener;
  for (let i = 0; i < 100; i++) {
    await settleInOrder([stage("relay", [])], quiet, 60_000, signal);
  }
  assertEquals(listening, 0);
});

Deno.test("settleInOrder() gives the stages what is left of one cap, not a cap each", async () => {
  const log: string[] = [];
  const { logger, lines } = recordingLogger();
  const realNow = Date.now;
  let skew = 0;
  Date.now = () => realNow() + skew;
  try {
    // The first stage uses up the whole cap (as the clock sees it): none is left for the next.
    const slow: { name: string; work: Settleable } = {
      name: "relay",
      work: {
        settle: () => {
          log.push("relay:start");
          skew += 60_000;
          return Promise.resolve();
        },
      },
    };
    await within(
      settleInOrder([slow, stage("consumers", log), stage("workers", log)], logger, 30_000),
      5_000,
      "settleInOrder()",
    );
  } finally {
    Date.now = realNow;
  }
  assertEquals(log, ["relay:start"]);
  const capped = lines.filter((l) => l.msg === "background work still running past the tick's cap");
  assertEquals(capped.map((l) => l.stage), ["consumers"]);
});

const INFO = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo;

Deno.test("kickAfterWrites() drains after an answered write, never before it and never waiting for it", async (t) => {
  let drains = 0;
  let finishDrain = deferred();
  const drain = () => {
    drains++;
    return finishDrain.promise;
  };

  await t.step("a POST answered 201 drains once the answer is there", async () => {
    const answer = deferred<Response>();
    const handler = kickAfterWrites(() => answer.promise, drain);
    const served = handler(new Request("http://svc/v1/quotes", { method: "POST" }), INFO);
    await sleep(20);
    assertEquals(drains, 0, "not before the write is answered (committed)");
    const sent = new Response("{}", { status: 201 });
    answer.resolve(sent);
    // The drain never ends until told: the answer must not wait for it.
    const res = await within(served, 5_000, "the answer while the drain runs");
    assert(res === sent, "the handler's own response");
    assertEquals(drains, 1);
    finishDrain.resolve();
    finishDrain = deferred();
  });

  await t.step("a DELETE answered 404 (a write that was refused, under 500) drains", async () => {
    drains = 0;
    const handler = kickAfterWrites(() => new Response(null, { status: 404 }), drain);
    await within(
      handler(new Request("http://svc/v1/quotes/x", { method: "DELETE" }), INFO),
      5_000,
      "the answer",
    );
    assertEquals(drains, 1);
    finishDrain.resolve();
    finishDrain = deferred();
  });

  for (const method of ["GET", "HEAD", "OPTIONS"]) {
    await t.step(`a ${method} changes nothing and drains nothing`, async () => {
      drains = 0;
      const handler = kickAfterWrites(() => new Response(null, { status: 200 }), drain);
      const res = await handler(new Request("http://svc/v1/quotes", { method }), INFO);
      assertEquals(res.status, 200);
      assertEquals(drains, 0);
    });
  }

  for (const status of [500, 503]) {
    await t.step(`a POST answered ${status} drains nothing`, async () => {
      drains = 0;
      const handler = kickAfterWrites(() => new Response(null, { status }), drain);
      const res = await handler(new Request("http://svc/v1/quotes", { method: "POST" }), INFO);
      assertEquals(res.status, status);
      assertEquals(drains, 0);
    });
  }

  await t.step("a handler that throws drains nothing and its error goes on", async () => {
    drains = 0;
    const handler = kickAfterWrites(() => Promise.reject(new Error("boom")), drain);
    await assert.rejects(
      handler(new Request("http://svc/v1/quotes", { method: "POST" }), INFO),
      /boom/,
    );
    assertEquals(drains, 0);
  });
  finishDrain.resolve();
});

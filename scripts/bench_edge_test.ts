import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startAttackers } from "./bench/edge_attack.ts";
import { logSummary, startupLines } from "./bench/edge_log.ts";
import { type AttackPlan, slowlorisByte, statusOf } from "./bench_edge_attackers.ts";

const plan = (port: number, overrides: Partial<AttackPlan>): AttackPlan => ({
  host: "127.0.0.1",
  port,
  apiKey: "key",
  targets: { idle: 0, slowloris: 0, slowBody: 0 },
  addresses: ["127.0.0.2", "127.0.0.3"],
  openPerSecond: 1_000,
  replacePerSecond: 1_000,
  replacePauseMs: 50,
  connectTimeoutMs: 2_000,
  ...overrides,
});

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

Deno.test("slowlorisByte: a request head that never ends", () => {
  const head = String.fromCharCode(
    ...Array.from({ length: 20_000 }, (_, i) => slowlorisByte("127.0.0.1:8080", i)),
  );
  assert(head.startsWith("GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
  assert(!head.includes("\r\n\r\n"));
});

Deno.test("statusOf: the status of an answer's first bytes, or other", () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
  assertEquals(statusOf(bytes("HTTP/1.1 503 Service Unavailable\r\n")), "503");
  assertEquals(statusOf(bytes("HTTP/1.0 408 Request Timeout\r\n")), "408");
  assertEquals(statusOf(bytes("SSH-2.0-OpenSSH")), "other");
});

Deno.test("startupLines: the gateway's public listening line and its warnings about connections", () => {
  const log = [
    '{"time":"t","level":"info","msg":"listening","service":"gateway","port":1,"api":"public","maxConnections":176}',
    '{"time":"t","level":"info","msg":"listening","service":"gateway","port":2,"api":"admin"}',
    '{"time":"t","level":"warn","msg":"descriptor limit unknown","service":"gateway","maxConnections":176}',
    '{"time":"t","level":"warn","msg":"database slow","service":"gateway"}',
    "Warning: not JSON",
  ].join("\n");
  assertEquals(startupLines(log), [
    { level: "info", msg: "listening", port: 1, api: "public", maxConnections: 176 },
    { level: "warn", msg: "descriptor limit unknown", maxConnections: 176 },
  ]);
});

Deno.test("logSummary: lines by message, with what a throttled warning left out", () => {
  const log = [
    '{"level":"warn","msg":"connection cap reached; shedding","since_last_warning":0}',
    '{"level":"info","msg":"request refused at the edge"}',
    '{"level":"warn","msg":"connection cap reached; shedding","since_last_warning":41}',
  ].join("\n");
  assertEquals(logSummary(log), [
    { level: "warn", msg: "connection cap reached; shedding", lines: 2, suppressed: 41 },
    { level: "info", msg: "request refused at the edge", lines: 1, suppressed: 0 },
  ]);
});

Deno.test("startAttackers: holds each kind at its target from the attack's addresses, and lets go", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const from = new Set<string>();
  const accepting = (async () => {
    for await (const conn of listener) {
      held.push(conn);
      from.add((conn.remoteAddr as Deno.NetAddr).hostname);
    }
  })();
  const attackers = startAttackers(
    plan(listener.addr.port, { targets: { idle: 30, slowloris: 5, slowBody: 5 } }),
  );
  try {
    await until(() => attackers.latest()?.fullStrengthAt != null, 10_000);
    const stats = attackers.latest()!;
    assertEquals(stats.kinds.idle.open, 30);
    assertEquals(stats.kinds.slowloris.open + stats.kinds.slowBody.open, 10);
    await until(() => held.length === 40, 5_000);
    assertEquals([...from].sort(), ["127.0.0.2", "127.0.0.3"]);
    const final = await attackers.stop();
    assertEquals(final?.kinds.idle.closedByServer, 0);
    // Every socket is closed: each held connection reads its end.
    const sink = new Uint8Array(1024);
    for (const conn of held) {
      while (await conn.read(sink) !== null) { /* what the slow ones sent */ }
    }
  } finally {
    attackers.terminate();
    listener.close();
    await accepting.catch(() => {});
    for (const conn of held) conn.close();
  }
});

Deno.test("startAttackers: replaces what the server closes, never faster than its rate", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) conn.close();
  })();
  const target = 20;
  const rate = 50;
  const attackers = startAttackers(
    plan(listener.addr.port, {
      targets: { idle: target, slowloris: 0, slowBody: 0 },
      replacePerSecond: rate,
    }),
  );
  try {
    await until(() => attackers.latest() !== null, 10_000); // the worker has loaded
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const stats = attackers.latest()!;
    const idle = stats.kinds.idle;
    const tried = idle.opened + idle.failedToConnect;
    // The first `target` at once, then the replacement bucket's most: its rate over the time
    // since the attack began, and a tenth of a second's worth at once.
    const most = target + (rate * (stats.at - stats.startedAt)) / 1000 + rate / 10 + 1;
    assert(tried <= most, `${tried} connects, at most ${most}`);
    assert(idle.closedByServer > target + rate / 2, `${idle.closedByServer} closed`);
  } finally {
    await attackers.stop();
    listener.close();
    await accepting.catch(() => {});
  }
});

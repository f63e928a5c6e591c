/**
 * `deno task start` as a new user meets it: the supervisor boots embedded PostgreSQL, every
 * service and the gateway, prints where they are and a demo key, the admin CLI works against
 * it, Ctrl-C/SIGTERM stops everything, and a restart keeps the data.
 */
import { startOtlpReceiver } from "../scripts/otel_receive.ts";
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { removeOrphanClusters } from "@printshop/shared/embedded-postgres";
import { waitFor } from "@printshop/shared/net";
import { smtpServer } from "@printshop/shared/testing/smtp";

const ROOT = new URL("../", import.meta.url).pathname;

interface Started {
  child: Deno.ChildProcess;
  output: () => string;
  gatewayUrl: string;
  adminPort: number;
}

/**
 * The README's command, run with this Deno or (`npx`) exactly as written, from the outside in.
 * PORT and ADMIN_PORT are 0 ("any free port", read back from what start prints): a port a test
 * picked in advance can be taken by another process's connection before the stack binds it.
 */
async function start(
  dataDir: string,
  how: "deno" | "npx" = "deno",
  ownGroup = false,
  extraEnv: Record<string, string> = {},
): Promise<Started> {
  const [command, args] = how === "npx"
    ? ["npx", ["-y", `deno@${Deno.version.deno}`, "task", "start"]]
    : [Deno.execPath(), ["run", "-A", "scripts/start.ts"]];
  // `setsid` gives the run a process group of its own, as a terminal does, so a test can send
  // Ctrl-C's SIGINT to every process in it at once.
  const child = new Deno.Command(ownGroup ? "setsid" : command, {
    args: ownGroup ? [command, ...args] : args,
    cwd: ROOT,
    env: {
      DATA_DIR: dataDir,
      PORT: "0",
      ADMIN_PORT: "0",
      LOG_LEVEL: "warn",
      ...extraEnv,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>): Promise<void> => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  void collect(child.stdout);
  void collect(child.stderr);
  const deadline = Date.now() + 90_000;
  while (!text.includes("Press Ctrl-C to stop.")) {
    if (Date.now() > deadline) throw new Error(`start did not come up:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const gatewayUrl = text.match(/Gateway:\s+(\S+)/)?.[1];
  const adminPort = text.match(/Admin API: http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
  assert(gatewayUrl && adminPort, text);
  return { child, output: () => text, gatewayUrl, adminPort: Number(adminPort) };
}

async function stop(started: Started): Promise<void> {
  started.child.kill("SIGTERM");
  const status = await started.child.status;
  assertEquals(status.code, 0, started.output());
}

/** The admin CLI; without `adminPort` it finds the admin API from the stack on `dataDir`. */
async function runAdmin(
  dataDir: string,
  adminPort: number | null,
  ...args: string[]
): Promise<unknown> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "scripts/admin.ts", ...args],
    cwd: ROOT,
    env: { DATA_DIR: dataDir, ...(adminPort === null ? {} : { ADMIN_PORT: String(adminPort) }) },
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert(out.success, `admin ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(stdout);
}

/**
 * Processes that belong to a run: PostgreSQL on its data directory (in its command line) and
 * every service and the gateway (their environment names the run's database port).
 */
/** The embedded cluster's data directory, as start printed it. */
const pgDataDirOf = (started: Started): string | undefined =>
  started.output().match(/\(data in (\S+)\)/)?.[1];

async function processesOf(started: Started): Promise<string[]> {
  const pgDataDir = pgDataDirOf(started);
  const pgPort = started.output().match(/embedded PostgreSQL on 127\.0\.0\.1:(\d+)/)?.[1];
  assert(pgDataDir && pgPort, started.output());
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      const environ = await Deno.readTextFile(`/proc/${entry.name}/environ`);
      if (cmdline.includes(pgDataDir) || environ.includes(`127.0.0.1:${pgPort}/`)) {
        found.push(cmdline.replaceAll("\0", " "));
      }
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

/** The process group of the postmaster of the stack's embedded cluster (its pid file's first line). */
async function postmasterGroup(started: Started): Promise<number> {
  const pgDataDir = pgDataDirOf(started);
  assert(pgDataDir, started.output());
  const pid = (await Deno.readTextFile(`${pgDataDir}/postmaster.pid`)).split("\n")[0]!;
  // /proc/<pid>/stat: pid (comm) state ppid pgrp …; the name may hold spaces, not a ")".
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

const exists = (path: string): Promise<boolean> => Deno.lstat(path).then(() => true, () => false);

/** Removes a data directory and, as root, the cluster it linked to under /var/tmp. */
async function removeDataDir(dataDir: string): Promise<void> {
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  await removeOrphanClusters();
}

/** Runs a start that is expected to refuse; its exit code and what it printed. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "scripts/start.ts"],
    cwd: ROOT,
    env: { LOG_LEVEL: "warn", ...env },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, text: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

Deno.test("deno task start runs the platform, the admin CLI drives it, and data survives a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
  try {
    const first = await start(dataDir);
    // The banner is the last thing printed: nothing follows it until someone calls.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert(first.output().trimEnd().endsWith("Press Ctrl-C to stop."), first.output());
    const demoKey = first.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1];
    assert(demoKey, "an empty data directory gets a demo key");
    // With ADMIN_PORT given, the CLI goes there.
    const adminPort = first.adminPort;
    const me = await fetch(`${first.gatewayUrl}/v1/me`, { headers: { "x-api-key": demoKey } });
    assertEquals(me.status, 200);
    assertEquals(((await me.json()).data.scopes as string[]).length, 20);

    // No ADMIN_PORT: the CLI reads where the admin API is from the stack running on DATA_DIR.
    const org = await runAdmin(dataDir, null, "create-org", "--name", "CLI Shop") as {
      id: string;
    };
    const key = await runAdmin(
      dataDir,
      adminPort,
      "create-key",
      "--org",
      org.id,
      "--scopes",
      "quotes.read,quotes.write",
    ) as { apiKey: string; id: string };
    const partner = await runAdmin(
      dataDir,
      adminPort,
      "create-partner-app",
      "--name",
      "Integrator",
      "--scopes",
      "quotes.read",
    ) as { id: string; clientId: string; clientSecret: string; scopes: string[] };
    assert.match(partner.clientId, /^pca_/);
    assert.match(partner.clientSecret, /^pcs_/);
    const grant = await runAdmin(
      dataDir,
      adminPort,
      "grant",
      "--app",
      partner.id,
      "--org",
      org.id,
      "--scopes",
      "quotes.read",
    ) as { appId: string; organizationId: string; scopes: string[] };
    assertEquals([grant.appId, grant.organizationId, grant.scopes], [partner.id, org.id, [
      "quotes.read",
    ]]);
    await runAdmin(dataDir, adminPort, "set-limits", "--org", org.id, "--rpm", "1200");
    const shown = await runAdmin(dataDir, adminPort, "show-org", "--org", org.id) as { id: string };
    assertEquals(shown.id, org.id);
    // Nothing was sent yet: the mail outbox is there, and empty.
    assertEquals(await runAdmin(dataDir, adminPort, "list-mail"), []);
    // `deno task sql` opens the embedded cluster: as the owner every organisation's keys (the demo
    // key and the CLI's), as the services' role none (no organisation set).
    const keysSeenAs = async (role: string): Promise<number> => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "scripts/sql.ts",
          "--role",
          role,
          "-c",
          "SELECT count(*)::int AS n FROM gateway.api_keys",
        ],
        cwd: ROOT,
        env: { DATA_DIR: dataDir },
      }).output();
      assert(out.success, new TextDecoder().decode(out.stderr));
      return (JSON.parse(new TextDecoder().decode(out.stdout)) as { n: number }[])[0]!.n;
    };
    assertEquals(await keysSeenAs("owner"), 2);
    assertEquals(await keysSeenAs("app"), 0);

    const created = await fetch(`${first.gatewayUrl}/v1/quotes`, {
      method: "POST",
      headers: { "x-api-key": key.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ reference: "survives restarts" }),
    });
    assertEquals(created.status, 201);
    const quoteId = (await created.json()).data.id as string;
    const other = await fetch(`${first.gatewayUrl}/v1/quotes/${quoteId}`, {
      headers: { "x-api-key": demoKey },
    });
    assertEquals(other.status, 404, "the demo organisation cannot see CLI Shop's quote");
    await other.body?.cancel();

    assert((await processesOf(first)).length >= 7, "PostgreSQL, five services and the gateway");
    await stop(first);
    assertEquals(await processesOf(first), [], "no process outlives the supervisor");

    const second = await start(dataDir);
    assert(!second.output().includes("Demo API key"), "a used data directory gets no new demo");
    const again = await fetch(`${second.gatewayUrl}/v1/quotes/${quoteId}`, {
      headers: { "x-api-key": key.apiKey },
    });
    const againText = await again.text();
    // With the answer and the stack's warnings: a 401 here was seen once under the whole suite.
    assertEquals(again.status, 200, `${againText}\n${second.output().slice(-4_000)}`);
    assertEquals(JSON.parse(againText).data.reference, "survives restarts");
    await runAdmin(dataDir, second.adminPort, "revoke-key", key.id);
    const revoked = await fetch(`${second.gatewayUrl}/v1/quotes`, {
      headers: { "x-api-key": key.apiKey },
    });
    assertEquals(revoked.status, 401);
    await revoked.body?.cancel();
    await stop(second);
    assertEquals(await processesOf(second), []);
  } finally {
    await removeDataDir(dataDir);
  }
});

Deno.test("task start restarts a killed PostgreSQL on the same data, says so, and the platform answers again", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
  try {
    const started = await start(dataDir);
    const demoKey = started.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1];
    const pgDataDir = started.output().match(/\(data in (\S+)\)/)?.[1];
    assert(demoKey && pgDataDir, started.output());
    const postmaster = async (): Promise<number> =>
      Number((await Deno.readTextFile(`${pgDataDir}/postmaster.pid`)).split("\n")[0]);
    Deno.kill(await postmaster(), "SIGKILL");
    await waitFor(
      "start to say PostgreSQL runs again",
      () => Promise.resolve(started.output().includes("[start] postgres is running again")),
      15_000,
      50,
    );
    assert.match(
      started.output(),
      /\[start\] postgres exited with code 137 \(SIGKILL\); restarting in 0.5 s \(attempt 2\)\n/,
    );
    assert.match(started.output(), /\[start\] postgres is running again \(attempt 2\)\n/);
    const log = await Deno.readTextFile(`${dataDir}/postgres.log`);
    assert.match(
      log,
      /postgres exited with code 137 \(SIGKILL\); restarting in 0.5 s \(attempt 2\)/,
    );
    await waitFor(
      "the demo key to work again",
      async () => {
        const me = await fetch(`${started.gatewayUrl}/v1/me`, {
          headers: { "x-api-key": demoKey },
        });
        await me.body?.cancel();
        return me.status === 200;
      },
      15_000,
      100,
    );

    // Killed again and stopped at once: everything stops, the database included.
    Deno.kill(await postmaster(), "SIGKILL");
    await stop(started);
    assertEquals(await processesOf(started), [], "no process outlives the supervisor");
  } finally {
    await removeDataDir(dataDir);
  }
});

Deno.test("a second task start on the same data directory is refused, and the first keeps running", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
  try {
    const first = await start(dataDir);
    const demoKey = first.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1]!;
    const { adminPort } = first;
    const gatewayPort = Number(new URL(first.gatewayUrl).port);

    const second = await refusedStart({
      DATA_DIR: dataDir,
      PORT: "0",
      ADMIN_PORT: "0",
    });
    assertEquals(second.code, 1, second.text);
    const lines = second.text.trim().split("\n");
    assertEquals(lines.length, 1, second.text);
    assert.match(
      lines[0]!,
      new RegExp(
        `another stack is already running on ${dataDir} \\(pid \\d+, gateway ${
          first.gatewayUrl.replaceAll(".", "\\.")
        }, admin API http://127\\.0\\.0\\.1:${adminPort}\\)`,
      ),
    );

    // Another data directory, but the first stack's port: refused before anything starts.
    const otherDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
    const taken = await refusedStart({
      DATA_DIR: otherDir,
      PORT: String(gatewayPort),
      ADMIN_PORT: "0",
    });
    await Deno.remove(otherDir, { recursive: true });
    assertEquals(taken.code, 1, taken.text);
    assert.match(taken.text, new RegExp(`127\\.0\\.0\\.1:${gatewayPort} is in use.*set PORT`));

    const health = await fetch(`${first.gatewayUrl}/healthz`);
    assertEquals(health.status, 200, "the first stack still has its database and services");
    await health.body?.cancel();
    const me = await fetch(`${first.gatewayUrl}/v1/me`, { headers: { "x-api-key": demoKey } });
    assertEquals(me.status, 200);
    await me.body?.cancel();
    await stop(first);
    assert(!(await exists(`${dataDir}/stack.json`)), "a clean stop forgets the stack");
  } finally {
    await removeDataDir(dataDir);
  }
});

Deno.test("SIGTERM to the outermost process of `npx -y deno@… task start` stops every process", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
  try {
    const started = await start(dataDir, "npx");
    const ours = await processesOf(started);
    assert(ours.length >= 7, `PostgreSQL, five services and the gateway: ${ours.join("\n")}`);
    // The pid Deno spawned is npx itself (npm exec), above `sh -c deno`, `deno task` and start.
    started.child.kill("SIGTERM");
    await started.child.status;
    await waitFor(
      "every process of the stack to stop",
      async () => (await processesOf(started)).length === 0,
      20_000,
      100,
    );
    await waitFor(
      "the data directory to be released",
      async () => !(await exists(`${dataDir}/stack.json`)),
      5_000,
      50,
    );
    assert.match(started.output(), /that started this stack is gone; stopping/);
  } finally {
    await removeDataDir(dataDir);
  }
});

Deno.test("Ctrl-C in the terminal of `npx … task start` stops once, completely", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-" });
  try {
    const started = await start(dataDir, "npx", true);
    // PostgreSQL is not in the terminal's group: were it, the Ctrl-C would shut it down under
    // the services while they finish their work on it.
    assert.notEqual(await postmasterGroup(started), started.child.pid, "PostgreSQL runs apart");
    // A terminal's Ctrl-C is SIGINT to the whole foreground group: npx, sh, deno task and start
    // all get it, and the launchers' deaths then reach start a second time while it is stopping.
    Deno.kill(-started.child.pid, "SIGINT");
    await started.child.status;
    await waitFor(
      "every process of the stack to stop",
      async () => (await processesOf(started)).length === 0,
      20_000,
      100,
    );
    await waitFor(
      "start to say it stopped",
      () => Promise.resolve(/\[start\] stopped/.test(started.output())),
      10_000,
      50,
    );
    assertEquals(started.output().match(/\[start\] stopping…/g)?.length, 1, started.output());
    // Every service stopped on a database that was still there, within its deadline.
    assert.doesNotMatch(started.output(), /stop failed|stop deadline passed/, started.output());
    assert(!(await exists(`${dataDir}/stack.json`)), "a clean stop forgets the stack");
    const log = await Deno.readTextFile(`${dataDir}/postgres.log`);
    assert.match(log, /database system is shut down/, "PostgreSQL was allowed to finish stopping");
  } finally {
    await removeDataDir(dataDir);
  }
});

Deno.test("deleting the data directory resets the platform: the next start begins empty", async () => {
  // A parent only root can enter: as root, the cluster cannot live inside the data directory.
  const parent = await Deno.makeTempDir({ prefix: "printshop-start-" });
  const dataDir = `${parent}/data`;
  const relocated = (s: Started): string | undefined =>
    s.output().match(/the cluster lives in (\S+) /)?.[1];
  try {
    const first = await start(dataDir);
    const firstKey = first.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1];
    assert(firstKey);
    const firstCluster = relocated(first);
    await stop(first);
    await Deno.remove(dataDir, { recursive: true });

    const second = await start(dataDir);
    const secondKey = second.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1];
    assert(secondKey && secondKey !== firstKey, `a new demo key:\n${second.output()}`);
    const old = await fetch(`${second.gatewayUrl}/v1/me`, { headers: { "x-api-key": firstKey } });
    assertEquals(old.status, 401, "nothing of the old platform is left");
    await old.body?.cancel();
    if (Deno.uid() === 0) {
      assert(firstCluster, `as root the cluster is relocated:\n${first.output()}`);
      assert(!(await exists(firstCluster)), "the reset removed the old cluster");
      assert(second.output().includes(`removed ${firstCluster}`), second.output());
    }
    const secondCluster = relocated(second);
    await stop(second);
    await removeDataDir(dataDir);
    if (secondCluster) assert(!(await exists(secondCluster)), "nothing is left under /var/tmp");
  } finally {
    await removeDataDir(dataDir);
    await Deno.remove(parent, { recursive: true }).catch(() => {});
  }
});

Deno.test("with OTEL_DENO=true every process names itself, LOG_DIR keeps its output apart, and the banner's secrets are not exported", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "printshop-start-otel-" });
  const receiver = startOtlpReceiver();
  await using smtp = await smtpServer();
  let running: Started | null = null;
  try {
    const started = running = await start(dataDir, "deno", false, {
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "whole-stack",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      LOG_DIR: `${dataDir}-logs`,
    });
    const key = started.output().match(/Demo API key[^:]*: (psk_\S+)/)?.[1];
    const adminToken = started.output().match(/Admin token: (\S+)/)?.[1];
    assert(key && adminToken, started.output());
    const me = await fetch(`${started.gatewayUrl}/v1/me`, { headers: { "x-api-key": key } });
    assertEquals(me.status, 200);
    await me.body?.cancel();
    // A webhook for the write: its delivery must continue the write's trace, past the outbox.
    const hooks: string[] = [];
    const endpoint = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      hooks.push(req.headers.get("webhook-id") ?? "");
      return new Response(null, { status: 204 });
    });
    // A receiver's token in the webhook URL's query, and a body's text: neither may be exported.
    const hookToken = "hooktoken0123456789abcdefghijkl";
    const bodyText = "Traced-body-7f3a9c";
    const recipient = "traced.recipient@example.com";
    const subscribed = await fetch(`${started.gatewayUrl}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        url: `http://127.0.0.1:${endpoint.addr.port}/hook?token=${hookToken}`,
        event: "quote.created",
      }),
    });
    assertEquals(subscribed.status, 201);
    await subscribed.body?.cancel();
    const writeTrace = "6bf92f3577b34da6a3ce929d0e0e4738";
    const created = await fetch(`${started.gatewayUrl}/v1/quotes`, {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        traceparent: `00-${writeTrace}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ reference: bodyText }),
    });
    assertEquals(created.status, 201);
    const quoteId = (await created.json()).data.id as string;
    await waitFor("the webhook", () => Promise.resolve(hooks.length > 0), 20_000);
    await endpoint.shutdown();
    // A proof sent by mail: the worker's attempt continues the send's trace.
    const writeJson = async (path: string, body: unknown, traceparent?: string) => {
      const response = await fetch(`${started.gatewayUrl}${path}`, {
        method: "POST",
        headers: {
          "x-api-key": key,
          "content-type": "application/json",
          ...(traceparent ? { traceparent } : {}),
        },
        body: JSON.stringify(body),
      });
      assert(response.status < 300, `${path}: ${response.status} ${await response.clone().text()}`);
      return (await response.json()).data as { id: string };
    };
    const proof = await writeJson("/v1/proofs", {
      jobId: crypto.randomUUID(),
      recipientName: "Traced Recipient",
      recipientEmail: recipient,
      imageUrls: ["https://files.example.com/traced.png"],
    });
    const mailTrace = "7bf92f3577b34da6a3ce929d0e0e4739";
    await writeJson(`/v1/proofs/${proof.id}/send`, {}, `00-${mailTrace}-00f067aa0ba902b7-01`);
    await waitFor("the proof mail", () => Promise.resolve(smtp.received.length > 0), 20_000);
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const read = await fetch(`${started.gatewayUrl}/v1/quotes/${quoteId}`, {
      headers: { "x-api-key": key, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    assertEquals(read.status, 200);
    await read.body?.cancel();
    // A query the gateway refuses (400) still has its server span; a token in it is not kept.
    const tokenTrace = "5bf92f3577b34da6a3ce929d0e0e4737";
    const refused = await fetch(
      `${started.gatewayUrl}/v1/quotes/${quoteId}?token=abcdefghijklmnopqrstuvwxyz0123456789`,
      { headers: { "x-api-key": key, traceparent: `00-${tokenTrace}-00f067aa0ba902b7-01` } },
    );
    assertEquals(refused.status, 400);
    await refused.body?.cancel();
    // A metric export or two after the last request, before the processes stop.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    running = null;
    await stop(started);
    // One server span per process for the read, named by its route template, not its ids.
    const servers = receiver.spans.filter((span) => span.traceId === traceId && span.kind === 2);
    assertEquals(
      servers.map((span) => [span.service, span.name, span.attributes["http.route"]]).sort(),
      [
        ["gateway", "GET /v1/quotes/{quoteId}", "/v1/quotes/{quoteId}"],
        ["quotes", "GET /v1/quotes/{quoteId}", "/v1/quotes/{quoteId}"],
      ],
    );
    assert(!receiver.spans.some((span) => span.name.includes(quoteId)), "an id in a span name");
    // The operation's duration histogram and the delivery's outcome, as metrics.
    const point = (
      service: string,
      metric: string,
      match: (a: Record<string, unknown>) => boolean,
    ) =>
      receiver.points.some((p) =>
        p.service === service && p.metric === metric && match(p.attributes)
      );
    assert(
      point(
        "quotes",
        "http.server.request.duration",
        (a) => a["http.route"] === "/v1/quotes/{quoteId}" && a["http.response.status_code"] === 200,
      ),
      "no duration histogram for GET /v1/quotes/{quoteId}",
    );
    assert(
      point("gateway", "http.server.request.duration", (a) => a["http.route"] === "/v1/quotes"),
      "no duration histogram of the gateway for POST /v1/quotes",
    );
    assert(
      point(
        "webhooks",
        "printshop.webhook.attempts",
        (a) => a.outcome === "succeeded" && a["webhook.event_type"] === "quote.created",
      ),
      "no delivery metric",
    );
    // The write, its event's publishing and receiving, and the delivery: one trace.
    const write = receiver.spans.filter((span) => span.traceId === writeTrace);
    for (
      const [service, name] of [
        ["gateway", "POST /v1/quotes"],
        ["quotes", "POST /v1/quotes"],
        ["quotes", "printshop.quotes publish"],
        ["webhooks", "printshop.quotes receive"],
        ["webhooks", "webhook deliver"],
      ]
    ) {
      assert(
        write.some((span) => span.service === service && span.name === name),
        `${service} "${name}" not in the write's trace: ${
          JSON.stringify(write.map((s) => [s.service, s.name]))
        }`,
      );
    }
    // The write's statements: CLIENT spans named by what they do, without their text.
    const statements = write.filter((span) => span.attributes["db.system.name"] === "postgresql");
    for (const name of ["BEGIN", "INSERT outbox", "COMMIT"]) {
      assert(
        statements.some((span) =>
          span.service === "quotes" && span.name === name && span.kind === 3
        ),
        `no statement span "${name}": ${JSON.stringify(statements.map((s) => s.name))}`,
      );
    }
    assert(
      !receiver.spans.some((span) => "db.query.text" in span.attributes),
      "a statement's text",
    );
    // The proof send, its mail row's statement and the mail worker's attempt: one trace.
    const mail = receiver.spans.filter((span) => span.traceId === mailTrace);
    for (
      const [service, name] of [
        ["gateway", "POST /v1/proofs/{proofId}/send"],
        ["proofs", "POST /v1/proofs/{proofId}/send"],
        ["proofs", "INSERT mail_messages"],
        ["proofs", "proof mail send"],
      ]
    ) {
      assert(
        mail.some((span) => span.service === service && span.name === name),
        `${service} "${name}" not in the send's trace: ${
          JSON.stringify(mail.map((s) => [s.service, s.name]))
        }`,
      );
    }
    // The metrics an on-call engineer looks at first, each from the process that knows it.
    for (
      const [service, metric] of [
        ["gateway", "printshop.edge.connections.open"],
        ["quotes", "db.client.connection.count"],
        ["quotes", "printshop.outbox.backlog"],
        ["quotes", "printshop.outbox.oldest_age"],
        ["webhooks", "printshop.bus.consumer.lag"],
        ["proofs", "printshop.mail.queue"],
        ["proofs", "printshop.mail.attempts"],
        ["webhooks", "printshop.webhook.delivery.latency"],
      ] as const
    ) {
      assert(point(service, metric, () => true), `no ${metric} from ${service}`);
    }
    // Server spans only: Deno's own fetch span of the gateway's call records the URL whole (README
    // "Telemetry" says so), and nothing in the runtime lets that span be changed.
    const tokenSpans = receiver.spans.filter((span) =>
      span.traceId === tokenTrace && span.kind === 2
    );
    assert(tokenSpans.length === 2, "the refused request's server spans, gateway's and quotes'");
    const leaked = JSON.stringify(tokenSpans).includes("abcdefghijklmnopqrstuvwxyz");
    assert(!leaked, `a token kept: ${JSON.stringify(tokenSpans.map((s) => s.attributes))}`);
    // LOG_DIR: one file per process.
    for (const name of ["gateway", "quotes", "catalogue", "crm", "proofs", "webhooks"]) {
      await Deno.stat(`${dataDir}-logs/${name}.log`);
    }
    const names = new Set([...receiver.spans, ...receiver.points].map((item) => item.service));
    for (const name of ["gateway", "quotes", "catalogue", "crm", "proofs", "webhooks"]) {
      assert(names.has(name), `${name} exported nothing under its own name: ${[...names]}`);
    }
    const exported = receiver.raw.join("\n");
    assert(exported.length > 0);
    assert(!exported.includes(key), "the demo API key was exported");
    assert(!exported.includes(adminToken), "the admin token was exported");
    assert(!exported.includes(hookToken), "the webhook URL's query was exported");
    assert(!exported.includes(bodyText), "a request body was exported");
    assert(!exported.includes(recipient), "a mail recipient was exported");
  } finally {
    // A failed assertion must not leave the stack (and its PostgreSQL) running.
    if (running) await stop(running).catch(() => {});
    await receiver.stop();
    await removeDataDir(dataDir);
    await Deno.remove(`${dataDir}-logs`, { recursive: true }).catch(() => {});
  }
});

/**
 * `deno task bench`: measures the gateway's cost on this machine, in one run.
 *
 * Boots the real stack on a throwaway embedded PostgreSQL, seeds one organisation, then sends
 * `GET /v1/quotes?limit=20` through the gateway and straight to the quotes service (with a
 * valid signed internal context). Throughput comes from autocannon (10 connections, 10 s each);
 * latency from a closed loop of single requests timed with performance.now(), since autocannon
 * reports whole milliseconds and the overhead under study is smaller than that.
 *
 * It also times an idempotent replay (the same keyed POST again) and a 429 refusal.
 *
 * Prints a table and writes the figures to bench-results/gateway.json. Nothing is asserted:
 * the goals (gateway p50 overhead ≤ 1 ms, throughput ≥ 60 % of direct) are reported.
 *
 * Then, on the same stack, the ratios part (scripts/bench_ratios.ts, issue 15): floors started
 * in the same run on the same PostgreSQL (scripts/bench_floors.ts: a naive proxy in front of a
 * bare JSON handler, a one-transaction write, a 20-rows-and-count read, a single-row read) and
 * the product beside each (`POST /v1/quotes`, lines of 5 variants and variant PATCHes on quotes
 * of 3 × 4 × 5, `GET /v1/quotes?limit=20`, `GET /v1/quotes/{id}`, `GET /v1/me`,
 * `GET /v1/reference/limits`), 16 connections each, printed as ratios with the goals;
 * event → signed webhook delivery under the create load's rate; and the footprint: RSS of each
 * process idle (taken right after boot, before any part loads the stack, with the idle CPU over
 * `BENCH_IDLE_S`, 60 s unless set), after that part and after the last part on this stack. Its
 * table is printed last, once the quotes part below has added the 200-quote list over 10,000
 * quotes and every part has run, with the last three runs' goals side by side
 * (bench-results/ratios-history.jsonl) and the whole run's wall time. Figures in
 * bench-results/ratios.json; run it alone with `deno run -A scripts/bench_ratios.ts`.
 *
 * Then, on the same stack, the quotes-at-scale part (scripts/bench_quotes.ts): a second
 * organisation seeded with 10,000 full quotes by SQL, the 200-quote list page and a re-banding
 * variant PATCH through the gateway; a second table, figures in bench-results/quotes.json.
 *
 * Then the catalogue part (scripts/bench_catalogue.ts), on the same stack and each figure beside
 * a bare-SQL floor from the same run: bulk create of BULK_MAX_ROWS variants per call, a cursor
 * walk of 100,000 catalogue items seeded by SQL (`GET /v1/catalogue?limit=200`, first pages
 * against last), and 16 concurrent writers adjusting one variant's stock, its final figure
 * checked; another table, figures in bench-results/catalogue.json. Run it alone with
 * `deno run -A scripts/bench_catalogue.ts` (scripts/bench_stack.ts boots the stack for both).
 *
 * Then the CRM part (scripts/bench_crm.ts), on the same stack, whose CRM process alone runs with
 * BULK_MAX_ROWS=10000: `POST /v1/customers/bulk/tier` over 10,000 customers seeded by SQL (by a
 * tier filter; goal ≤ 2 s per call, reported) and over 1,000 by ids, each call checked (every row
 * affected, one outbox event each), beside a bare UPDATE and a bare UPDATE + outbox INSERT; a
 * table, figures in bench-results/crm.json. Run it alone with `deno run -A scripts/bench_crm.ts`.
 *
 * Then the proofs part (scripts/bench_proofs.ts), on the same stack, whose proofs process sends
 * through a real SMTP server in this process: 200 sends timed from the request to the message
 * accepted by that server (p50, p99), and the approval page's render beside the proof's JSON;
 * figures in bench-results/proofs.json. Run it alone with `deno run -A scripts/bench_proofs.ts`.
 *
 * Then, last on this stack, the edge part (scripts/bench_edge.ts): a connection flood from
 * 127.0.0.2–127.0.0.20 (10,000 idle connections, 500 slowloris heads, 500 slow bodies, held by
 * a Worker of this process) while 1,000 `GET /v1/me` from 127.0.0.1, each on a fresh connection,
 * are measured against the same with no attack (goals: all answered 200, p99 ≤ 3× the
 * baseline's), 200 from the attackers' own addresses (goal ≥ 95 % answered) and the gateway's
 * RSS during (≤ 250 MB) and 10 s after (within 20 % of before); figures in
 * bench-results/edge.json. It runs after the footprint above is taken, since it leaves the
 * gateway as no other part does; a failure of it is reported at the end, after the events part.
 * `BENCH_EDGE_IDLE` and the other `BENCH_EDGE_*` variables shrink it; run it alone with
 * `deno run -A scripts/bench_edge.ts`.
 *
 * Last, the events part (scripts/bench_events.ts), after this stack is stopped: change → signed
 * webhook delivery, for the embedded transport and then Kafka on Mokapi (a test broker, not
 * Kafka), each on a stack of its own and a fresh database on the same cluster. Latency at a
 * steady 100 events/s (goal: p99 ≤ 1 s on the embedded transport) and throughput of a 2,000-change
 * backlog; a third table, figures in bench-results/events.json. `BENCH_DURATION_S` sets its
 * steady phase too (15 s unless set), `BENCH_EVENTS_BACKLOG` the backlog; run it alone with
 * `deno run -A scripts/bench_events.ts`.
 */
import autocannon from "autocannon";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { BENCH_DURATION_S, startBenchStack } from "./bench_stack.ts";
import { formatQuotesReport, runQuotesBench } from "./bench_quotes.ts";
import { formatCatalogueReport, runCatalogueBench } from "./bench_catalogue.ts";
import { CRM_BENCH_PROCESS_ENV, formatCrmReport, runCrmBench } from "./bench_crm.ts";
import { assertEventsRan, runEventsBench, writeEventsReport } from "./bench_events.ts";
import { formatEdgeReport, runEdgeBench } from "./bench_edge.ts";
import {
  formatProofsReport,
  proofsBenchProcessEnv,
  runProofsBench,
  startBenchSmtp,
} from "./bench_proofs.ts";
import {
  appendHistory,
  codeVersion,
  footprintAfterAllParts,
  formatHistory,
  formatRatiosReport,
  historyEntry,
  measureIdle,
  runRatiosBench,
  withListAtScale,
  writeRatiosReport,
} from "./bench_ratios.ts";
import {
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  signInternalContext,
} from "@printshop/shared/internal-context";

const DURATION_S = BENCH_DURATION_S;
const CONNECTIONS = 10;
const LATENCY_SAMPLES = 2000;
const PATH = "/v1/quotes?limit=20";

interface Figures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

async function throughput(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx and ${result.errors} errors under load`);
  }
  return result.requests.average;
}

async function latency(
  url: string,
  headers: () => Promise<Record<string, string>>,
  init: { method?: string; body?: string; expectStatus?: number } = {},
): Promise<{ p50Ms: number; p99Ms: number }> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES + 100; i++) {
    const h = await headers();
    const started = performance.now();
    const res = await fetch(url, { headers: h, method: init.method ?? "GET", body: init.body });
    await res.arrayBuffer();
    const elapsed = performance.now() - started;
    if (res.status !== (init.expectStatus ?? 200)) throw new Error(`${url} answered ${res.status}`);
    if (i >= 100) samples.push(elapsed); // the first 100 warm up connections and JIT
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number =>
    samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}

const started = performance.now();
// Only the CRM process gets its larger BULK_MAX_ROWS: the other parts measure as before. The
// proofs process sends its mail to a real SMTP server in this process.
const smtp = await startBenchSmtp();
const bench = await startBenchStack(undefined, {
  processEnv: { ...CRM_BENCH_PROCESS_ENV, ...proofsBenchProcessEnv(smtp.port) },
});
const { pg, stack, internalSecret, adminToken } = bench;

try {
  // The idle footprint of the ratios part is the freshly booted stack's, before any load.
  const idle = await measureIdle(bench);
  const adminCall = async (
    path: string,
    body: unknown,
  ): Promise<{ data: Record<string, string> }> => {
    const res = await fetch(`${stack.adminUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return await res.json();
  };
  const org = (await adminCall("/admin/organizations", { name: "Bench Shop" })).data;
  const key =
    (await adminCall(`/admin/organizations/${org.id}/api-keys`, { scopes: ALL_SCOPES })).data;
  // The load must measure the gateway, not its rate limiter refusing the load.
  await fetch(`${stack.adminUrl}/admin/organizations/${org.id}/limits`, {
    method: "PUT",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ requestsPerMinute: 1_000_000 }),
  }).then((r) => r.arrayBuffer());
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${stack.gatewayUrl}/v1/quotes`, {
      method: "POST",
      headers: { "x-api-key": key.apiKey!, "content-type": "application/json" },
      body: JSON.stringify({ reference: `Bench ${i}`, salesRepEmail: `rep${i % 4}@bench.test` }),
    });
    await res.arrayBuffer();
  }

  const contextKey = await importContextKey(internalSecret);
  const directHeaders = async (): Promise<Record<string, string>> => ({
    [INTERNAL_CONTEXT_HEADER]: await signInternalContext(contextKey, "GET", PATH, {
      organizationId: org.id!,
      credentialKind: "tenant_key",
      credentialId: key.id!,
      scopes: [...ALL_SCOPES],
      requestId: crypto.randomUUID(),
      issuedAt: Date.now(),
    }),
  });
  const gatewayHeaders = { "x-api-key": key.apiKey! };

  const gatewayUrl = `${stack.gatewayUrl}${PATH}`;
  const directUrl = `${stack.serviceUrls.quotes}${PATH}`;
  console.error(`[bench] ${DURATION_S} s of load per target, ${CONNECTIONS} connections…`);
  // A signed context stays valid for 60 s, longer than one load run.
  const directRps = await throughput(directUrl, await directHeaders());
  const gatewayRps = await throughput(gatewayUrl, gatewayHeaders);
  console.error(`[bench] ${LATENCY_SAMPLES} sequential requests per target for latency…`);
  const directLatency = await latency(directUrl, directHeaders);
  const gatewayLatency = await latency(gatewayUrl, () => Promise.resolve(gatewayHeaders));

  // An idempotent replay: the same keyed POST again, answered from the gateway's record.
  const replayHeaders = {
    ...gatewayHeaders,
    "content-type": "application/json",
    "idempotency-key": "bench-replay",
  };
  const replayBody = JSON.stringify({ reference: "replayed" });
  const first = await fetch(`${stack.gatewayUrl}/v1/quotes`, {
    method: "POST",
    headers: replayHeaders,
    body: replayBody,
  });
  await first.arrayBuffer();
  const replayLatency = await latency(
    `${stack.gatewayUrl}/v1/quotes`,
    () => Promise.resolve(replayHeaders),
    {
      method: "POST",
      body: replayBody,
      expectStatus: 201,
    },
  );
  // A refused request: an organisation limited to 1 request per minute, after its one request.
  const limitedOrg = (await adminCall("/admin/organizations", { name: "Limited Shop" })).data;
  const limitedKey = (await adminCall(`/admin/organizations/${limitedOrg.id}/api-keys`, {
    scopes: ["quotes.read"],
  })).data;
  await fetch(`${stack.adminUrl}/admin/organizations/${limitedOrg.id}/limits`, {
    method: "PUT",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ requestsPerMinute: 1 }),
  }).then((r) => r.arrayBuffer());
  const limitedHeaders = { "x-api-key": limitedKey.apiKey! };
  await fetch(gatewayUrl, { headers: limitedHeaders }).then((r) => r.arrayBuffer());
  const refusedLatency = await latency(gatewayUrl, () => Promise.resolve(limitedHeaders), {
    expectStatus: 429,
  });

  const direct: Figures = { requestsPerSecond: directRps, ...directLatency, non2xx: 0 };
  const gateway: Figures = { requestsPerSecond: gatewayRps, ...gatewayLatency, non2xx: 0 };
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
    request: `GET ${PATH}`,
    direct,
    gateway,
    idempotentReplay: replayLatency,
    rateLimited429: refusedLatency,
    ratios: {
      throughputGatewayOverDirect: gatewayRps / directRps,
      p50OverheadMs: gatewayLatency.p50Ms - directLatency.p50Ms,
      p99OverheadMs: gatewayLatency.p99Ms - directLatency.p99Ms,
    },
    goals: { p50OverheadMsAtMost: 1, throughputRatioAtLeast: 0.6 },
  };
  const f = (n: number, digits = 2): string => n.toFixed(digits).padStart(10);
  console.log(`
GET ${PATH}              req/s      p50 ms      p99 ms
direct to quotes    ${f(directRps, 0)}  ${f(direct.p50Ms)}  ${f(direct.p99Ms)}
through gateway     ${f(gatewayRps, 0)}  ${f(gateway.p50Ms)}  ${f(gateway.p99Ms)}

gateway/direct throughput: ${
    (report.ratios.throughputGatewayOverDirect * 100).toFixed(1)
  } %   (goal ≥ 60 %)
gateway p50 overhead:      ${report.ratios.p50OverheadMs.toFixed(3)} ms  (goal ≤ 1 ms)
gateway p99 overhead:      ${report.ratios.p99OverheadMs.toFixed(3)} ms

idempotent replay (POST)  p50 ${replayLatency.p50Ms.toFixed(2)} ms   p99 ${
    replayLatency.p99Ms.toFixed(2)
  } ms
429 rate_limited          p50 ${refusedLatency.p50Ms.toFixed(2)} ms   p99 ${
    refusedLatency.p99Ms.toFixed(2)
  } ms
`);
  await Deno.mkdir("bench-results", { recursive: true });
  await Deno.writeTextFile("bench-results/gateway.json", JSON.stringify(report, null, 2) + "\n");
  console.log("Figures written to bench-results/gateway.json");

  // Issue 15's ratios, on the same stack: floors in this run, the product beside each.
  // Its table comes last, with the list at scale from the quotes part and the footprint after
  // every part.
  let ratiosReport = await runRatiosBench(bench, { durationS: DURATION_S, idle });
  await writeRatiosReport(ratiosReport, "bench-results/ratios.json");
  console.error("[bench] ratios measured: their table comes at the end, with every goal");

  // Quotes at scale, on the same stack: a new organisation seeded with 10,000 full quotes.
  const quotesReport = await runQuotesBench({
    gatewayUrl: stack.gatewayUrl,
    adminUrl: stack.adminUrl,
    adminToken,
    databaseUrl: bench.databaseUrl,
    durationS: DURATION_S,
  });
  await Deno.writeTextFile(
    "bench-results/quotes.json",
    JSON.stringify(quotesReport, null, 2) + "\n",
  );
  console.log(formatQuotesReport(quotesReport, "bench-results/quotes.json"));
  ratiosReport = withListAtScale(ratiosReport, quotesReport);

  // The catalogue, on the same stack: bulk create, a 100,000-item cursor walk, stock writers.
  const catalogueReport = await runCatalogueBench({
    gatewayUrl: stack.gatewayUrl,
    adminUrl: stack.adminUrl,
    adminToken,
    databaseUrl: bench.databaseUrl,
    durationS: DURATION_S,
  });
  await Deno.writeTextFile(
    "bench-results/catalogue.json",
    JSON.stringify(catalogueReport, null, 2) + "\n",
  );
  console.log(formatCatalogueReport(catalogueReport, "bench-results/catalogue.json"));

  // The CRM, on the same stack: bulk tier over 10,000 customers by filter, 1,000 by ids.
  const crmReport = await runCrmBench({
    gatewayUrl: stack.gatewayUrl,
    adminUrl: stack.adminUrl,
    adminToken,
    databaseUrl: bench.databaseUrl,
  });
  await Deno.writeTextFile("bench-results/crm.json", JSON.stringify(crmReport, null, 2) + "\n");
  console.log(formatCrmReport(crmReport, "bench-results/crm.json"));

  // Proofs, on the same stack: send → accepted by the SMTP server, and the approval page.
  const proofsReport = await runProofsBench({
    gatewayUrl: stack.gatewayUrl,
    adminUrl: stack.adminUrl,
    adminToken,
    smtp,
  });
  await Deno.writeTextFile(
    "bench-results/proofs.json",
    JSON.stringify(proofsReport, null, 2) + "\n",
  );
  console.log(formatProofsReport(proofsReport, "bench-results/proofs.json"));

  // The footprint after every part that ran on this stack but the edge flood below, beside the
  // ratios part's figures.
  ratiosReport.footprint.afterAllParts = await footprintAfterAllParts(bench);
  await writeRatiosReport(ratiosReport, "bench-results/ratios.json");

  // The connection flood, last on this stack. Its failure (a deadline, too few descriptors for
  // the attack) is thrown once the events part has run, so that part's figures are not lost.
  let edgeFailure: unknown = null;
  try {
    const edgeReport = await runEdgeBench(bench);
    await Deno.writeTextFile("bench-results/edge.json", JSON.stringify(edgeReport, null, 2) + "\n");
    console.log(formatEdgeReport(edgeReport, "bench-results/edge.json"));
  } catch (error) {
    edgeFailure = error;
    console.error(`[bench] the edge part failed: ${error}`);
  }

  // Events → webhook deliveries, on stacks of their own: this one stops so it leaves the cores.
  await stack.stop();
  const eventsReport = await runEventsBench({ postgresUrl: pg.url });
  console.log(await writeEventsReport(eventsReport, "bench-results/events.json"));

  // Issue 15: every goal of this run, then the last three runs side by side.
  const totalSeconds = (performance.now() - started) / 1000;
  const entry = historyEntry(ratiosReport, "deno task bench", totalSeconds, await codeVersion());
  const history = formatHistory(await appendHistory(entry), entry);
  console.log(formatRatiosReport(ratiosReport, "bench-results/ratios.json", history));
  console.log(
    `\ndeno task bench: ${(totalSeconds / 60).toFixed(1)} min from start to this line ` +
      `(BENCH_DURATION_S=${DURATION_S}, BENCH_IDLE_S=${idle.cpu.seconds.toFixed(0)})`,
  );
  assertEventsRan(eventsReport);
  if (edgeFailure !== null) throw edgeFailure;
} finally {
  // With the seeded quotes it holds hundreds of MB; stopping removes it.
  await bench.stop();
  await smtp.close();
}

/**
 * The gateway part of `deno task bench`, its first: `GET /v1/quotes?limit=20` through the
 * gateway against the same request sent straight to the quotes service with a valid signed
 * internal context. Throughput comes from autocannon (10 connections); latency from a closed
 * loop of single requests timed with performance.now(), since autocannon reports whole
 * milliseconds and the overhead under study is smaller than that. It also times an idempotent
 * replay (the same keyed POST again) and a 429 refusal. Nothing is asserted: the goals (gateway
 * p50 overhead ≤ 1 ms, throughput ≥ 60 % of direct) are reported.
 */
import autocannon from "autocannon";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import {
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  signInternalContext,
} from "@printshop/shared/internal-context";
import { benchOrganization, type BenchStack } from "./stack.ts";

const CONNECTIONS = 10;
const LATENCY_SAMPLES = 2000;
const PATH = "/v1/quotes?limit=20";

/** p50 and p99 of one kind of request, in ms. */
interface Latency {
  p50Ms: number;
  p99Ms: number;
}

/** A target's figures: autocannon's req/s, the sequential loop's latency. */
interface Figures extends Latency {
  requestsPerSecond: number;
  non2xx: number;
}

export interface GatewayReport {
  date: string;
  machine: { cpus: number; deno: string };
  request: string;
  direct: Figures;
  gateway: Figures;
  idempotentReplay: Latency;
  rateLimited429: Latency;
  ratios: { throughputGatewayOverDirect: number; p50OverheadMs: number; p99OverheadMs: number };
  goals: { p50OverheadMsAtMost: number; throughputRatioAtLeast: number };
}

async function throughput(
  url: string,
  headers: Record<string, string>,
  durationS: number,
): Promise<number> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: durationS });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx and ${result.errors} errors under load`);
  }
  return result.requests.average;
}

async function latency(
  url: string,
  headers: () => Promise<Record<string, string>>,
  init: { method?: string; body?: string; expectStatus?: number } = {},
): Promise<Latency> {
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

/** Runs the gateway part on a running bench stack and returns its figures. */
export async function runGatewayBench(
  bench: BenchStack,
  durationS: number,
): Promise<GatewayReport> {
  const { stack, internalSecret } = bench;
  const admin = { adminUrl: stack.adminUrl, adminToken: bench.adminToken };
  // The load must measure the gateway, not its rate limiter refusing the load.
  const org = await benchOrganization(admin, "Bench Shop");
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${stack.gatewayUrl}/v1/quotes`, {
      method: "POST",
      headers: { "x-api-key": org.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ reference: `Bench ${i}`, salesRepEmail: `rep${i % 4}@bench.test` }),
    });
    await res.arrayBuffer();
  }

  const contextKey = await importContextKey(internalSecret);
  const directHeaders = async (): Promise<Record<string, string>> => ({
    [INTERNAL_CONTEXT_HEADER]: await signInternalContext(contextKey, "GET", PATH, {
      organizationId: org.organizationId,
      credentialKind: "tenant_key",
      credentialId: org.apiKeyId,
      scopes: [...ALL_SCOPES],
      requestId: crypto.randomUUID(),
      issuedAt: Date.now(),
    }),
  });
  const gatewayHeaders = { "x-api-key": org.apiKey };

  const gatewayUrl = `${stack.gatewayUrl}${PATH}`;
  const directUrl = `${stack.serviceUrls.quotes}${PATH}`;
  console.error(`[bench] ${durationS} s of load per target, ${CONNECTIONS} connections…`);
  // A signed context stays valid for 60 s, longer than one load run.
  const directRps = await throughput(directUrl, await directHeaders(), durationS);
  const gatewayRps = await throughput(gatewayUrl, gatewayHeaders, durationS);
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
  const limited = await benchOrganization(admin, "Limited Shop", {
    scopes: ["quotes.read"],
    requestsPerMinute: 1,
  });
  const limitedHeaders = { "x-api-key": limited.apiKey };
  await fetch(gatewayUrl, { headers: limitedHeaders }).then((r) => r.arrayBuffer());
  const refusedLatency = await latency(gatewayUrl, () => Promise.resolve(limitedHeaders), {
    expectStatus: 429,
  });

  const direct: Figures = { requestsPerSecond: directRps, ...directLatency, non2xx: 0 };
  const gateway: Figures = { requestsPerSecond: gatewayRps, ...gatewayLatency, non2xx: 0 };
  return {
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
}

/** The gateway part's table, the first of `deno task bench`. */
export function formatGatewayReport(report: GatewayReport, writtenTo: string): string {
  const { direct, gateway, idempotentReplay: replayLatency, rateLimited429: refusedLatency } =
    report;
  const f = (n: number, digits = 2): string => n.toFixed(digits).padStart(10);
  return `
GET ${PATH}              req/s      p50 ms      p99 ms
direct to quotes    ${f(direct.requestsPerSecond, 0)}  ${f(direct.p50Ms)}  ${f(direct.p99Ms)}
through gateway     ${f(gateway.requestsPerSecond, 0)}  ${f(gateway.p50Ms)}  ${f(gateway.p99Ms)}

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

Figures written to ${writtenTo}`;
}

/**
 * The edge part's ordinary clients: `GET /v1/me` with the key, each on a fresh connection from a
 * chosen loopback address, a few at a time within a time budget; the share answered 200 and the
 * latencies, an answer other than 200 counting as never answered in the p99 of all.
 */
import http from "node:http";
import { type LatencyFigures, latencyFigures, percentile } from "./stats.ts";

export const PATH = "/v1/me";
export const CONCURRENCY = 4;
const REQUEST_TIMEOUT_MS = 10_000;

/** One batch of `GET /v1/me`, each on a connection of its own. */
export interface RequestPhase {
  label: string;
  requests: number;
  /** Requests that left; the rest were not sent within the phase's time budget. */
  sent: number;
  /** Answered 200. */
  served: number;
  servedPercent: number;
  /** By outcome: a status code, an error code (ECONNRESET), `timeout` or `not sent`. */
  outcomes: Record<string, number>;
  /** Of the 200 answers: connect to the last byte. */
  latency: LatencyFigures;
  /**
   * p99 of every request, one not answered 200 counting as never answered: null once more than
   * 1 % were not. The p99 goal is judged on this, so that an edge answering 97 % of the requests
   * 503 cannot meet it on the p99 of the other 3 %.
   */
  p99AllMs: number | null;
  wallS: number;
}

const errorCode = (error: unknown): string => {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : String(error).slice(0, 60);
};

/**
 * One `GET /v1/me` from `localAddress`. node:http with `agent: false` opens a new TCP
 * connection for the request and closes it after (`Connection: close`), so every request pays
 * the connect and the edge's accept, which is what a flood competes for; fetch would reuse a
 * pooled connection. Timed from before the connect to the answer's last byte.
 */
function getMe(
  target: { host: string; port: number; apiKey: string },
  localAddress: string,
  signal: AbortSignal,
): Promise<{ outcome: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const settle = (outcome: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({ outcome, ms: performance.now() - started });
    };
    const req = http.request({
      host: target.host,
      port: target.port,
      path: PATH,
      method: "GET",
      headers: { "x-api-key": target.apiKey },
      agent: false,
      localAddress,
    }, (res) => {
      res.on("data", () => {});
      res.on("end", () => settle(String(res.statusCode)));
      res.on("error", (error) => settle(errorCode(error)));
    });
    const timer = setTimeout(() => {
      settle("timeout");
      req.destroy();
    }, REQUEST_TIMEOUT_MS);
    const onAbort = (): void => {
      settle("aborted");
      req.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (error) => settle(errorCode(error)));
    req.end();
  });
}

export async function requestPhase(
  label: string,
  target: { host: string; port: number; apiKey: string },
  count: number,
  addressOf: (i: number) => string,
  budgetMs: number,
  signal: AbortSignal,
): Promise<RequestPhase> {
  const results: { outcome: string; ms: number }[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count && performance.now() - started < budgetMs && !signal.aborted) {
      results.push(await getMe(target, addressOf(next++), signal));
    }
  }));
  signal.throwIfAborted();
  const outcomes: Record<string, number> = {};
  for (const { outcome } of results) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  if (results.length < count) outcomes["not sent"] = count - results.length;
  const served = results.filter((r) => r.outcome === "200");
  const never = Array.from({ length: count - served.length }, () => Infinity);
  const p99All = percentile([...served.map((r) => r.ms), ...never].sort((a, b) => a - b), 0.99);
  return {
    label,
    requests: count,
    sent: results.length,
    served: served.length,
    servedPercent: (served.length / count) * 100,
    outcomes,
    latency: latencyFigures(served.map((r) => r.ms)),
    p99AllMs: Number.isFinite(p99All) ? p99All : null,
    wallS: (performance.now() - started) / 1000,
  };
}

/**
 * The stack `deno task bench` measures, booted once here so that scripts/bench.ts and a part run
 * on its own (`deno run -A scripts/bench_catalogue.ts`) start it the same way: a throwaway
 * embedded PostgreSQL (fsync off: the floors measured beside the API run on the same cluster),
 * a `bench` database on it, and the real stack (gateway + services, LOG_LEVEL=warn) over that.
 * A part may give one process variables of its own (scripts/bench_crm.ts: the CRM's
 * BULK_MAX_ROWS), which bench.ts then passes for the whole run. The webhooks process may deliver
 * to loopback (WEBHOOK_ALLOW_PRIVATE_TARGETS), where scripts/bench_ratios.ts's receiver listens
 * for the events under the write load.
 */
import { RECOMMENDED_TRACE_SAMPLE } from "@printshop/shared/telemetry";
import { type EmbeddedPostgres, startThrowawayPostgres } from "@printshop/shared/embedded-postgres";
import { connect, type Sql } from "@printshop/shared/db";
import {
  launchStack,
  prepareDatabaseRoles,
  type RunningStack,
  type StackOptions,
} from "@printshop/shared/launcher";
import { ALL_SCOPES } from "@printshop/shared/scopes";

/** Seconds of each timed load (`BENCH_DURATION_S`), 10 unless set. */
export const BENCH_DURATION_S = Number(Deno.env.get("BENCH_DURATION_S") ?? 10);

/**
 * The stack's processes export telemetry when `BENCH_OTEL_ENDPOINT` names an OTLP/HTTP receiver
 * (`deno task otel:receive`, say), sampled as the README recommends
 * (`parentbased_traceidratio`, `BENCH_OTEL_SAMPLE` of the traces, 0.1 unless set); the floors and
 * the load generator never do. How the bench measures export on against off (README "Telemetry").
 */
export function benchTelemetryEnv(): Record<string, string> {
  const endpoint = Deno.env.get("BENCH_OTEL_ENDPOINT");
  if (!endpoint) return {};
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: Deno.env.get("BENCH_OTEL_SAMPLE") ?? RECOMMENDED_TRACE_SAMPLE,
  };
}

export const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

/** The URL of database `name` on the PostgreSQL server that `serverUrl` points at. */
export function databaseOn(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface BenchStack {
  pg: EmbeddedPostgres;
  stack: RunningStack;
  /** The `bench` database the stack runs on. */
  databaseUrl: string;
  internalSecret: string;
  adminToken: string;
  logDir: string;
  /** Stops the stack and the cluster (removing its data) and the logs. */
  stop(): Promise<void>;
}

export interface BenchStackOptions {
  /**
   * Variables for one process only (the CRM's BULK_MAX_ROWS for scripts/bench_crm.ts), so that
   * what the other parts measure, and the gateway's reported limits, stay as they were.
   */
  processEnv?: StackOptions["processEnv"];
}

export async function startBenchStack(
  prefix = "printshop-bench-",
  options: BenchStackOptions = {},
): Promise<BenchStack> {
  const telemetry = benchTelemetryEnv();
  console.log(
    telemetry.OTEL_DENO
      ? `Telemetry export on, to ${telemetry.OTEL_EXPORTER_OTLP_ENDPOINT}, ${telemetry.OTEL_TRACES_SAMPLER}=${telemetry.OTEL_TRACES_SAMPLER_ARG}`
      : "Telemetry export off (BENCH_OTEL_ENDPOINT unset)",
  );
  const pg = await startThrowawayPostgres(prefix);
  const logDir = await Deno.makeTempDir({ prefix: `${prefix}logs-` });
  try {
    const admin = connect(pg.url, { schema: "public", max: 1 });
    await admin.unsafe("CREATE DATABASE bench");
    await admin.end();
    const dbUrl = databaseOn(pg.url, "bench");
    const internalSecret = randomHex(32);
    const adminToken = randomHex(32);
    const roles = await prepareDatabaseRoles(dbUrl, decodeURIComponent(new URL(pg.url).password));
    const stack = await launchStack({
      ...roles,
      internalSecret,
      webhookSecretsKey: randomHex(32),
      adminToken,
      logDir,
      env: { LOG_LEVEL: "warn", ...telemetry },
      processEnv: {
        ...options.processEnv,
        webhooks: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", ...options.processEnv?.webhooks },
      },
    });
    return {
      pg,
      stack,
      databaseUrl: dbUrl,
      internalSecret,
      adminToken,
      logDir,
      async stop() {
        await stack.stop();
        await pg.stop();
        await Deno.remove(logDir, { recursive: true }).catch(() => {});
      },
    };
  } catch (error) {
    await pg.stop();
    await Deno.remove(logDir, { recursive: true }).catch(() => {});
    throw error;
  }
}

/** A JSON call that must succeed; answers the envelope's `data`. */
export async function api<T>(
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: unknown },
): Promise<T> {
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: { ...init.headers, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${url} answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** What a part needs of the stack to reach it: the gateway, the admin API and the database. */
export interface StackAccess {
  gatewayUrl: string;
  adminUrl: string;
  adminToken: string;
  /** The stack's database, for a part's seed, checks and floors. */
  databaseUrl: string;
}

export function stackAccess(bench: BenchStack): StackAccess {
  return {
    gatewayUrl: bench.stack.gatewayUrl,
    adminUrl: bench.stack.adminUrl,
    adminToken: bench.adminToken,
    databaseUrl: bench.databaseUrl,
  };
}

/** A part's organisation as its loads reach it: the database, the gateway, its key's headers. */
export interface BenchShop {
  sql: Sql;
  gatewayUrl: string;
  headers: Record<string, string>;
  organizationId: string;
}

/**
 * A bench organisation through the admin API: its id and a key of every scope, with a rate
 * limit high enough that the load measured is never refused. The gateway part also makes one
 * with a narrower key and a limit of 1, for its 429.
 */
export async function benchOrganization(
  admin: { adminUrl: string; adminToken: string },
  name: string,
  options: { scopes?: readonly string[]; requestsPerMinute?: number } = {},
): Promise<{ organizationId: string; apiKey: string; apiKeyId: string }> {
  const headers = { authorization: `Bearer ${admin.adminToken}` };
  const org = await api<{ id: string }>(`${admin.adminUrl}/admin/organizations`, {
    method: "POST",
    headers,
    body: { name },
  });
  const key = await api<{ id: string; apiKey: string }>(
    `${admin.adminUrl}/admin/organizations/${org.id}/api-keys`,
    { method: "POST", headers, body: { scopes: options.scopes ?? ALL_SCOPES } },
  );
  await api(`${admin.adminUrl}/admin/organizations/${org.id}/limits`, {
    method: "PUT",
    headers,
    body: { requestsPerMinute: options.requestsPerMinute ?? 1_000_000 },
  });
  return { organizationId: org.id, apiKey: key.apiKey, apiKeyId: key.id };
}

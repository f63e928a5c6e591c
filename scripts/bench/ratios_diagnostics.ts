/**
 * The ratios part's diagnostics, taken after the timed runs and outside them: statements per
 * request of each product request by application (PostgreSQL's statement log, switched on for
 * the sample only), and what the stack's backends wait on under each 16-writer write load
 * (pg_stat_activity sampled).
 */
import { dirname, join } from "node:path";
import type { Sql } from "@printshop/shared/db";
import { sleep } from "@printshop/shared/net";
import {
  figuresOfSamples,
  type LoadFigures,
  noFigures,
  type Target,
  type Turn,
  turnLoop,
} from "./load.ts";
import { fileSize, readFrom } from "./log_files.ts";
import type { BenchStack } from "./stack.ts";

/** Sequential requests per product request while PostgreSQL logs statements. */
export const STATEMENT_SAMPLE = 20;
/** After a statement sample, so the relay, the bus and consumers finish what it set off. */
const AFTER_SAMPLE_MS = 1500;
const IDLE_BASELINE_MS = 3000;
const WAIT_SAMPLE_EVERY_MS = 10;

/** Statements per request of each product request, by application and first keyword. */
export type StatementsPerRequest = Record<string, {
  requests: number;
  byApplication: Record<string, Record<string, number>>;
  note: string;
}>;

/**
 * Statements per application in a slice of PostgreSQL's log written with the prefix
 * `ratios|<application>|` and `log_statement = all`: one `statement:` or `execute …:` line per
 * statement run; answers, per application, the count of each first keyword (BEGIN, SELECT, …).
 */
export function countLoggedStatements(log: string): Record<string, Record<string, number>> {
  const counts: Record<string, Record<string, number>> = {};
  const line = /^ratios\|([^|]*)\|[^\n]*?LOG:\s+(?:statement|execute [^:]*):\s*([A-Za-z]*)/gm;
  for (const match of log.matchAll(line)) {
    const app = match[1] || "(none)";
    const keyword = (match[2] ?? "").toUpperCase() || "(other)";
    const byKeyword = counts[app] ??= {};
    byKeyword[keyword] = (byKeyword[keyword] ?? 0) + 1;
  }
  return counts;
}

/**
 * Statements per request, by application and keyword (plus `total`), net of what the same
 * application runs anyway (its idle rate in `baseline` over `baselineS`, scaled to `windowS`),
 * never below zero, to two decimals.
 */
export function netPerRequest(
  counts: Record<string, Record<string, number>>,
  baseline: Record<string, Record<string, number>>,
  baselineS: number,
  windowS: number,
  requests: number,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [app, byKeyword] of Object.entries(counts)) {
    const net: Record<string, number> = {};
    let total = 0;
    for (const [keyword, n] of Object.entries(byKeyword)) {
      const expected = (baseline[app]?.[keyword] ?? 0) * windowS / baselineS;
      const v = Math.max(0, n - expected) / requests;
      net[keyword] = Math.round(v * 100) / 100;
      total += v;
    }
    if (total >= 0.005) out[app] = { total: Math.round(total * 100) / 100, ...net };
  }
  return out;
}

/** Where the cluster's log is: startEmbeddedPostgres puts it beside the data directory. */
function postgresLogPath(bench: BenchStack): string {
  return join(dirname(bench.pg.dataDir), "postgres.log");
}

/**
 * Runs `requests` sequential calls of each target with `log_statement = all` on the cluster
 * (ALTER SYSTEM + reload, reset after), and counts the statements each application ran per
 * request, from the log. The relays' and consumers' statements an event causes are counted too:
 * a pause after each sample lets them finish.
 */
export async function statementsPerRequest(
  bench: BenchStack,
  sql: Sql,
  targets: Record<string, Target>,
  requests: number,
): Promise<StatementsPerRequest> {
  const log = postgresLogPath(bench);
  const out: StatementsPerRequest = {};
  try {
    await Deno.stat(log);
  } catch {
    console.error(`[ratios] no PostgreSQL log at ${log}: statements per request not counted`);
    return out;
  }
  await sql.unsafe(`ALTER SYSTEM SET log_statement = 'all'`);
  await sql.unsafe(`ALTER SYSTEM SET log_line_prefix = 'ratios|%a|'`);
  await sql`SELECT pg_reload_conf()`;
  await sleep(500);
  /** Statements logged while `work` runs and for a pause after it (what an event sets off). */
  const logged = async (
    work: () => Promise<void>,
  ): Promise<{ counts: Record<string, Record<string, number>>; seconds: number }> => {
    const from = await fileSize(log);
    const started = performance.now();
    await work();
    await sleep(AFTER_SAMPLE_MS);
    const counts = countLoggedStatements(await readFrom(log, from));
    delete counts["bench"];
    return { counts, seconds: (performance.now() - started) / 1000 };
  };
  try {
    const idle = await logged(() => sleep(IDLE_BASELINE_MS));
    for (const [name, target] of Object.entries(targets)) {
      const sample = await logged(async () => {
        for (let i = 0; i < requests; i++) {
          const res = await fetch(target.url, {
            method: target.method ?? "GET",
            headers: target.headers,
            body: target.body?.(),
          });
          await res.arrayBuffer();
        }
      });
      out[name] = {
        requests,
        byApplication: netPerRequest(
          sample.counts,
          idle.counts,
          idle.seconds,
          sample.seconds,
          requests,
        ),
        note: `statements per request by application_name and first keyword, over ${requests} ` +
          `sequential requests and ${AFTER_SAMPLE_MS} ms after them (the relay, bus and ` +
          `consumers' work an event sets off included), net of each application's idle rate ` +
          `measured over ${idle.seconds.toFixed(1)} s just before`,
      };
    }
  } finally {
    await sql.unsafe(`ALTER SYSTEM RESET log_statement`);
    await sql.unsafe(`ALTER SYSTEM RESET log_line_prefix`);
    await sql`SELECT pg_reload_conf()`;
  }
  return out;
}

/** pg_stat_activity of the stack's backends, sampled during a load. */
export interface Waits {
  samples: number;
  failedSamples: Record<string, number>;
  everyMs: number;
  /** Share of samples in which a stack backend was in each state, by application. */
  states: {
    application: string;
    state: string;
    wait: string;
    /** For lock waits: the waiting statement ← the blocker's state and statement. */
    detail?: string;
    meanBackends: number;
  }[];
  figures: LoadFigures;
}

interface ActivityRow {
  application_name: string;
  state: string;
  wait: string;
  detail: string | null;
}

/** What the stack's backends are doing, sampled from pg_stat_activity during a load. */
export async function waitsUnderLoad(
  sql: Sql,
  turns: Turn[],
  label: string,
  durationS: number,
): Promise<Waits> {
  let samples = 0;
  const failedSamples: Record<string, number> = {};
  const seen = new Map<string, number>();
  let loading = true;
  // For a backend waiting on a lock: the statement that waits, and what the first backend
  // blocking it is doing (its state and statement), i.e. who holds the lock meanwhile.
  const sampler = (async () => {
    while (loading) {
      let rows: ActivityRow[];
      try {
        rows = await sql<ActivityRow[]>`
        SELECT a.application_name, coalesce(a.state, '?') AS state,
               coalesce(a.wait_event_type || ':' || a.wait_event, 'on CPU') AS wait,
               CASE WHEN a.wait_event_type = 'Lock' THEN
                 left(regexp_replace(a.query, '[[:space:]]+', ' ', 'g'), 60) || ' ← held by ' ||
                 coalesce((
                   SELECT b.application_name || ' ' || b.state || ' after ' ||
                          left(regexp_replace(b.query, '[[:space:]]+', ' ', 'g'), 60)
                   FROM pg_stat_activity b WHERE b.pid = (pg_blocking_pids(a.pid))[1]
                   LIMIT 1
                 ), '?')
               END AS detail
        FROM pg_stat_activity a
        WHERE a.datname = current_database() AND a.backend_type = 'client backend'
          AND a.pid <> pg_backend_pid() AND a.application_name NOT LIKE 'bench%'
          AND a.state <> 'idle'`;
      } catch (error) {
        // A sample that fails is counted and skipped; the load goes on.
        const message = error instanceof Error ? error.message : String(error);
        failedSamples[message] = (failedSamples[message] ?? 0) + 1;
        await sleep(WAIT_SAMPLE_EVERY_MS);
        continue;
      }
      samples++;
      for (const r of rows) {
        const key = [r.application_name, r.state, r.wait, r.detail ?? ""].join("\u0000");
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      await sleep(WAIT_SAMPLE_EVERY_MS);
    }
  })();
  const figures = figuresOfSamples([await turnLoop(turns, durationS)], turns.length)[label] ??
    noFigures(turns.length);
  loading = false;
  await sampler;
  const states = [...seen].map(([key, n]) => {
    const [application, state, wait, detail] = key.split("\u0000") as [
      string,
      string,
      string,
      string,
    ];
    return {
      application,
      state,
      wait,
      ...(detail ? { detail } : {}),
      meanBackends: Math.round(n / samples * 100) / 100,
    };
  }).sort((a, b) => b.meanBackends - a.meanBackends);
  return { samples, failedSamples, everyMs: WAIT_SAMPLE_EVERY_MS, states, figures };
}

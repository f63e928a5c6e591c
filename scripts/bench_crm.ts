/**
 * The CRM part of `deno task bench` (imported by scripts/bench.ts, run on its stack; or alone, on
 * a stack of its own booted by scripts/bench/stack.ts, with `deno run -A scripts/bench_crm.ts`).
 * Every API figure is taken through the gateway with one organisation's key (ALL_SCOPES, rate
 * limit lifted) and stands beside a floor measured in the same run, bare through postgres.js on
 * the `crm` schema. The stack's CRM process must run with BULK_MAX_ROWS ≥ 10,000
 * (CRM_BENCH_PROCESS_ENV, passed to startBenchStack); only the CRM gets it, so the gateway's
 * `bulkMaxRows` and the catalogue part, which sizes its calls by it, stay as they were.
 *
 * 1. Seed: CUSTOMERS_SEEDED (10,000) customers of one organisation by SQL, all `tier = 'silver'`,
 *    plus a few through `POST /v1/customers` (tier `bronze`, so no target below picks them); a
 *    seeded customer read through the API must have the same fields as an API-made one.
 * 2. By filter: `POST /v1/customers/bulk/tier` with `{filters: [{field: "tier", op: "eq",
 *    value: <current>}]}` and the other tier (silver → gold → silver …), so every call changes
 *    all 10,000 rows. Each call must answer `requested = affected = 10,000` and leave 10,000
 *    `customer.updated` outbox rows (one per customer, carrying the new tier), or the run stops.
 *    Goal, reported, not asserted: ≤ 2 s per call.
 * 3. By ids: the same with `{ids: [...]}` of IDS_TARGETED (1,000) seeded customers.
 * 4. Floors, interleaved with the API calls (API, floor, floor + outbox, each flipping the tier
 *    back, so all three meet the table in the same state): `BEGIN; UPDATE customers SET tier,
 *    updated_at …; COMMIT` over the same rows, and the same UPDATE with the 10,000 (1,000)
 *    outbox rows written by SQL in the same statement (payload built by jsonb_build_object).
 *
 * Before every timed step the CRM's outbox relay is let drain (no unpublished rows) and every
 * consumer group of the CRM's topic on the embedded bus catch up, so no step shares the machine
 * with the previous one's 10,000 events being published and consumed; both waits after each API
 * call are reported too (untimed).
 */
import { connect, type Queryable, type Sql } from "@printshop/shared/db";
import { writeResults } from "./bench/results.ts";
import {
  api,
  benchOrganization,
  type StackAccess,
  stackAccess,
  startBenchStack,
} from "./bench/stack.ts";
import {
  type BulkCallFigures,
  type LatencyFigures,
  latencyFigures,
  median,
} from "./bench/stats.ts";

export const CUSTOMERS_SEEDED = 10_000;
export const IDS_TARGETED = 1_000;
const ROUNDS = 5;
const WARMUP_ROUNDS = 1;
const API_MADE = 3;
const GOAL_MS = 2_000;
const DRAIN_TIMEOUT_MS = 120_000;

/** What the CRM process needs for the 10,000-row call; for startBenchStack's `processEnv`. */
export const CRM_BENCH_PROCESS_ENV = { crm: { BULK_MAX_ROWS: String(CUSTOMERS_SEEDED) } };

/** The stack; the seed, the checks and the floors connect to its database's `crm` schema. */
export type CrmBenchOptions = StackAccess;

type Tier = "silver" | "gold";
const other = (tier: Tier): Tier => tier === "silver" ? "gold" : "silver";

export interface BulkTierFigures extends BulkCallFigures {
  api: LatencyFigures;
  /** Seconds from each API answer until the relay had published its events, median. */
  outboxDrainSecondsMedian: number;
  /** Seconds after that until every consumer group of the CRM's topic had read them, median. */
  consumersCaughtUpSecondsMedian: number;
  floor: LatencyFigures & { statement: string };
  floorWithOutbox: LatencyFigures & { statement: string };
  apiOverFloorP50: number;
  apiOverFloorWithOutboxP50: number;
}

export interface CrmReport {
  date: string;
  machine: { cpus: number; deno: string };
  organizationId: string;
  database: string;
  seed: { customers: number; seedSeconds: number; vacuumAnalyzeSeconds: number; apiMade: number };
  byFilter: BulkTierFigures & { goalMsAtMost: number; goalMet: boolean };
  byIds: BulkTierFigures;
  note: string;
}

const figures = latencyFigures;

/** Seeds the customers in one statement, all silver. Returns the seconds it took. */
async function seedCustomers(sql: Sql, organizationId: string): Promise<number> {
  const started = performance.now();
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO customers (
        id, organization_id, company_name, email, phone, tier, tags, tax_exempt, tax_number,
        sales_rep_email, notes, created_at, updated_at
      )
      SELECT uuidv7(), ${organizationId}, 'Bench Customer ' || lpad(n::text, 5, '0'),
        'orders' || n || '@customer.bench.test', '+61 2 9555 ' || lpad((n % 10000)::text, 4, '0'),
        'silver',
        ARRAY['bench', (ARRAY['hospitality', 'sport', 'school', 'retail'])[1 + n % 4]],
        n % 10 = 0, CASE WHEN n % 3 = 0 THEN 'ABN ' || n END,
        'rep' || (n % 4) || '@bench.test',
        CASE WHEN n % 5 = 0 THEN 'Seeded by deno task bench' END,
        t.at, t.at
      FROM generate_series(1, ${CUSTOMERS_SEEDED}::int) AS n,
        LATERAL (SELECT now() - interval '1 day' + n * interval '1 millisecond') AS t(at)`;
  });
  return (performance.now() - started) / 1000;
}

const CRM_TOPIC = "printshop.crm";

/** Polls `pending` until it answers 0. Returns the seconds it took. */
async function waitFor(what: string, pending: () => Promise<number>): Promise<number> {
  const started = performance.now();
  while (true) {
    const n = await pending();
    if (n === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > DRAIN_TIMEOUT_MS) {
      throw new Error(`${what}: ${n} still pending after ${DRAIN_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits until the CRM's relay has published every outbox row, then until every consumer group
 * of the CRM's topic on the embedded bus (the quotes projection, webhooks) has read to its end,
 * so that the next timed step has the machine to itself. Seconds each wait took.
 */
async function settle(sql: Sql): Promise<{ relaySeconds: number; consumersSeconds: number }> {
  const relaySeconds = await waitFor("the CRM outbox relay", async () => {
    const [{ n }] = await sql<[{ n: number }]>`
      SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL AND quarantined_at IS NULL`;
    return n;
  });
  const consumersSeconds = await waitFor(`the consumers of ${CRM_TOPIC}`, async () => {
    const [{ n }] = await sql<[{ n: number }]>`
      SELECT count(*)::int AS n FROM eventbus.consumer_offsets o
      WHERE o.topic = ${CRM_TOPIC} AND o.position <
        (SELECT coalesce(max(seq), 0) FROM eventbus.messages WHERE topic = ${CRM_TOPIC})`;
    return n;
  });
  return { relaySeconds, consumersSeconds };
}

async function dbNow(sql: Sql): Promise<Date> {
  const [{ at }] = await sql<[{ at: Date }]>`SELECT clock_timestamp() AS at`;
  return at;
}

/** The outbox rows one call must have written: one `customer.updated` per row, new tier. */
async function checkOutbox(
  sql: Sql,
  organizationId: string,
  since: Date,
  expected: number,
  tier: Tier,
  what: string,
): Promise<void> {
  const [c] = await sql<[{ rows: number; customers: number; withTier: number }]>`
    SELECT count(*)::int AS rows, count(DISTINCT aggregate_id)::int AS customers,
      (count(*) FILTER (WHERE payload->>'tier' = ${tier}))::int AS "withTier"
    FROM outbox
    WHERE organization_id = ${organizationId} AND type = 'customer.updated'
      AND created_at >= ${since}`;
  if (c.rows !== expected || c.customers !== expected || c.withTier !== expected) {
    throw new Error(
      `${what}: the outbox gained ${c.rows} customer.updated rows for ${c.customers} ` +
        `customers, ${c.withTier} of them with tier ${tier}; expected ${expected} of each`,
    );
  }
}

/** The payload the floor writes: the customer as the API shows it, children empty. */
const PAYLOAD_SQL = `jsonb_build_object('id', u.id, 'companyName', u.company_name,
  'email', u.email, 'phone', u.phone, 'tier', u.tier, 'tags', to_jsonb(u.tags),
  'taxExempt', u.tax_exempt, 'taxNumber', u.tax_number,
  'defaultMarkupGroupId', u.default_markup_group_id, 'salesRepEmail', u.sales_rep_email,
  'notes', u.notes, 'customFields', u.custom_fields, 'isArchived', u.is_archived,
  'contacts', '[]'::jsonb, 'addresses', '[]'::jsonb, 'createdAt', u.created_at,
  'updatedAt', u.updated_at)`;

interface Target {
  label: string;
  /** The request's target for the rows now at `tier`. */
  body: (tier: Tier) => unknown;
  /** The rows the floors change: those now at `tier`. */
  where: (sql: Queryable, tier: Tier) => ReturnType<Queryable>;
  rows: number;
  /** The floors' statements, for the report. */
  whereText: string;
}

async function bulkTierBench(
  sql: Sql,
  gatewayUrl: string,
  headers: Record<string, string>,
  organizationId: string,
  target: Target,
): Promise<BulkTierFigures> {
  let tier: Tier = "silver";
  let requestBytes = 0;
  let responseBytes = 0;
  const apiTimes: number[] = [];
  const drains: number[] = [];
  const consumed: number[] = [];
  const floorTimes: number[] = [];
  const floorOutboxTimes: number[] = [];

  const throughApi = async (): Promise<number> => {
    const next = other(tier);
    const body = JSON.stringify({ target: target.body(tier), tier: next });
    requestBytes = new TextEncoder().encode(body).byteLength;
    const since = await dbNow(sql);
    const t0 = performance.now();
    const res = await fetch(`${gatewayUrl}/v1/customers/bulk/tier`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body,
    });
    const answer = await res.arrayBuffer();
    const elapsed = performance.now() - t0;
    responseBytes = answer.byteLength;
    const text = new TextDecoder().decode(answer);
    if (res.status !== 200) {
      throw new Error(`bulk tier (${target.label}) answered ${res.status}: ${text.slice(0, 500)}`);
    }
    const { data } = JSON.parse(text) as {
      data: { requested: number; affected: number; refused: number; failed: number };
    };
    if (data.requested !== target.rows || data.affected !== target.rows) {
      throw new Error(
        `bulk tier (${target.label}) ${tier} → ${next}: requested ${data.requested}, affected ` +
          `${data.affected}, refused ${data.refused}, failed ${data.failed}; expected ` +
          `${target.rows} affected`,
      );
    }
    const settled = await settle(sql);
    drains.push(settled.relaySeconds);
    consumed.push(settled.consumersSeconds);
    await checkOutbox(
      sql,
      organizationId,
      since,
      target.rows,
      next,
      `bulk tier (${target.label}) ${tier} → ${next}`,
    );
    tier = next;
    return elapsed;
  };

  const bare = async (withOutbox: boolean): Promise<number> => {
    const next = other(tier);
    const since = await dbNow(sql);
    const t0 = performance.now();
    const result = await sql.begin((tx) =>
      withOutbox
        ? tx`
          WITH u AS (
            UPDATE customers SET tier = ${next}, updated_at = now()
            WHERE ${target.where(tx, tier)}
            RETURNING *
          )
          INSERT INTO outbox (id, organization_id, type, aggregate_id, payload, created_at)
          SELECT uuidv7(), u.organization_id, 'customer.updated', u.id,
            ${tx.unsafe(PAYLOAD_SQL)}, clock_timestamp()
          FROM u ORDER BY u.id`
        : tx`
          UPDATE customers SET tier = ${next}, updated_at = now()
          WHERE ${target.where(tx, tier)}`
    );
    const elapsed = performance.now() - t0;
    if (result.count !== target.rows) {
      throw new Error(
        `the bare ${withOutbox ? "UPDATE + outbox INSERT" : "UPDATE"} (${target.label}) ` +
          `changed ${result.count} rows, not ${target.rows}`,
      );
    }
    await settle(sql);
    if (withOutbox) {
      await checkOutbox(sql, organizationId, since, target.rows, next, "the bare floor");
    }
    tier = next;
    return elapsed;
  };

  console.error(
    `[bench] POST /v1/customers/bulk/tier ${target.label}: ${WARMUP_ROUNDS} + ${ROUNDS} rounds ` +
      `of API call, bare UPDATE, bare UPDATE + outbox INSERT over ${target.rows} rows…`,
  );
  await settle(sql);
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const measured = round >= WARMUP_ROUNDS;
    const a = await throughApi();
    const f = await bare(false);
    const fo = await bare(true);
    if (measured) {
      apiTimes.push(a);
      floorTimes.push(f);
      floorOutboxTimes.push(fo);
    } else {
      drains.length = 0;
      consumed.length = 0;
    }
  }
  const apiFigures = figures(apiTimes);
  const floor = figures(floorTimes);
  const floorWithOutbox = figures(floorOutboxTimes);
  return {
    request: `POST /v1/customers/bulk/tier {target: ${target.label}, tier}`,
    rowsPerCall: target.rows,
    calls: ROUNDS,
    warmupCalls: WARMUP_ROUNDS,
    requestBytes,
    responseBytes,
    api: apiFigures,
    outboxDrainSecondsMedian: median(drains),
    consumersCaughtUpSecondsMedian: median(consumed),
    floor: {
      ...floor,
      statement: `BEGIN; UPDATE customers SET tier = $next, updated_at = now() WHERE ` +
        `${target.whereText}; COMMIT`,
    },
    floorWithOutbox: {
      ...floorWithOutbox,
      statement: `BEGIN; WITH u AS (UPDATE customers … WHERE ${target.whereText} RETURNING *) ` +
        `INSERT INTO outbox SELECT uuidv7(), …, 'customer.updated', u.id, ` +
        `jsonb_build_object(<the customer>) FROM u; COMMIT`,
    },
    apiOverFloorP50: apiFigures.p50Ms / floor.p50Ms,
    apiOverFloorWithOutboxP50: apiFigures.p50Ms / floorWithOutbox.p50Ms,
  };
}

/** A few customers through the API; a seeded one read back must look like them. */
async function checkShape(
  sql: Sql,
  gatewayUrl: string,
  headers: Record<string, string>,
  organizationId: string,
): Promise<void> {
  type Shown = Record<string, unknown> & { id: string; tier: string };
  let made: Shown | undefined;
  for (let i = 0; i < API_MADE; i++) {
    made = await api<Shown>(`${gatewayUrl}/v1/customers`, {
      method: "POST",
      headers,
      body: {
        companyName: `API Customer ${i}`,
        email: `api${i}@customer.bench.test`,
        tier: "bronze",
        tags: ["Bench", "API"],
      },
    });
  }
  const [seeded] = await sql<[{ id: string }]>`
    SELECT id FROM customers WHERE organization_id = ${organizationId} AND tier = 'silver'
    ORDER BY id LIMIT 1`;
  const read = await api<Shown>(`${gatewayUrl}/v1/customers/${seeded.id}`, { headers });
  const keys = (o: object): string => Object.keys(o).sort().join(",");
  if (keys(read) !== keys(made!) || read.tier !== "silver" || !Array.isArray(read.tags)) {
    throw new Error(
      `a seeded customer reads as ${JSON.stringify(read)}; an API-made one as ` +
        `${JSON.stringify(made)}: the seed does not have the service's shape`,
    );
  }
  const [{ tags }] = await sql<[{ tags: string[] }]>`
    SELECT tags FROM customers WHERE id = ${made!.id}`;
  if (tags.some((tag) => tag !== tag.toLowerCase())) {
    throw new Error(`the service stores tags as ${tags}; the seed writes them lower-cased`);
  }
}

/** Runs the whole CRM bench on a running stack and returns its figures. */
export async function runCrmBench(options: CrmBenchOptions): Promise<CrmReport> {
  const { organizationId, apiKey } = await benchOrganization(options, "CRM Bench Shop");
  const headers = { "x-api-key": apiKey };
  const sql = connect(options.databaseUrl, { schema: "crm", max: 2, applicationName: "bench-crm" });
  try {
    console.error(`[bench] seeding ${CUSTOMERS_SEEDED} customers with SQL…`);
    const seedSeconds = await seedCustomers(sql, organizationId);
    const vacuumStarted = performance.now();
    await sql.unsafe("VACUUM ANALYZE customers");
    const vacuumAnalyzeSeconds = (performance.now() - vacuumStarted) / 1000;
    await checkShape(sql, options.gatewayUrl, headers, organizationId);

    const byFilter = await bulkTierBench(sql, options.gatewayUrl, headers, organizationId, {
      label: `{filters: [tier eq <current>]} over ${CUSTOMERS_SEEDED}`,
      body: (tier) => ({ filters: [{ field: "tier", op: "eq", value: tier }] }),
      where: (tx, tier) => tx`organization_id = ${organizationId} AND tier = ${tier}`,
      rows: CUSTOMERS_SEEDED,
      whereText: "organization_id = $org AND tier = $current",
    });
    const ids = (await sql<{ id: string }[]>`
      SELECT id FROM customers WHERE organization_id = ${organizationId} AND tier = 'silver'
      ORDER BY created_at, id LIMIT ${IDS_TARGETED}`).map((r) => r.id);
    if (ids.length !== IDS_TARGETED) {
      throw new Error(`found ${ids.length} silver customers to target by id, not ${IDS_TARGETED}`);
    }
    const byIds = await bulkTierBench(sql, options.gatewayUrl, headers, organizationId, {
      label: `{ids: [${IDS_TARGETED} ids]}`,
      body: () => ({ ids }),
      where: (tx) => tx`organization_id = ${organizationId} AND id = ANY(${ids}::uuid[])`,
      rows: IDS_TARGETED,
      whereText: "organization_id = $org AND id = ANY($ids)",
    });
    const [{ version }] = await sql<[{ version: string }]>`SELECT version()`;
    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      organizationId,
      database: `${version.split(" on ")[0]} (embedded, fsync=off, synchronous_commit=off)`,
      seed: { customers: CUSTOMERS_SEEDED, seedSeconds, vacuumAnalyzeSeconds, apiMade: API_MADE },
      byFilter: { ...byFilter, goalMsAtMost: GOAL_MS, goalMet: byFilter.api.p50Ms <= GOAL_MS },
      byIds,
      note: "customers are seeded without contacts or addresses. Each API call is checked: " +
        "requested = affected = the rows targeted, and as many customer.updated outbox rows " +
        "with the new tier. The CRM runs with BULK_MAX_ROWS = " +
        `${CRM_BENCH_PROCESS_ENV.crm.BULK_MAX_ROWS}; the gateway's limits still report its own. ` +
        "Rounds interleave API call, bare UPDATE and bare UPDATE + outbox INSERT, each flipping " +
        "the tier, with the relay drained and the topic's consumers caught up before each",
    };
  } finally {
    await sql.end();
  }
}

/** The CRM table of `deno task bench`. */
export function formatCrmReport(report: CrmReport, writtenTo: string): string {
  const { byFilter: f, byIds: i } = report;
  const num = (n: number, digits = 1, width = 13): string => n.toFixed(digits).padStart(width);
  const ratio = (n: number): string => `${n.toFixed(2)}×`.padStart(13);
  const row = (label: string, b: BulkTierFigures): string =>
    `${label.padEnd(42)}${num(b.api.p50Ms)}${num(b.api.maxMs)}${num(b.floor.p50Ms)}` +
    `${num(b.floorWithOutbox.p50Ms)}${ratio(b.apiOverFloorP50)}` +
    `${ratio(b.apiOverFloorWithOutboxP50)}`;
  const kb = (bytes: number): string => `${(bytes / 1000).toFixed(0)} kB`;
  return [
    "",
    `CRM: one organisation, through the gateway; floors are bare postgres.js on the same ` +
    `database (${report.database})`,
    `  seeded ${report.seed.customers} customers with SQL in ${
      report.seed.seedSeconds.toFixed(1)
    } s, VACUUM ANALYZE ${report.seed.vacuumAnalyzeSeconds.toFixed(1)} s; ` +
    `${report.seed.apiMade} more through the API`,
    "",
    `${"POST /v1/customers/bulk/tier".padEnd(42)}${"p50 ms".padStart(13)}${"max ms".padStart(13)}${
      "floor p50".padStart(13)
    }${"+outbox p50".padStart(13)}${"API÷floor".padStart(13)}${"API÷+outbox".padStart(13)}`,
    row(`by filter, ${f.rowsPerCall} rows`, f),
    row(`by ids, ${i.rowsPerCall} rows`, i),
    "",
    `by filter: ${f.api.p50Ms.toFixed(0)} ms per call (goal ≤ ${f.goalMsAtMost} ms: ${
      f.goalMet ? "met" : "NOT met"
    }); ${f.calls} calls after ${f.warmupCalls} warm-up; answer ${kb(f.responseBytes)}; ` +
    `then the relay published its ${f.rowsPerCall} events in ` +
    `${f.outboxDrainSecondsMedian.toFixed(1)} s and the topic's consumers read them in ` +
    `${f.consumersCaughtUpSecondsMedian.toFixed(1)} s more (medians, untimed)`,
    `by ids: request ${kb(i.requestBytes)}, answer ${kb(i.responseBytes)}; relay ` +
    `${i.outboxDrainSecondsMedian.toFixed(1)} s, consumers ` +
    `${i.consumersCaughtUpSecondsMedian.toFixed(1)} s more`,
    `every call checked: affected = rows targeted, one customer.updated outbox row each`,
    `floors: one UPDATE in a transaction; "+outbox" also inserts the outbox rows in the same ` +
    `statement`,
    `Figures written to ${writtenTo}`,
  ].join("\n");
}

if (import.meta.main) {
  const bench = await startBenchStack("printshop-bench-crm-", {
    processEnv: CRM_BENCH_PROCESS_ENV,
  });
  try {
    const report = await runCrmBench(stackAccess(bench));
    await writeResults("bench-results/crm.json", report);
    console.log(formatCrmReport(report, "bench-results/crm.json"));
  } finally {
    await bench.stop();
  }
}

/**
 * `deno task bench:scale` (issue 32): how each operation's cost grows with the data, measured at
 * three sizes of one database, ×1, ×3 and ×10.
 *
 * Boots the real stack on a throwaway embedded PostgreSQL (scripts/bench/stack.ts; the CRM
 * process with BULK_MAX_ROWS = 10,000, as scripts/bench_crm.ts runs it), makes one shop through
 * the admin API and, through the gateway, what its seeded rows point at (a default garment
 * markup group, a tax rate, two customer custom fields, a webhook whose delivery history is
 * seeded), and a crowd of 1,000 other organisations. Then for each size:
 *
 * 1. seeds the difference from the size before with set-based SQL (scripts/bench/scale_seed.ts:
 *    10,000 → 100,000 full quotes beside the crowd's 1,000 × 100, customers with contacts, tags
 *    and custom-field values, vendors, tasks, proofs, 10,000 → 100,000 catalogue variants with a
 *    stock ledger of 100,000 → 1,000,000 rows, webhook deliveries), then VACUUM ANALYZE;
 * 2. measures every operation through the gateway (scripts/bench/scale_ops.ts and
 *    scale_writes.ts): each is warmed up, then timed over sequential requests (p50, p99).
 *
 * 3. after ×10, its processes' RSS is taken, then the ratios part (scripts/bench_ratios.ts, the
 *    product against its floors, as `deno task bench` runs it) runs again in the shop with its
 *    ×10 rows, its floors copying them, so its goals can be set beside that run's.
 *
 * Prints per operation the three sizes and the ratio ×10 p50 ÷ ×1 p50 against its goal, and
 * writes bench-results/scale.json as `{ operations: [{ name, goal, sizes: [{ rows, p50, p99 }],
 * ratio }] }` with, beside it, each operation's details, the PostgreSQL memory settings, the
 * database's size on disk after each seed, each process's RSS after the run and the wall time.
 * Nothing is asserted about speed; an operation that failed makes the run exit non-zero.
 *
 * Knobs: `BENCH_SCALE_FACTOR` shrinks every size (0.01 runs in a minute or two),
 * `BENCH_SCALE_SAMPLES` (30) and `BENCH_SCALE_WARMUP` (3) set the calls per operation and size,
 * `BENCH_SCALE_OP_BUDGET_S` (6) the seconds after which a slow operation's samples are cut short
 * (10 kept at least: a search over 100,000 quotes would otherwise take minutes alone). At 50 / 5
 * / 10 s the run took 34.8 minutes (12 of them seeding) on a shared 2-core machine with other
 * sessions' test suites beside it; these defaults cut the measuring by about 40 % to bring it
 * under 30. `BENCH_SCALE_RATIOS=0` leaves the ratios part out (`BENCH_DURATION_S`, 10, sets its
 * seconds per target, as in `deno task bench`). `BENCH_SCALE_OUT` says where the JSON goes; `BENCH_SCALE_HOLD_FILE` keeps the stack
 * up after the run (for EXPLAIN on the ×10 data) until that file is removed.
 */
import { connect, type Sql } from "@printshop/shared/db";
import { CRM_BENCH_PROCESS_ENV } from "./bench_crm.ts";
import { runRatiosBench } from "./bench_ratios.ts";
import { type Footprint, footprint, measureIdle, RSS_AFTER_GOAL_MB } from "./bench/footprint.ts";
import { formatRatiosReport, type RatiosReport } from "./bench/ratios_report.ts";
import { GARMENT_BANDS } from "./bench/quotes_shape.ts";
import { startReceiver } from "./bench/receiver.ts";
import { writeResults } from "./bench/results.ts";
import {
  api,
  benchOrganization,
  type BenchStack,
  stackAccess,
  startBenchStack,
} from "./bench/stack.ts";
import {
  dataOf,
  listRoutes,
  measure,
  type OperationPlan,
  readPlans,
  type SizeContext,
  surveyLists,
  timedCall,
} from "./bench/scale_ops.ts";
import { unpagedLists } from "./bench/scale_lists.ts";
import {
  formatScaleTable,
  type OperationDetail,
  type OperationResult,
  type ScaleOperation,
  scaleOperations,
} from "./bench/scale_report.ts";
import {
  type CrowdOrganization,
  growTo,
  prepareCrowd,
  type SeedSeconds,
  type SeedShop,
  vacuumAnalyze,
} from "./bench/scale_seed.ts";
import { seededId } from "./bench/scale_seed_quotes.ts";
import { emptySize, MULTIPLES, scaleFactor, type ScaleSize, sizeAt } from "./bench/scale_sizes.ts";
import {
  bulkTierPlan,
  fanoutPlan,
  settle,
  settled,
  type TierState,
  writePlans,
  type WriteSetup,
} from "./bench/scale_writes.ts";

export const SCALE_RESULTS = "bench-results/scale.json";

export interface ScaleOptions {
  factor: number;
  samples: number;
  warmup: number;
  /** Seconds one operation may take at one size before its samples are cut short. */
  budgetSeconds: number;
  /** Whether the ratios part runs again in the shop once it is at ×10 (part 4 of the issue). */
  ratios: boolean;
}

/** The options from the environment (BENCH_SCALE_*). */
export function scaleOptionsFromEnv(): ScaleOptions {
  const whole = (name: string, fallback: number, least: number): number => {
    const text = Deno.env.get(name);
    const n = Number(text ?? fallback);
    if (!Number.isInteger(n) || n < least) {
      throw new Error(`${name} must be a whole number ≥ ${least}, not ${text}`);
    }
    return n;
  };
  return {
    factor: scaleFactor(),
    samples: whole("BENCH_SCALE_SAMPLES", 30, 1),
    warmup: whole("BENCH_SCALE_WARMUP", 3, 0),
    budgetSeconds: whole("BENCH_SCALE_OP_BUDGET_S", 6, 1),
    ratios: whole("BENCH_SCALE_RATIOS", 1, 0) !== 0,
  };
}

export interface ScaleReport {
  operations: ScaleOperation[];
  details: OperationDetail[];
  date: string;
  machine: { cpus: number; deno: string };
  options: ScaleOptions;
  sizes: (ScaleSize & {
    seedSeconds: SeedSeconds;
    vacuumAnalyzeSeconds: number;
    databaseBytes: number;
    measureSeconds: number;
    /** Of which waiting, untimed, for events to be published and consumed. */
    settleSeconds: number;
    /** /proc/loadavg's 1-minute figure before and after measuring: the box is shared. */
    loadAverage: { before: number; after: number };
  })[];
  postgres: { version: string; settings: Record<string, string>; note: string };
  /** How long the ratios part took, within wallSeconds. */
  ratiosSeconds: number;
  /** VmRSS of every stack process after the run, against the issue's 120 MB. */
  rssAfterRun: Footprint;
  /**
   * The ratios part (scripts/bench_ratios.ts) run after the measuring, in the shop as it is at
   * ×10 (its idle figures over a short window then); null when BENCH_SCALE_RATIOS=0 or it failed.
   */
  ratiosAtLargest: RatiosReport | null;
  notMeasured: string[];
  wallSeconds: number;
  note: string;
}

/** The PostgreSQL memory settings the run used, as SHOW reports them. */
async function postgresSettings(sql: Sql): Promise<Record<string, string>> {
  const settings: Record<string, string> = {};
  for (
    const name of ["shared_buffers", "work_mem", "effective_cache_size", "maintenance_work_mem"]
  ) {
    const [row] = await sql.unsafe<Record<string, string>[]>(`SHOW ${name}`);
    settings[name] = row![name]!;
  }
  return settings;
}

/** What the shop's seeded rows point at, made through the gateway as a shop would. */
async function prepareShop(
  bench: BenchStack,
  receiverUrl: string,
  largest: ScaleSize,
): Promise<{ shop: SeedShop; headers: Record<string, string>; apiKey: string }> {
  const access = stackAccess(bench);
  const { organizationId, apiKey, apiKeyId } = await benchOrganization(access, "Scale Bench Shop");
  const headers = { "x-api-key": apiKey };
  const g = access.gatewayUrl;
  const post = <T>(path: string, body: unknown): Promise<T> =>
    api<T>(`${g}${path}`, { method: "POST", headers, body });
  const garment = await post<{ id: string }>("/v1/markup-groups", {
    name: "Garments (bench)",
    lane: "garment",
    isDefault: true,
    bands: GARMENT_BANDS,
  });
  const taxRate = await post<{ id: string; name: string; ratePct: number }>("/v1/tax-rates", {
    name: "GST",
    ratePct: 10,
    isDefault: true,
  });
  const region = await post<{ id: string }>("/v1/custom-fields", {
    name: "Region",
    type: "select",
    entity: "customer",
    options: ["North", "South", "East", "West"],
  });
  const manager = await post<{ id: string }>("/v1/custom-fields", {
    name: "Account manager",
    type: "text",
    entity: "customer",
  });
  // Its event is never fired by the bench: its deliveries are the seeded history only.
  const history = await post<{ id: string }>("/v1/webhooks", {
    url: `${receiverUrl}/history`,
    event: "proof.viewed",
  });
  for (const name of ["Staff polo", "Event tee", "Hoodie pack"]) {
    await post("/v1/prebuilt-items", { name: `${name} (bench)` });
  }
  return {
    headers,
    apiKey,
    shop: {
      organizationId,
      apiKeyId,
      garmentGroupId: garment.id,
      taxRate,
      customFieldIds: { region: region.id, accountManager: manager.id },
      historyWebhookId: history.id,
      // An hour back: the newest ledger rows of a variant come seconds after it.
      until: new Date(Date.now() - 3_600_000).toISOString(),
      largest,
    },
  };
}

/** The crowd: `count` organisations through the admin API, with a markup group and tax rate. */
async function prepareCrowdOrganizations(
  bench: BenchStack,
  sql: Sql,
  shop: SeedShop,
  count: number,
): Promise<CrowdOrganization[]> {
  const headers = { authorization: `Bearer ${bench.adminToken}` };
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const org = await api<{ id: string }>(`${bench.stack.adminUrl}/admin/organizations`, {
      method: "POST",
      headers,
      body: { name: `Scale Crowd ${i}` },
    });
    ids.push(org.id);
  }
  return await prepareCrowd(sql, shop, ids);
}

/** What the writes need, read once the first size is seeded. */
async function writeSetup(
  ctx: SizeContext,
  sql: Sql,
  shop: SeedShop,
  receiver: ReturnType<typeof startReceiver>,
): Promise<WriteSetup> {
  const org = shop.organizationId;
  const quoteId = seededId(org, "quote", 1);
  type Tree = {
    groups: { lines: { variants: { id: string; quantity: number; markupSource: string }[] }[] }[];
  };
  const quote = dataOf<Tree>(
    (await timedCall(`${ctx.gatewayUrl}/v1/quotes/${quoteId}`, { headers: ctx.headers })).text,
  );
  const groupVariant = quote.groups.flatMap((g) => g.lines).flatMap((l) => l.variants)
    .find((v) => v.markupSource === "group");
  if (!groupVariant) throw new Error(`seeded quote ${quoteId} has no group-priced variant`);
  return {
    sql,
    receiver,
    catalogueItemId: seededId(org, "item", 1),
    quoteId,
    groupVariant: { id: groupVariant.id, quantity: groupVariant.quantity },
    longVariantId: seededId(org, "variant", 1),
    vendorIds: Array.from(
      { length: Math.min(50, ctx.size.vendors) },
      (_, i) => seededId(org, "vendor", i + 1),
    ),
  };
}

/** The 1-minute load average (other sessions share the machine), NaN where unreadable. */
async function loadAverage(): Promise<number> {
  try {
    return Number((await Deno.readTextFile("/proc/loadavg")).split(" ")[0]);
  } catch {
    return NaN;
  }
}

const fmtMs = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : "—");

/**
 * `BENCH_SCALE_HOLD_FILE`: with the run measured, writes the report beside that file and the
 * database's URL into it, and keeps the stack (and its ×10 database) up until the file is
 * removed, so the statements of an operation over its goal can be explained on the real data.
 */
async function holdIfAsked(databaseUrl: string, report: ScaleReport): Promise<void> {
  const file = Deno.env.get("BENCH_SCALE_HOLD_FILE");
  if (!file) return;
  await writeResults(`${file}.json`, report);
  await Deno.writeTextFile(file, databaseUrl + "\n");
  console.error(`[scale] holding the stack: ${file} names the database; remove it to finish`);
  for (;;) {
    try {
      await Deno.stat(file);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Runs the whole bench and answers its report (not yet written). */
export async function runScaleBench(options: ScaleOptions): Promise<ScaleReport> {
  const started = performance.now();
  const bench = await startBenchStack("printshop-bench-scale-", {
    processEnv: CRM_BENCH_PROCESS_ENV,
  });
  const receiver = startReceiver();
  const sql = connect(bench.databaseUrl, {
    schema: "public",
    max: 2,
    applicationName: "bench-scale",
  });
  try {
    const sizes = MULTIPLES.map((m) => sizeAt(m, options.factor));
    const largest = sizes.at(-1)!;
    const { shop, headers, apiKey } = await prepareShop(bench, receiver.url, largest);
    console.error(`[scale] ${sizes[0]!.otherOrganizations} other organisations…`);
    const crowd = await prepareCrowdOrganizations(bench, sql, shop, sizes[0]!.otherOrganizations);
    const lists = listRoutes();
    const parents = {
      garmentVariantId: seededId(shop.organizationId, "variant", 1),
      webhookId: shop.historyWebhookId,
    };
    const parentNames = { garmentVariantId: "long-ledger variant", webhookId: "seeded webhook" };
    const tier: TierState = { tier: "silver" };
    const bulkRounds = {
      warmup: Math.min(1, options.warmup),
      samples: Math.max(1, Math.min(3, Math.round(options.samples / 10))),
    };
    const fanoutRounds = {
      warmup: Math.min(2, options.warmup),
      samples: Math.max(1, Math.min(10, Math.round(options.samples / 5))),
    };

    let plans: OperationPlan[] = [];
    const notMeasured: string[] = unpagedLists().map((p) => `GET ${p}: takes no paging`);
    const figures = new Map<string, OperationResult>();
    const sizeReports: ScaleReport["sizes"] = [];
    let previous = emptySize();
    for (const size of sizes) {
      console.error(`[scale ×${size.multiple}] seeding: ${JSON.stringify(size)}`);
      const seedSeconds = await growTo(sql, shop, crowd, previous, size);
      const vacuumAnalyzeSeconds = await vacuumAnalyze(sql);
      const [{ bytes }] = await sql<[{ bytes: number }]>`
        SELECT pg_database_size(current_database())::float8 AS bytes`;
      console.error(
        `[scale ×${size.multiple}] seeded in ${
          Object.values(seedSeconds).reduce((a, b) => a + b, 0).toFixed(1)
        } s (${
          JSON.stringify(seedSeconds, (_, v) => typeof v === "number" ? +v.toFixed(1) : v)
        }), ` +
          `VACUUM ANALYZE ${vacuumAnalyzeSeconds.toFixed(1)} s, database ${
            (bytes / 2 ** 30).toFixed(2)
          } GiB`,
      );
      previous = size;
      await settle(sql);

      const measureStarted = performance.now();
      const loadBefore = await loadAverage();
      const settledBefore = settled.seconds;
      const ctx: SizeContext = {
        gatewayUrl: bench.stack.gatewayUrl,
        headers,
        size,
        samples: options.samples,
        warmup: options.warmup,
        budgetSeconds: options.budgetSeconds,
        totals: new Map(),
        lastPages: new Map(),
        parents,
        // The shop's garment markup group: one row, the same at every size.
        paired: async () =>
          (await timedCall(`${bench.stack.gatewayUrl}/v1/markup-groups/${shop.garmentGroupId}`, {
            headers,
          })).ms,
      };
      await surveyLists(ctx, lists);
      if (plans.length === 0) {
        const reads = await readPlans(ctx, {
          lists,
          parentNames,
          farPageMinRows: Math.max(1, Math.round(1_000 * options.factor)),
        });
        notMeasured.push(...reads.skipped);
        const setup = await writeSetup(ctx, sql, shop, receiver);
        plans = [
          ...reads.plans,
          ...writePlans(setup),
          bulkTierPlan(sql, tier, bulkRounds),
          fanoutPlan(setup, fanoutRounds),
        ];
        console.error(`[scale] ${plans.length} operations`);
      }
      for (const plan of plans) {
        const result = await measure(plan, ctx);
        let entry = figures.get(plan.name);
        if (!entry) {
          entry = { name: plan.name, kind: plan.kind, counted: plan.counted ?? false, sizes: [] };
          figures.set(plan.name, entry);
        }
        entry.sizes.push(result);
        console.error(
          `[scale ×${size.multiple}] ${plan.name}: rows ${result.rows}, p50 ${
            fmtMs(result.p50)
          } ms, ` +
            `p99 ${fmtMs(result.p99)} ms${result.error ? `, FAILED: ${result.error}` : ""}`,
        );
      }
      sizeReports.push({
        ...size,
        seedSeconds,
        vacuumAnalyzeSeconds,
        databaseBytes: bytes,
        measureSeconds: (performance.now() - measureStarted) / 1000,
        settleSeconds: settled.seconds - settledBefore,
        loadAverage: { before: loadBefore, after: await loadAverage() },
      });
    }

    const [{ version }] = await sql<[{ version: string }]>`SELECT version()`;
    const { operations, details } = scaleOperations([...figures.values()]);
    const rssAfterRun = await footprint(bench, RSS_AFTER_GOAL_MB);
    // Part 4: the ratios part's goals, in the shop now that it holds ×10 (the floors copy its
    // rows), to set beside `deno task bench`'s run in a shop of a few hundred quotes. A failure
    // is reported and the scale figures still stand.
    const ratiosStarted = performance.now();
    const ratiosAtLargest = !options.ratios ? null : await (async () => {
      console.error(`[scale] the ratios part in the shop at ×${largest.multiple}…`);
      return await runRatiosBench(bench, {
        idle: await measureIdle(bench, 5),
        organization: { organizationId: shop.organizationId, apiKey },
      });
    })().catch((error) => {
      console.error(`[scale] the ratios part at ×${largest.multiple} failed: ${error}`);
      return null;
    });
    const report: ScaleReport = {
      operations,
      details,
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      options,
      sizes: sizeReports,
      postgres: {
        version: version.split(" on ")[0]!,
        settings: await postgresSettings(sql),
        note: "the embedded cluster's defaults (no setting changed for the bench); fsync, " +
          "synchronous_commit and full_page_writes off (a throwaway cluster)",
      },
      rssAfterRun,
      ratiosAtLargest,
      ratiosSeconds: (performance.now() - ratiosStarted) / 1000,
      notMeasured,
      wallSeconds: (performance.now() - started) / 1000,
      note: "one shop grown ×1 → ×3 → ×10 in one database (the difference seeded each time), " +
        "VACUUM ANALYZE after each seed; p50/p99 in ms over sequential requests through the " +
        "gateway after a warm-up; first pages at limit 20, far pages 1,000 pages of 10 in, cursor " +
        "walks at limit 200 (the last request timed again and again); rows = what the " +
        "operation ranges over (the list's totalCount or walk, the table's rows for a write)",
    };
    await holdIfAsked(bench.databaseUrl, report);
    return report;
  } finally {
    await sql.end();
    await receiver.stop();
    await bench.stop();
  }
}

if (import.meta.main) {
  const options = scaleOptionsFromEnv();
  const out = Deno.env.get("BENCH_SCALE_OUT") ?? SCALE_RESULTS;
  const report = await runScaleBench(options);
  await writeResults(out, report);
  console.log(formatScaleTable(report.operations, report.details, MULTIPLES));
  const gib = (b: number): string => `${(b / 2 ** 30).toFixed(2)} GiB`;
  console.log(
    `\nPostgreSQL ${report.postgres.version}: ${
      Object.entries(report.postgres.settings).map(([k, v]) => `${k}=${v}`).join(", ")
    }`,
  );
  console.log(
    `load average (1 min) before/after measuring: ${
      report.sizes.map((s) => `×${s.multiple} ${s.loadAverage.before}/${s.loadAverage.after}`)
        .join(", ")
    }`,
  );
  console.log(
    `database on disk after each seed: ${
      report.sizes.map((s) => `×${s.multiple} ${gib(s.databaseBytes)}`).join(", ")
    }`,
  );
  console.log(
    `RSS after the run (goal ≤ ${report.rssAfterRun.goalMbAtMost} MB): ${
      Object.entries(report.rssAfterRun.rssMb).map(([k, v]) => {
        const parts = report.rssAfterRun.partsMb?.[k];
        const of = parts
          ? ` (files ${parts.fileMb.toFixed(0)}, anonymous ${parts.anonMb.toFixed(0)}, ` +
            `of which malloc's heap ${parts.mallocHeapMb.toFixed(0)})`
          : "";
        return `${k} ${v?.toFixed(0) ?? "—"}${of}`;
      }).join(", ")
    }`,
  );
  if (report.ratiosAtLargest) {
    console.log(
      `\nThe ratios part in the shop at ×${MULTIPLES.at(-1)} (${
        report.ratiosAtLargest.floors.read.rows.toLocaleString("en")
      } quotes), ${(report.ratiosSeconds / 60).toFixed(1)} min:`,
    );
    console.log(formatRatiosReport(report.ratiosAtLargest, out));
  } else if (options.ratios) console.log("\nThe ratios part at ×10 failed (see the log above).");
  if (report.notMeasured.length > 0) console.log(`not measured: ${report.notMeasured.join("; ")}`);
  console.log(
    `\ndeno task bench:scale: ${
      (report.wallSeconds / 60).toFixed(1)
    } min (factor ${options.factor}, ` +
      `${options.samples} samples after ${options.warmup} warm-up); figures in ${out}`,
  );
  const failed = report.details.filter((d) => d.sizes.some((s) => s.error));
  if (failed.length > 0) {
    console.error(`${failed.length} operations failed:`);
    for (const d of failed) {
      console.error(`  ${d.name}: ${d.sizes.map((s) => s.error).filter(Boolean).join(" | ")}`);
    }
    Deno.exit(1);
  }
}

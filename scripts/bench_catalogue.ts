/**
 * The catalogue part of `deno task bench` (imported by scripts/bench.ts, run on its stack; or
 * alone, on a stack of its own booted by scripts/bench_stack.ts, with
 * `deno run -A scripts/bench_catalogue.ts`). Every API figure is taken through the gateway with
 * one organisation's key (ALL_SCOPES, rate limit lifted) and stands beside a floor measured in
 * the same run: the same database work done bare through postgres.js on the `catalogue` schema.
 *
 * 1. Bulk create: `POST /v1/garment-variants/bulk/create` with BULK_MAX_ROWS rows (read from
 *    GET /v1/reference/limits), each call on a fresh catalogue item; rows with `stockOnHand`
 *    (the service also writes an opening ledger row per variant) and, for context, without it.
 *    Floor: the same rows in one bare `INSERT … SELECT FROM unnest(…)` in one transaction.
 * 2. Paging: `BENCH_CATALOGUE_ITEMS` (100,000) catalogue items seeded by SQL (generate_series;
 *    pairs share created_at so the id tie-break is exercised), then every page of
 *    `GET /v1/catalogue?limit=200` following `nextCursor` to the end. "A catalogue of 100,000
 *    variants" is read as 100,000 catalogue items, since this cursor list pages items; no
 *    variant rows are seeded under them. Per-page p50/p99, the first 10 pages' median against
 *    the last 10's; floor: the same keyset query, `(created_at, id) > ($2, $3)`, bare. Both walks
 *    must return every row exactly once, or the run stops.
 * 3. Stock: 16 concurrent loops posting +1 `received` adjustments to one variant for
 *    BENCH_DURATION_S; the variant's final `stockOnHand` must be the opening figure plus the
 *    201 answers (and the ledger must hold that many rows), or the run stops. Floor: 16
 *    postgres.js connections each looping `BEGIN; SELECT … FOR UPDATE; UPDATE; INSERT ledger
 *    row; COMMIT` on one other variant, checked the same way.
 *
 * Nothing is asserted about speed; the ratios API ÷ floor are reported.
 */
import { connect, type Sql } from "@printshop/shared/db";
import { uuidv7 } from "@printshop/shared/ids";
import { type LatencyFigures, latencyFigures, median, percentile } from "./bench_stats.ts";
import { api, BENCH_DURATION_S, benchOrganization, startBenchStack } from "./bench_stack.ts";

/** `BENCH_CATALOGUE_ITEMS` seeds fewer (or more) catalogue items, e.g. for a quick try. */
export const CATALOGUE_ITEMS_SEEDED = Number(Deno.env.get("BENCH_CATALOGUE_ITEMS") ?? 100_000);
if (!Number.isInteger(CATALOGUE_ITEMS_SEEDED) || CATALOGUE_ITEMS_SEEDED < 1) {
  throw new Error(
    `BENCH_CATALOGUE_ITEMS must be a whole number ≥ 1, not ${
      Deno.env.get("BENCH_CATALOGUE_ITEMS")
    }`,
  );
}
const BULK_CALLS = 10;
const BULK_WARMUP = 2;
const PAGE = 200;
/** Pages fetched (and thrown away) before the measured walk, so page 1 is not a cold start. */
const PAGE_WARMUP = 20;
/** Pages at each end whose medians are compared. */
const ENDS = 10;
const WRITERS = 16;
const STOCK_OPENING = 10;
const SIZES = ["XS", "S", "M", "L", "XL", "2XL", "3XL", "4XL", "5XL", "OSFA"] as const;
/** The columns GET /v1/catalogue reads (services/catalogue/store/items.ts). */
const ITEM_COLUMNS = "id, style_code, name, brand, description, category, supplier_vendor_id, " +
  "fabric, weight_gsm, images, is_discontinued, external_id, source, buy_price, created_at, " +
  "updated_at";
export const PAGING_READING = `"a catalogue of 100,000 variants" is read as 100,000 catalogue ` +
  `items (styles) seeded by SQL, without variant rows: GET /v1/catalogue, the cursor list, ` +
  `pages items and embeds no variants`;

export interface CatalogueBenchOptions {
  gatewayUrl: string;
  adminUrl: string;
  adminToken: string;
  /** The stack's database; the seed and the floors connect to its `catalogue` schema. */
  databaseUrl: string;
  durationS: number;
}

export interface WalkFigures extends LatencyFigures {
  pages: number;
  rows: number;
  distinctIds: number;
  totalSeconds: number;
  firstPagesMedianMs: number;
  lastPagesMedianMs: number;
  lastOverFirst: number;
  /** Median page time in each tenth of the walk, shallowest first: where the cost goes. */
  tenthsMedianMs: number[];
}

export interface WritersFigures {
  writers: number;
  durationS: number;
  adjustments: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers other than 201 (API) or failed transactions (floor), by status or error. */
  refused: Record<string, number>;
  openingStock: number;
  finalStock: number;
  ledgerRows: number;
}

export interface CatalogueReport {
  date: string;
  machine: { cpus: number; deno: string };
  organizationId: string;
  limits: { pageSizeMax: number; bulkMaxRows: number; maxBodyBytes: number };
  database: string;
  bulkCreate: {
    request: string;
    rowsPerCall: number;
    calls: number;
    warmupCalls: number;
    requestBytes: number;
    responseBytes: number;
    withStock: LatencyFigures;
    withoutStock: LatencyFigures;
    floor: LatencyFigures & { statement: string };
    apiOverFloorP50: { withStock: number; withoutStock: number };
    note: string;
  };
  paging: {
    reading: string;
    request: string;
    seed: { items: number; seedSeconds: number; vacuumAnalyzeSeconds: number };
    responseBytes: { median: number; max: number };
    api: WalkFigures;
    floor: WalkFigures & { statement: string };
    apiOverFloorP50: number;
    note: string;
  };
  stock: {
    request: string;
    api: WritersFigures & { variantId: string };
    floor: WritersFigures & { variantId: string; statements: string };
    apiOverFloor: { throughput: number; p50: number };
    note: string;
  };
}

const figures = latencyFigures;

interface Row {
  color: string;
  size: string;
  stockOnHand: number;
}

/** BULK_MAX_ROWS distinct colour × size rows: ten sizes per colour. */
function bulkRows(count: number): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    color: `Colour ${String(Math.floor(i / SIZES.length) + 1).padStart(4, "0")}`,
    size: SIZES[i % SIZES.length]!,
    stockOnHand: 1 + (i * 7) % 50,
  }));
}

async function bulkBench(
  sql: Sql,
  gatewayUrl: string,
  headers: Record<string, string>,
  organizationId: string,
  rowsPerCall: number,
): Promise<CatalogueReport["bulkCreate"]> {
  const rows = bulkRows(rowsPerCall);
  const newItem = async (label: string): Promise<{ id: string; styleCode: string }> =>
    await api(`${gatewayUrl}/v1/catalogue`, {
      method: "POST",
      headers,
      body: { styleCode: `BULK-${label}`, name: `Bulk bench ${label}`, brand: "Bench" },
    });

  let requestBytes = 0;
  let responseBytes = 0;
  const throughApi = async (withStock: boolean): Promise<LatencyFigures> => {
    const times: number[] = [];
    for (let i = 0; i < BULK_WARMUP + BULK_CALLS; i++) {
      const item = await newItem(`${withStock ? "stock" : "plain"}-${i}`);
      const body = JSON.stringify({
        input: rows.map((r) => ({
          garmentCatalogueItemId: item.id,
          color: r.color,
          size: r.size,
          ...(withStock ? { stockOnHand: r.stockOnHand } : {}),
        })),
      });
      if (withStock) requestBytes = new TextEncoder().encode(body).byteLength;
      const t0 = performance.now();
      const res = await fetch(`${gatewayUrl}/v1/garment-variants/bulk/create`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body,
      });
      const answer = await res.arrayBuffer();
      const elapsed = performance.now() - t0;
      const text = new TextDecoder().decode(answer);
      if (res.status !== 201) throw new Error(`bulk create answered ${res.status}: ${text}`);
      const created = (JSON.parse(text) as { data: unknown[] }).data;
      if (created.length !== rowsPerCall) {
        throw new Error(`bulk create answered ${created.length} variants for ${rowsPerCall} rows`);
      }
      if (withStock) responseBytes = answer.byteLength;
      if (i >= BULK_WARMUP) times.push(elapsed);
    }
    return figures(times);
  };
  console.error(
    `[bench] POST /v1/garment-variants/bulk/create: ${BULK_CALLS} calls of ${rowsPerCall} rows ` +
      `with stockOnHand, ${BULK_CALLS} without, ${BULK_CALLS} bare INSERTs…`,
  );
  const withStock = await throughApi(true);
  const withoutStock = await throughApi(false);

  // The floor: the same rows (ids made by the client, as the service does), one statement.
  const statement = "BEGIN; INSERT INTO garment_variants (id, organization_id, " +
    "garment_catalogue_item_id, style_code, color, size, size_key, stock_on_hand) SELECT … FROM " +
    "unnest($ids, $colors, $sizes, $stocks); COMMIT";
  const floorTimes: number[] = [];
  for (let i = 0; i < BULK_WARMUP + BULK_CALLS; i++) {
    const item = await newItem(`floor-${i}`);
    const ids = rows.map(() => uuidv7());
    const colors = rows.map((r) => r.color);
    const sizes = rows.map((r) => r.size);
    const stocks = rows.map((r) => r.stockOnHand);
    const t0 = performance.now();
    const inserted = await sql.begin((tx) =>
      tx`
        INSERT INTO garment_variants (
          id, organization_id, garment_catalogue_item_id, style_code, color, size, size_key,
          stock_on_hand
        )
        SELECT r.id, ${organizationId}, ${item.id}, ${item.styleCode}, r.color, r.size,
          upper(r.size), r.stock
        FROM unnest(${ids}::uuid[], ${colors}::text[], ${sizes}::text[], ${stocks}::int[])
          AS r(id, color, size, stock)`
    );
    const elapsed = performance.now() - t0;
    if (inserted.count !== rowsPerCall) {
      throw new Error(`the bare INSERT wrote ${inserted.count} rows, not ${rowsPerCall}`);
    }
    if (i >= BULK_WARMUP) floorTimes.push(elapsed);
  }
  const floor = figures(floorTimes);
  return {
    request: `POST /v1/garment-variants/bulk/create {input: ${rowsPerCall} rows}`,
    rowsPerCall,
    calls: BULK_CALLS,
    warmupCalls: BULK_WARMUP,
    requestBytes,
    responseBytes,
    withStock,
    withoutStock,
    floor: { ...floor, statement },
    apiOverFloorP50: {
      withStock: withStock.p50Ms / floor.p50Ms,
      withoutStock: withoutStock.p50Ms / floor.p50Ms,
    },
    note: "each call on a fresh catalogue item; rows are {garmentCatalogueItemId, color, size, " +
      "stockOnHand?}. Beyond the floor's INSERT the service checks the items and existing " +
      "variants, returns every row, writes one outbox event per variant and, with stockOnHand, " +
      "one opening ledger row per variant",
  };
}

/** Seeds the catalogue items in one statement. Returns the seconds it took. */
async function seedItems(sql: Sql, organizationId: string): Promise<number> {
  const started = performance.now();
  await sql.begin(async (tx) => {
    // Oldest first, a day back; two items per created_at, so paging leans on the id tie-break.
    await tx`
      INSERT INTO catalogue_items (
        id, organization_id, style_code, name, brand, description, category, fabric,
        weight_gsm, images, source, external_id, buy_price, created_at, updated_at
      )
      SELECT gen_random_uuid(), ${organizationId}, 'CAT-' || lpad(n::text, 6, '0'),
        (ARRAY['Staple Tee', 'Classic Hood', 'Heavy Tee', 'Polo', 'Crew'])[1 + n % 5] || ' ' || n,
        (ARRAY['Gildan', 'AS Colour', 'Bella+Canvas', 'Next Level'])[1 + n % 4],
        CASE WHEN n % 3 = 0 THEN 'Seeded by deno task bench' END,
        (ARRAY['T-shirts', 'Hoodies', 'Polos', 'Sweats', 'Caps'])[1 + n % 5],
        '100% combed cotton', 150 + n % 150,
        ARRAY['https://cdn.bench.test/styles/' || n || '/main.jpg'],
        'supplier_feed', 'EXT-' || n, round(2 + (n % 700) * 0.0125, 4),
        t.at, t.at
      FROM generate_series(1, ${CATALOGUE_ITEMS_SEEDED}::int) AS n,
        LATERAL (SELECT now() - interval '1 day' + (n / 2) * interval '1 millisecond') AS t(at)`;
  });
  return (performance.now() - started) / 1000;
}

function walkFigures(
  times: number[],
  rows: number,
  ids: Set<string>,
  totalMs: number,
): WalkFigures {
  const ends = Math.min(ENDS, times.length);
  const firstPagesMedianMs = median(times.slice(0, ends));
  const lastPagesMedianMs = median(times.slice(-ends));
  return {
    ...figures(times),
    pages: times.length,
    rows,
    distinctIds: ids.size,
    totalSeconds: totalMs / 1000,
    firstPagesMedianMs,
    lastPagesMedianMs,
    lastOverFirst: lastPagesMedianMs / firstPagesMedianMs,
    tenthsMedianMs: Array.from({ length: Math.min(10, times.length) }, (_, i) => {
      const tenths = Math.min(10, times.length);
      return median(
        times.slice(
          Math.floor((i * times.length) / tenths),
          Math.floor(((i + 1) * times.length) / tenths),
        ),
      );
    }),
  };
}

function checkWalk(what: string, walk: WalkFigures, expected: number): void {
  if (walk.rows !== expected || walk.distinctIds !== expected) {
    throw new Error(
      `${what} returned ${walk.rows} rows (${walk.distinctIds} distinct ids) over ` +
        `${walk.pages} pages; the organisation has ${expected}: a row was skipped or repeated`,
    );
  }
}

async function pagingBench(
  sql: Sql,
  gatewayUrl: string,
  headers: Record<string, string>,
  organizationId: string,
): Promise<CatalogueReport["paging"]> {
  console.error(`[bench] seeding ${CATALOGUE_ITEMS_SEEDED} catalogue items with SQL…`);
  const seedSeconds = await seedItems(sql, organizationId);
  const vacuumStarted = performance.now();
  await sql.unsafe("VACUUM ANALYZE catalogue_items");
  const vacuumAnalyzeSeconds = (performance.now() - vacuumStarted) / 1000;
  const [{ count: expected }] = await sql<[{ count: number }]>`
    SELECT count(*)::int AS count FROM catalogue_items WHERE organization_id = ${organizationId}`;

  const pathAfter = (cursor: string | null): string =>
    `/v1/catalogue?limit=${PAGE}` +
    (cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`);
  const getPage = async (
    cursor: string | null,
  ): Promise<{ ms: number; bytes: number; items: { id: string }[]; next: string | null }> => {
    const t0 = performance.now();
    const res = await fetch(`${gatewayUrl}${pathAfter(cursor)}`, { headers });
    const body = await res.arrayBuffer();
    const ms = performance.now() - t0;
    const text = new TextDecoder().decode(body);
    if (res.status !== 200) throw new Error(`GET ${pathAfter(cursor)} answered ${res.status}`);
    const { data } = JSON.parse(text) as {
      data: { items: { id: string }[]; nextCursor: string | null };
    };
    return { ms, bytes: body.byteLength, items: data.items, next: data.nextCursor };
  };

  console.error(`[bench] GET /v1/catalogue?limit=${PAGE}: walking every page with the cursor…`);
  // Warm-up: the first pages once, so the measured first pages are not a cold start.
  let warm: string | null = null;
  for (let i = 0; i < PAGE_WARMUP; i++) {
    warm = (await getPage(warm)).next;
    if (warm === null) break;
  }
  const apiTimes: number[] = [];
  const sizes: number[] = [];
  const apiIds = new Set<string>();
  let apiRows = 0;
  let cursor: string | null = null;
  const apiStarted = performance.now();
  do {
    const page = await getPage(cursor);
    apiTimes.push(page.ms);
    sizes.push(page.bytes);
    apiRows += page.items.length;
    for (const item of page.items) apiIds.add(item.id);
    cursor = page.next;
  } while (cursor !== null);
  const apiWalk = walkFigures(apiTimes, apiRows, apiIds, performance.now() - apiStarted);
  checkWalk("the cursor walk through the gateway", apiWalk, expected);

  // The floor: the keyset query bare, the sort value carried as text as the service does.
  const statement = `SELECT ${ITEM_COLUMNS} FROM catalogue_items WHERE organization_id = $1 ` +
    `AND (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT ${PAGE + 1}`;
  type FloorRow = { id: string; at: string };
  const floorPage = (after: FloorRow | null) =>
    after === null
      ? sql<FloorRow[]>`
        SELECT ${sql.unsafe(ITEM_COLUMNS)}, created_at::text AS at FROM catalogue_items
        WHERE organization_id = ${organizationId}
        ORDER BY created_at, id LIMIT ${PAGE + 1}`
      : sql<FloorRow[]>`
        SELECT ${sql.unsafe(ITEM_COLUMNS)}, created_at::text AS at FROM catalogue_items
        WHERE organization_id = ${organizationId}
          AND (created_at, id) > (${after.at}::text::timestamptz, ${after.id}::uuid)
        ORDER BY created_at, id LIMIT ${PAGE + 1}`;
  let floorAfter: FloorRow | null = null;
  for (let i = 0; i < PAGE_WARMUP; i++) {
    const rows: FloorRow[] = await floorPage(floorAfter);
    if (rows.length <= PAGE) break;
    floorAfter = rows[PAGE - 1]!;
  }
  const floorTimes: number[] = [];
  const floorIds = new Set<string>();
  let floorRows = 0;
  floorAfter = null;
  const floorStarted = performance.now();
  for (;;) {
    const t0 = performance.now();
    const rows: FloorRow[] = await floorPage(floorAfter);
    floorTimes.push(performance.now() - t0);
    const page = rows.slice(0, PAGE);
    floorRows += page.length;
    for (const row of page) floorIds.add(row.id);
    if (rows.length <= PAGE) break;
    floorAfter = page[PAGE - 1]!;
  }
  const floorWalk = walkFigures(floorTimes, floorRows, floorIds, performance.now() - floorStarted);
  checkWalk("the bare keyset walk", floorWalk, expected);

  const sortedSizes = [...sizes].sort((a, b) => a - b);
  return {
    reading: PAGING_READING,
    request: `GET /v1/catalogue?limit=${PAGE}, then &cursor=<nextCursor> until it is null`,
    seed: { items: expected, seedSeconds, vacuumAnalyzeSeconds },
    responseBytes: { median: percentile(sortedSizes, 0.5), max: sortedSizes.at(-1)! },
    api: apiWalk,
    floor: { ...floorWalk, statement },
    apiOverFloorP50: apiWalk.p50Ms / floorWalk.p50Ms,
    note: `one sequential walk each after ${PAGE_WARMUP} warm-up pages; first/last = median of ` +
      `the first ${ENDS} pages and of the last ${ENDS}; every row was seen exactly once in both`,
  };
}

/** `writers` loops calling `once` until the duration is up; `once` answers "ok" or a refusal. */
async function writersLoop(
  writers: number,
  durationS: number,
  once: () => Promise<string>,
): Promise<{ ok: number; times: number[]; refused: Record<string, number>; seconds: number }> {
  const times: number[] = [];
  const refused: Record<string, number> = {};
  const started = performance.now();
  const deadline = started + durationS * 1000;
  await Promise.all(Array.from({ length: writers }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const outcome = await once().catch((error) =>
        `error: ${error instanceof Error ? error.message : String(error)}`
      );
      const elapsed = performance.now() - t0;
      if (outcome === "ok") times.push(elapsed);
      else refused[outcome] = (refused[outcome] ?? 0) + 1;
    }
  }));
  return { ok: times.length, times, refused, seconds: (performance.now() - started) / 1000 };
}

async function stockBench(
  sql: Sql,
  writersSql: Sql,
  gatewayUrl: string,
  headers: Record<string, string>,
  organizationId: string,
  durationS: number,
): Promise<CatalogueReport["stock"]> {
  const item = await api<{ id: string }>(`${gatewayUrl}/v1/catalogue`, {
    method: "POST",
    headers,
    body: { styleCode: "STOCK-BENCH", name: "Stock bench tee", brand: "Bench" },
  });
  const [target, floorTarget] = await api<{ id: string }[]>(
    `${gatewayUrl}/v1/garment-variants/bulk/create`,
    {
      method: "POST",
      headers,
      body: {
        input: ["API", "Floor"].map((color) => ({
          garmentCatalogueItemId: item.id,
          color,
          size: "L",
          stockOnHand: STOCK_OPENING,
        })),
      },
    },
  );
  const variantUrl = `${gatewayUrl}/v1/garment-variants/${target!.id}`;
  const stockOnHand = async (): Promise<number> =>
    (await api<{ stockOnHand: number }>(variantUrl, { headers })).stockOnHand;
  const ledgerRows = async (variantId: string): Promise<number> =>
    (await sql<[{ count: number }]>`
      SELECT count(*)::int AS count FROM stock_adjustments
      WHERE garment_variant_id = ${variantId} AND reason = 'received'`)[0].count;

  const postHeaders = { ...headers, "content-type": "application/json" };
  const body = JSON.stringify({ delta: 1, reason: "received", reference: "bench" });
  const adjust = async (): Promise<string> => {
    const res = await fetch(`${variantUrl}/stock-adjustments`, {
      method: "POST",
      headers: postHeaders,
      body,
    });
    await res.arrayBuffer();
    return res.status === 201 ? "ok" : `HTTP ${res.status}`;
  };
  // Warm-up: every writer's connection opened once; the opening figure is read after it.
  await Promise.all(Array.from({ length: WRITERS }, adjust));
  const apiOpening = await stockOnHand();
  const apiLedgerBefore = await ledgerRows(target!.id);
  console.error(
    `[bench] POST /v1/garment-variants/{id}/stock-adjustments: ${WRITERS} writers on one ` +
      `variant for ${durationS} s, then the bare transaction for ${durationS} s…`,
  );
  const apiRun = await writersLoop(WRITERS, durationS, adjust);
  const apiFinal = await stockOnHand();
  const apiLedger = (await ledgerRows(target!.id)) - apiLedgerBefore;
  if (apiFinal !== apiOpening + apiRun.ok || apiLedger !== apiRun.ok) {
    throw new Error(
      `stock through the API: opened at ${apiOpening}, ${apiRun.ok} adjustments of +1 answered ` +
        `201, but stockOnHand is ${apiFinal} (expected ${apiOpening + apiRun.ok}) and the ` +
        `ledger gained ${apiLedger} rows: an adjustment was lost or counted twice`,
    );
  }

  // The floor: the same locked read-modify-write and ledger row, bare, on one other variant.
  const statements = "BEGIN; SELECT stock_on_hand … FOR UPDATE; UPDATE garment_variants SET " +
    "stock_on_hand = $after, updated_at = now(); INSERT INTO stock_adjustments …; COMMIT";
  const floorId = floorTarget!.id;
  const bare = async (): Promise<string> => {
    await writersSql.begin(async (tx) => {
      const [row] = await tx<{ stock_on_hand: number }[]>`
        SELECT stock_on_hand FROM garment_variants WHERE id = ${floorId} FOR UPDATE`;
      const after = row!.stock_on_hand + 1;
      await tx`UPDATE garment_variants SET stock_on_hand = ${after}, updated_at = now()
        WHERE id = ${floorId}`;
      await tx`
        INSERT INTO stock_adjustments (
          id, organization_id, garment_variant_id, delta, reason, reference,
          stock_on_hand_after, credential_kind, credential_id
        ) VALUES (
          ${uuidv7()}, ${organizationId}, ${floorId}, 1, 'received', 'bench', ${after},
          'tenant_key', 'bench-floor'
        )`;
    });
    return "ok";
  };
  await Promise.all(Array.from({ length: WRITERS }, bare));
  const floorStock = async (): Promise<number> =>
    (await sql<[{ stock_on_hand: number }]>`
      SELECT stock_on_hand FROM garment_variants WHERE id = ${floorId}`)[0].stock_on_hand;
  const floorOpening = await floorStock();
  const floorLedgerBefore = await ledgerRows(floorId);
  const floorRun = await writersLoop(WRITERS, durationS, bare);
  const floorFinal = await floorStock();
  const floorLedger = (await ledgerRows(floorId)) - floorLedgerBefore;
  if (floorFinal !== floorOpening + floorRun.ok || floorLedger !== floorRun.ok) {
    throw new Error(
      `the bare stock floor: opened at ${floorOpening}, ${floorRun.ok} commits, but ` +
        `stock_on_hand is ${floorFinal} and the ledger gained ${floorLedger} rows`,
    );
  }

  const writersFigures = (
    run: Awaited<ReturnType<typeof writersLoop>>,
    opening: number,
    final: number,
    ledger: number,
  ): WritersFigures => {
    const f = figures(run.times);
    return {
      writers: WRITERS,
      durationS: run.seconds,
      adjustments: run.ok,
      perSecond: run.ok / run.seconds,
      p50Ms: f.p50Ms,
      p99Ms: f.p99Ms,
      maxMs: f.maxMs,
      refused: run.refused,
      openingStock: opening,
      finalStock: final,
      ledgerRows: ledger,
    };
  };
  const apiFigures = writersFigures(apiRun, apiOpening, apiFinal, apiLedger);
  const floorFigures = writersFigures(floorRun, floorOpening, floorFinal, floorLedger);
  return {
    request: "POST /v1/garment-variants/{garmentVariantId}/stock-adjustments " +
      '{delta: 1, reason: "received"}',
    api: { ...apiFigures, variantId: target!.id },
    floor: { ...floorFigures, variantId: floorId, statements },
    apiOverFloor: {
      throughput: apiFigures.perSecond / floorFigures.perSecond,
      p50: apiFigures.p50Ms / floorFigures.p50Ms,
    },
    note: `${WRITERS} closed loops on one variant each; final stockOnHand = opening + 201 ` +
      "answers and the ledger gained one row per 201, checked for the API and the floor alike. " +
      "The service also reads the organisation's settings and writes an outbox event per " +
      "adjustment",
  };
}

/** Runs the whole catalogue bench on a running stack and returns its figures. */
export async function runCatalogueBench(options: CatalogueBenchOptions): Promise<CatalogueReport> {
  const { organizationId, apiKey } = await benchOrganization(options, "Catalogue Bench Shop");
  const headers = { "x-api-key": apiKey };
  const limits = await api<{ pageSizeMax: number; bulkMaxRows: number; maxBodyBytes: number }>(
    `${options.gatewayUrl}/v1/reference/limits`,
    { headers },
  );
  if (limits.pageSizeMax < PAGE) {
    throw new Error(`PAGE_SIZE_MAX is ${limits.pageSizeMax}; this bench pages by ${PAGE}`);
  }

  const sql = connect(options.databaseUrl, {
    schema: "catalogue",
    max: 2,
    applicationName: "bench-catalogue",
  });
  const writersSql = connect(options.databaseUrl, {
    schema: "catalogue",
    max: WRITERS,
    applicationName: "bench-catalogue-writers",
  });
  try {
    const paging = await pagingBench(sql, options.gatewayUrl, headers, organizationId);
    const bulkCreate = await bulkBench(
      sql,
      options.gatewayUrl,
      headers,
      organizationId,
      limits.bulkMaxRows,
    );
    const stock = await stockBench(
      sql,
      writersSql,
      options.gatewayUrl,
      headers,
      organizationId,
      options.durationS,
    );
    const [{ version }] = await sql<[{ version: string }]>`SELECT version()`;
    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      organizationId: organizationId,
      limits,
      database: `${version.split(" on ")[0]} (embedded, fsync=off, synchronous_commit=off)`,
      bulkCreate,
      paging,
      stock,
    };
  } finally {
    await sql.end();
    await writersSql.end();
  }
}

/** The catalogue table of `deno task bench`. */
export function formatCatalogueReport(report: CatalogueReport, writtenTo: string): string {
  const { bulkCreate: b, paging: p, stock: s } = report;
  const num = (n: number | undefined, digits = 2, width = 10): string =>
    (n === undefined ? "–" : n.toFixed(digits)).padStart(width);
  const ratio = (n: number): string => `${n.toFixed(2)}×`.padStart(10);
  const row = (
    label: string,
    api: { p50Ms: number; p99Ms: number },
    floorP50: number | undefined,
    apiOverFloor: number | undefined,
  ): string =>
    `${label.padEnd(50)}${num(api.p50Ms)}${num(api.p99Ms)}${num(floorP50)}` +
    (apiOverFloor === undefined ? "–".padStart(10) : ratio(apiOverFloor));
  const kb = (bytes: number): string => `${(bytes / 1000).toFixed(0)} kB`;
  const refused = (r: Record<string, number>): string =>
    Object.keys(r).length === 0
      ? "none refused"
      : Object.entries(r).map(([k, n]) => `${n} × ${k}`).join(", ");
  return [
    "",
    `Catalogue: one organisation, through the gateway; floors are bare postgres.js on the ` +
    `same database (${report.database})`,
    `  paging: ${p.reading}`,
    `  seeded ${p.seed.items} items with SQL in ${p.seed.seedSeconds.toFixed(1)} s, VACUUM ` +
    `ANALYZE ${p.seed.vacuumAnalyzeSeconds.toFixed(1)} s`,
    "",
    `${"".padEnd(50)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"floor p50".padStart(10)}${
      "API÷floor".padStart(10)
    }`,
    row(
      `bulk create ${b.rowsPerCall} rows with stockOnHand`,
      b.withStock,
      b.floor.p50Ms,
      b.apiOverFloorP50.withStock,
    ),
    row(
      `  same, without stockOnHand (no ledger rows)`,
      b.withoutStock,
      b.floor.p50Ms,
      b.apiOverFloorP50.withoutStock,
    ),
    row(`GET /v1/catalogue?limit=${PAGE}, per page`, p.api, p.floor.p50Ms, p.apiOverFloorP50),
    row(
      `stock +1, ${s.api.writers} writers on one variant`,
      s.api,
      s.floor.p50Ms,
      s.apiOverFloor.p50,
    ),
    "",
    `bulk create: ${b.calls} calls after ${b.warmupCalls} warm-up, each on a fresh item; ` +
    `request ${kb(b.requestBytes)}, answer ${kb(b.responseBytes)}; floor: one INSERT … ` +
    `unnest of the same rows in one transaction`,
    `paging: ${p.api.pages} pages, ${p.api.rows} rows, ${p.api.distinctIds} distinct ids ` +
    `(every row once), ${p.api.totalSeconds.toFixed(1)} s for the walk; page ` +
    `${kb(p.responseBytes.median)}`,
    `  first ${ENDS} pages median ${p.api.firstPagesMedianMs.toFixed(2)} ms, last ${ENDS} ` +
    `${p.api.lastPagesMedianMs.toFixed(2)} ms: last ÷ first ${p.api.lastOverFirst.toFixed(2)} ` +
    `(floor ${p.floor.firstPagesMedianMs.toFixed(2)} → ${p.floor.lastPagesMedianMs.toFixed(2)} ` +
    `ms, ${p.floor.lastOverFirst.toFixed(2)})`,
    `  median ms by tenth of the walk: API ${
      p.api.tenthsMedianMs.map((t) => t.toFixed(1)).join(" ")
    }`,
    `                                floor ${
      p.floor.tenthsMedianMs.map((t) => t.toFixed(1)).join(" ")
    }`,
    `stock: API ${s.api.perSecond.toFixed(0)} adjustments/s (${s.api.adjustments} in ` +
    `${s.api.durationS.toFixed(1)} s, ${refused(s.api.refused)}), floor ` +
    `${s.floor.perSecond.toFixed(0)}/s: API ÷ floor throughput ` +
    `${(s.apiOverFloor.throughput * 100).toFixed(1)} %`,
    `  stockOnHand ${s.api.openingStock} + ${s.api.adjustments} = ${s.api.finalStock} ` +
    `(checked, ledger +${s.api.ledgerRows}); floor ${s.floor.openingStock} + ` +
    `${s.floor.adjustments} = ${s.floor.finalStock}`,
    `Figures written to ${writtenTo}`,
  ].join("\n");
}

if (import.meta.main) {
  const bench = await startBenchStack("printshop-bench-catalogue-");
  try {
    const report = await runCatalogueBench({
      gatewayUrl: bench.stack.gatewayUrl,
      adminUrl: bench.stack.adminUrl,
      adminToken: bench.adminToken,
      databaseUrl: bench.databaseUrl,
      durationS: BENCH_DURATION_S,
    });
    await Deno.mkdir("bench-results", { recursive: true });
    await Deno.writeTextFile(
      "bench-results/catalogue.json",
      JSON.stringify(report, null, 2) + "\n",
    );
    console.log(formatCatalogueReport(report, "bench-results/catalogue.json"));
  } finally {
    await bench.stop();
  }
}

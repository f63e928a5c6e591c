/**
 * The catalogue part's paging: `BENCH_CATALOGUE_ITEMS` catalogue items seeded by SQL, then every
 * page of `GET /v1/catalogue?limit=200` following `nextCursor` to the end, beside the same keyset
 * query bare; both walks must return every row exactly once.
 */
import type { Sql } from "@printshop/shared/db";
import type { CatalogueReport, WalkFigures } from "./catalogue_report.ts";
import type { BenchShop } from "./stack.ts";
import { latencyFigures, median, percentile } from "./stats.ts";

/** `BENCH_CATALOGUE_ITEMS` seeds fewer (or more) catalogue items, e.g. for a quick try. */
export const CATALOGUE_ITEMS_SEEDED = Number(Deno.env.get("BENCH_CATALOGUE_ITEMS") ?? 100_000);
if (!Number.isInteger(CATALOGUE_ITEMS_SEEDED) || CATALOGUE_ITEMS_SEEDED < 1) {
  throw new Error(
    `BENCH_CATALOGUE_ITEMS must be a whole number ≥ 1, not ${
      Deno.env.get("BENCH_CATALOGUE_ITEMS")
    }`,
  );
}
export const PAGE = 200;
/** Pages fetched (and thrown away) before the measured walk, so page 1 is not a cold start. */
const PAGE_WARMUP = 20;
/** Pages at each end whose medians are compared. */
export const ENDS = 10;
/** The columns GET /v1/catalogue reads (services/catalogue/store/items.ts). */
const ITEM_COLUMNS = "id, style_code, name, brand, description, category, supplier_vendor_id, " +
  "fabric, weight_gsm, images, is_discontinued, external_id, source, buy_price, created_at, " +
  "updated_at";
export const PAGING_READING = `"a catalogue of 100,000 variants" is read as 100,000 catalogue ` +
  `items (styles) seeded by SQL, without variant rows: GET /v1/catalogue, the cursor list, ` +
  `pages items and embeds no variants`;

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
    ...latencyFigures(times),
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

export async function pagingBench(shop: BenchShop): Promise<CatalogueReport["paging"]> {
  const { sql, gatewayUrl, headers, organizationId } = shop;
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

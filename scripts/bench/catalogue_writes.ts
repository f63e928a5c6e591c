/**
 * The catalogue part's writes, each beside a bare floor: bulk create of BULK_MAX_ROWS variants
 * per call (against one `INSERT … SELECT FROM unnest(…)`), and 16 concurrent writers adjusting
 * one variant's stock (against the same locked read-modify-write and ledger row, bare), whose
 * final figure must match the adjustments answered.
 */
import type { Sql } from "@printshop/shared/db";
import { uuidv7 } from "@printshop/shared/ids";
import type { CatalogueReport, WritersFigures } from "./catalogue_report.ts";
import { api, type BenchShop } from "./stack.ts";
import { type LatencyFigures, latencyFigures } from "./stats.ts";

const BULK_CALLS = 10;
const BULK_WARMUP = 2;
export const WRITERS = 16;
const STOCK_OPENING = 10;
const SIZES = ["XS", "S", "M", "L", "XL", "2XL", "3XL", "4XL", "5XL", "OSFA"] as const;

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

export async function bulkBench(
  shop: BenchShop,
  rowsPerCall: number,
): Promise<CatalogueReport["bulkCreate"]> {
  const { sql, gatewayUrl, headers, organizationId } = shop;
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

export async function stockBench(
  shop: BenchShop,
  writersSql: Sql,
  durationS: number,
): Promise<CatalogueReport["stock"]> {
  const { sql, gatewayUrl, headers, organizationId } = shop;
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

/**
 * The quotes part's loads, through the gateway: the 200-quote list over the seeded quotes
 * (every page once first, then sequential latency cycling the offset, autocannon throughput and
 * the bytes answered; smaller pages for context), and a re-banding variant PATCH whose answers
 * are checked for the band's price.
 */
import autocannon from "autocannon";
import { Decimal } from "decimal.js";
import type { QuotesReport } from "./quotes_report.ts";
import { bandFor, GARMENT_BANDS, QUOTES_SEEDED } from "./quotes_shape.ts";
import type { BenchShop } from "./stack.ts";
import { type LatencyFigures, latencyFigures, percentile } from "./stats.ts";

export const PAGE = 200;
export const LIST_SAMPLES = 100;
const LIST_WARMUP = 5;
/** The sequential list loop stops early past this, so a slow machine still finishes. */
const LIST_BUDGET_MS = 60_000;
export const LIST_CONNECTIONS = 2;
const SMALLER_PAGES = [50, 20] as const;
const SMALLER_PAGE_SAMPLES = 30;
export const PATCH_SAMPLES = 50;
const PATCH_WARMUP = 6;
const LIST_GOAL_P50_MS = 50;
const REBAND_GOAL_P50_MS = 20;

const figures = latencyFigures;

/** Sequential GETs timed with performance.now(), cycling through the pages. */
async function timedPages(
  gatewayUrl: string,
  headers: Record<string, string>,
  pathAt: (i: number) => string,
  warmup: number,
  samples: number,
  onBody: (i: number, body: ArrayBuffer) => void = () => {},
  budgetMs = LIST_BUDGET_MS,
): Promise<LatencyFigures> {
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < warmup + samples; i++) {
    const t0 = performance.now();
    const res = await fetch(`${gatewayUrl}${pathAt(i)}`, { headers });
    const body = await res.arrayBuffer();
    const elapsed = performance.now() - t0;
    if (res.status !== 200) throw new Error(`GET ${pathAt(i)} answered ${res.status}`);
    onBody(i, body);
    if (i >= warmup) times.push(elapsed);
    if (i >= warmup + 10 && performance.now() - started > budgetMs) break;
  }
  return figures(times);
}

export async function listBench(
  gatewayUrl: string,
  headers: Record<string, string>,
  durationS: number,
): Promise<QuotesReport["list"]> {
  const pages = Math.max(1, Math.ceil(QUOTES_SEEDED / PAGE));
  const pathFor = (limit: number) => (i: number): string =>
    `/v1/quotes?limit=${limit}&offset=${(i % pages) * PAGE}`;
  const pathAt = pathFor(PAGE);

  // First, every page once, in order: the seed wrote rows only, so this is each quote's first
  // read through the API, with whatever a first read costs (a quote's stored document, say, is
  // made then). Reported apart; the goal's figure is the steady read after it.
  const firstStarted = performance.now();
  const firstPass = await timedPages(gatewayUrl, headers, pathAt, 0, pages, () => {}, Infinity);
  const firstPassSeconds = (performance.now() - firstStarted) / 1000;

  const sizes: number[] = [];
  let itemsPerPage = 0;
  let variantsPerPage = 0;
  const sequential = await timedPages(
    gatewayUrl,
    headers,
    pathAt,
    LIST_WARMUP,
    LIST_SAMPLES,
    (i, body) => {
      sizes.push(body.byteLength);
      if (i > 0) return;
      const page = JSON.parse(new TextDecoder().decode(body)) as {
        data: { items: { groups: { lines: { variants: unknown[] }[] }[] }[] };
      };
      itemsPerPage = page.data.items.length;
      variantsPerPage = page.data.items.flatMap((q) => q.groups).flatMap((g) => g.lines)
        .reduce((n, l) => n + l.variants.length, 0);
    },
  );

  // Every request of the load takes the next page, across connections.
  let next = 0;
  const result = await autocannon({
    url: gatewayUrl,
    headers,
    connections: LIST_CONNECTIONS,
    duration: durationS,
    timeout: 30,
    requests: [{
      method: "GET",
      setupRequest: (req: Record<string, unknown>) => ({ ...req, path: pathAt(next++) }),
    }],
  });
  if (result.errors > 0) throw new Error(`list under load: ${result.errors} errors`);

  // For context: the same list with smaller pages (the cost follows the rows embedded).
  const smallerPages: QuotesReport["list"]["smallerPages"] = [];
  for (const limit of SMALLER_PAGES) {
    smallerPages.push({
      limit,
      ...await timedPages(gatewayUrl, headers, pathFor(limit), 3, SMALLER_PAGE_SAMPLES),
    });
  }

  const sortedSizes = [...sizes].sort((a, b) => a - b);
  return {
    request: `GET /v1/quotes?limit=${PAGE}&offset=0,${PAGE},…,${(pages - 1) * PAGE} (cycling)`,
    itemsPerPage,
    variantsPerPage,
    responseBytes: {
      min: sortedSizes[0]!,
      median: percentile(sortedSizes, 0.5),
      max: sortedSizes[sortedSizes.length - 1]!,
    },
    firstPass: { ...firstPass, pages, seconds: firstPassSeconds },
    sequential,
    load: {
      connections: LIST_CONNECTIONS,
      durationS,
      requestsPerSecond: result.requests.average,
      bytesPerSecond: result.throughput.average,
      non2xx: result.non2xx,
    },
    smallerPages,
    goalP50MsAtMost: LIST_GOAL_P50_MS,
  };
}

export async function rebandBench(shop: BenchShop): Promise<QuotesReport["reband"]> {
  const { sql, gatewayUrl, headers, organizationId } = shop;
  // A draft quote from the middle of the seed, its first group-source variant, and the sum of
  // the other variants of that line.
  const [target] = await sql<
    { quote_id: string; id: string; quantity: number; cost: string; others: number }[]
  >`
    SELECT v.quote_id, v.id, v.quantity, (v.buy_price + v.extra_cost)::text AS cost,
      (SELECT sum(o.quantity)::int FROM quote_variants o
        WHERE o.quote_line_id = v.quote_line_id AND o.id <> v.id AND NOT o.is_custom_line)
        AS others
    FROM quote_variants v JOIN quotes q ON q.id = v.quote_id
    WHERE q.organization_id = ${organizationId} AND q.status = 'draft'
      AND q.quote_number >= (SELECT min(quote_number) + ${Math.floor(QUOTES_SEEDED / 2)}
        FROM quotes WHERE organization_id = ${organizationId})
      AND v.markup_source = 'group'
    ORDER BY q.quote_number, v.sort_order LIMIT 1`;
  if (!target) throw new Error("no group-source variant in a draft seeded quote");
  // Two quantities for this variant whose line totals fall in neighbouring bands.
  const low = 1;
  const lowLine = target.others + low;
  const boundary = GARMENT_BANDS.find((b) => b.from > lowLine)!.from;
  const high = boundary - target.others;
  const quantities: [number, number] = [low, high];
  const lineQuantities: [number, number] = [lowLine, boundary];
  const markupPct: [number, number] = [bandFor(lowLine), bandFor(boundary)];
  const expected = markupPct.map((pct) =>
    new Decimal(target.cost).times(100 + pct).div(100).toDecimalPlaces(4, Decimal.ROUND_HALF_UP)
      .toNumber()
  ) as [number, number];

  const url = `${gatewayUrl}/v1/quote-variants/${target.id}`;
  const patchHeaders = { ...headers, "content-type": "application/json" };
  // Start on the quantity the variant does not have, so every PATCH changes it.
  const startAt = target.quantity === low ? 1 : 0;
  const seen: ({ unitPriceExGst: number; markupValue: number } | undefined)[] = [
    undefined,
    undefined,
  ];
  const samples: number[] = [];
  for (let i = 0; i < PATCH_WARMUP + PATCH_SAMPLES; i++) {
    const which = (i + startAt) % 2;
    const body = JSON.stringify({ quantity: quantities[which] });
    const t0 = performance.now();
    const res = await fetch(url, { method: "PATCH", headers: patchHeaders, body });
    const text = await res.text();
    const elapsed = performance.now() - t0;
    if (res.status !== 200) throw new Error(`PATCH ${url} answered ${res.status}: ${text}`);
    if (i >= PATCH_WARMUP) samples.push(elapsed);
    seen[which] = (JSON.parse(text) as { data: { unitPriceExGst: number; markupValue: number } })
      .data;
  }
  for (const which of [0, 1] as const) {
    const got = seen[which]!;
    if (got.unitPriceExGst !== expected[which] || got.markupValue !== markupPct[which]) {
      throw new Error(
        `PATCH quantity ${quantities[which]} (line ${lineQuantities[which]}) answered ` +
          `unitPriceExGst ${got.unitPriceExGst} at ${got.markupValue} %; the band gives ` +
          `${expected[which]} at ${markupPct[which]} %`,
      );
    }
  }
  return {
    request: "PATCH /v1/quote-variants/{variantId} {quantity}",
    quoteId: target.quote_id,
    variantId: target.id,
    quantities,
    lineQuantities,
    markupPct,
    unitPriceExGst: expected,
    sequential: figures(samples),
    goalP50MsAtMost: REBAND_GOAL_P50_MS,
  };
}

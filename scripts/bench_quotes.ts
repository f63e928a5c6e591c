/**
 * The quotes-at-scale part of `deno task bench` (imported by scripts/bench.ts, run on its stack).
 *
 * 1. Seeds one new organisation with `BENCH_QUOTES` (10,000) quotes straight into the `quotes`
 *    schema with set-based SQL (generate_series, INSERT … SELECT; ids from gen_random_uuid()):
 *    each quote has 3 groups, each group 4 Garment lines × 5 variants and 2 decorations (the
 *    issue's "+ 2 decorations each" is read as two per group). Prices follow the pricing rules:
 *    a variant sells at cost ⊕ markup to 4 decimals; lines 1–2 of a group are `group`-source
 *    variants banded by their line quantity through the organisation's default garment markup
 *    group, lines 3–4 manual (percentage, fixed); a line's quantity is the sum of its variants and
 *    its unit price their total ÷ quantity; decoration base costs are cost ⊕ markup; the quote's
 *    subtotal, GST and total are the rounded sums. Quote numbers continue the organisation's
 *    counter, which is left at the last one so later API creates carry on. The pricing of a sample
 *    of seeded quotes is checked against services/quotes/domain/pricing.ts before measuring.
 * 2. VACUUM ANALYZE of the quote tables.
 * 3. `GET /v1/quotes?limit=200` through the gateway: first every page once, in order (each
 *    quote's first read through the API, reported apart: the seed wrote rows only, so anything
 *    a first read does, such as storing a quote's rendered document, happens here and not in the
 *    figures after); then, cycling the offset over every page, sequential latency
 *    (performance.now(): the goal's p50) and autocannon throughput, and the response size and
 *    bytes per second; for context, the sequential latency of the same list at limit=50 and
 *    limit=20.
 * 4. `PATCH /v1/quote-variants/{id}` on a `group` variant of a seeded quote, alternating two
 *    quantities whose line totals fall in different bands, so every request re-bands the line
 *    and recomputes a 60-variant quote; one answer of each kind is checked for the band's price.
 *
 * Nothing is asserted about speed: the goals (list p50 ≤ 50 ms, re-band p50 ≤ 20 ms) are
 * reported. A seed that breaks the pricing rules, or a PATCH that does not re-band, stops the run.
 *
 * This file seeds and checks the quotes and runs the part; the loads of steps 3 and 4 are in
 * scripts/bench/quotes_loads.ts, the report in quotes_report.ts, the shape and the garment
 * bands in quotes_shape.ts.
 */
import { Decimal } from "decimal.js";
import { connect, type Sql } from "@printshop/shared/db";
import type { MarkupGroup } from "../services/quotes/domain/markup.ts";
import { api, benchOrganization, type StackAccess } from "./bench/stack.ts";
import {
  LIST_CONNECTIONS,
  LIST_SAMPLES,
  listBench,
  PAGE,
  PATCH_SAMPLES,
  rebandBench,
} from "./bench/quotes_loads.ts";
import type { QuotesReport } from "./bench/quotes_report.ts";
import {
  bandCaseSql,
  FULL_QUOTE_SHAPE,
  GARMENT_BANDS,
  QUOTES_SEEDED,
} from "./bench/quotes_shape.ts";
import {
  decorationTotals,
  type GroupInput,
  type LineInput,
  lineQuantity,
  lineTotals,
  priceVariant,
  quoteTotals,
  rebandVariant,
  type VariantInput,
} from "../services/quotes/domain/pricing.ts";

const GROUPS_PER_QUOTE = FULL_QUOTE_SHAPE.groups;
const LINES_PER_GROUP = FULL_QUOTE_SHAPE.linesPerGroup;
const VARIANTS_PER_LINE = FULL_QUOTE_SHAPE.variantsPerLine;
const DECORATIONS_PER_GROUP = 2;
const PRICING_CHECK_QUOTES = 25;

export interface QuotesBenchOptions extends StackAccess {
  durationS: number;
}

/**
 * Seeds the quotes in one transaction of set-based statements. Returns the seconds it took.
 * Temporary tables hold the generated ids and the priced rows so each level is computed once.
 */
async function seed(
  sql: Sql,
  organizationId: string,
  garmentGroupId: string,
  taxRate: { id: string; name: string; ratePct: number },
): Promise<number> {
  const started = performance.now();
  await sql.begin(async (tx) => {
    await tx`SET LOCAL work_mem = '256MB'`;
    // The counter row is locked for the whole seed, so an API create waits and then continues.
    await tx`INSERT INTO quote_ref_counters (organization_id, last_number)
      VALUES (${organizationId}, 0) ON CONFLICT (organization_id) DO NOTHING`;
    const [counter] = await tx<{ last_number: number }[]>`
      SELECT last_number FROM quote_ref_counters
      WHERE organization_id = ${organizationId} FOR UPDATE`;
    const first = counter!.last_number + 1;

    await tx`CREATE TEMP TABLE seed_q ON COMMIT DROP AS
      SELECT n, gen_random_uuid() AS id, ${first}::int + n - 1 AS number
      FROM generate_series(1, ${QUOTES_SEEDED}::int) AS n`;
    await tx`CREATE TEMP TABLE seed_g ON COMMIT DROP AS
      SELECT q.n, g, gen_random_uuid() AS id, q.id AS quote_id
      FROM seed_q q CROSS JOIN generate_series(1, ${GROUPS_PER_QUOTE}::int) AS g`;
    await tx`CREATE TEMP TABLE seed_l ON COMMIT DROP AS
      SELECT g.n, g.g, l, gen_random_uuid() AS id, g.id AS group_id, g.quote_id
      FROM seed_g g CROSS JOIN generate_series(1, ${LINES_PER_GROUP}::int) AS l`;
    // Variants: quantities 2..10 (line quantities 10..50, across three bands); lines 1-2 of a
    // group band through the default garment group, line 3 is a manual 45.5 %, line 4 a manual
    // fixed 4.25. Sell = cost ⊕ markup, rounded half away from zero to 4 decimals.
    await tx`CREATE TEMP TABLE seed_v ON COMMIT DROP AS
      WITH base AS (
        SELECT l.n, l.g, l.l, v, gen_random_uuid() AS id, l.id AS line_id, l.quote_id,
          (ARRAY['S', 'M', 'L', 'XL', '2XL'])[v] AS size,
          (ARRAY['Black', 'White', 'Navy', 'Heather Grey'])[l.l] AS colour,
          2 + (l.n * 7 + l.g * 5 + l.l * 3 + v * 11) % 9 AS quantity,
          (3.50 + ((l.n * 3 + l.l * 7) % 15) * 0.45 + (v - 1) * 0.35)::numeric(18, 4) AS buy_price,
          (CASE WHEN v >= 4 THEN 0.75 ELSE 0 END)::numeric(18, 4) AS extra_cost,
          CASE WHEN l.l <= 2 THEN 'group' ELSE 'manual' END AS markup_source
        FROM seed_l l CROSS JOIN generate_series(1, ${VARIANTS_PER_LINE}::int) AS v
      ),
      line_qty AS (SELECT line_id, sum(quantity)::int AS qty FROM base GROUP BY line_id),
      marked AS (
        SELECT b.*,
          CASE WHEN b.l = 4 THEN 'fixed' ELSE 'percentage' END AS markup_type,
          (CASE WHEN b.markup_source = 'group' THEN ${sql.unsafe(bandCaseSql("q.qty"))}
            WHEN b.l = 3 THEN 45.5 ELSE 4.25 END)::numeric(30, 10) AS markup_value
        FROM base b JOIN line_qty q USING (line_id)
      )
      SELECT m.*,
        CASE WHEN m.markup_type = 'percentage'
          THEN round((m.buy_price + m.extra_cost) * (100 + m.markup_value) / 100, 4)
          ELSE round(m.buy_price + m.extra_cost + m.markup_value, 4)
        END::numeric(18, 4) AS unit_price
      FROM marked m`;
    // Lines: quantity = Σ variant quantities, unit price = Σ variant totals ÷ quantity (4 dp).
    await tx`CREATE TEMP TABLE seed_lines ON COMMIT DROP AS
      SELECT l.*, s.qty, s.total, round(s.total / s.qty, 4)::numeric(18, 4) AS unit_price
      FROM seed_l l JOIN (
        SELECT line_id, sum(quantity)::int AS qty, sum(quantity * unit_price) AS total
        FROM seed_v GROUP BY line_id
      ) s ON s.line_id = l.id`;
    // Decorations, for the group's garment quantity: a screen print (unit +60 %, setup +20 %,
    // setup charged) and an embroidery (unit +1.50 fixed, setup +0 %, setup not charged).
    await tx`CREATE TEMP TABLE seed_d ON COMMIT DROP AS
      WITH costed AS (
        SELECT g.n, g.g, d, gen_random_uuid() AS id, g.id AS group_id, g.quote_id, gq.qty,
          CASE WHEN d = 1 THEN 'ScreenPrinting' ELSE 'Embroidery' END AS method,
          CASE WHEN d = 1 THEN 'Front' ELSE 'Left chest' END AS position,
          (CASE WHEN d = 1 THEN 1.10 + (g.n % 5) * 0.10 ELSE 2.80 END)::numeric(18, 4) AS unit_cost,
          (CASE WHEN d = 1 THEN 45 ELSE 30 END)::numeric(18, 4) AS setup_cost,
          CASE WHEN d = 1 THEN 'percentage' ELSE 'fixed' END AS markup_type,
          (CASE WHEN d = 1 THEN 60 ELSE 1.5 END)::numeric(30, 10) AS markup_value,
          (CASE WHEN d = 1 THEN 20 ELSE 0 END)::numeric(30, 10) AS setup_markup_value,
          d = 1 AS include_setup_cost
        FROM seed_g g
        JOIN (SELECT group_id, sum(qty)::int AS qty FROM seed_lines GROUP BY group_id) gq
          ON gq.group_id = g.id
        CROSS JOIN generate_series(1, ${DECORATIONS_PER_GROUP}::int) AS d
      )
      SELECT c.*,
        CASE WHEN c.markup_type = 'percentage'
          THEN round(c.unit_cost * (100 + c.markup_value) / 100, 4)
          ELSE round(c.unit_cost + c.markup_value, 4)
        END::numeric(18, 4) AS base_unit_cost,
        round(c.setup_cost * (100 + c.setup_markup_value) / 100, 4)::numeric(18, 4)
          AS base_setup_cost
      FROM costed c`;
    // Quote totals: Σ variant totals + Σ decoration totals, rounded to cents; GST on that.
    await tx`CREATE TEMP TABLE seed_totals ON COMMIT DROP AS
      WITH goods AS (
        SELECT quote_id, sum(total) AS amount FROM seed_lines GROUP BY quote_id
        UNION ALL
        SELECT quote_id, sum(qty * base_unit_cost
          + CASE WHEN include_setup_cost THEN base_setup_cost ELSE 0 END)
        FROM seed_d GROUP BY quote_id
      ), sub AS (
        SELECT quote_id, round(sum(amount), 2) AS subtotal FROM goods GROUP BY quote_id
      )
      SELECT quote_id, subtotal, round(subtotal * ${taxRate.ratePct}::numeric / 100, 2) AS gst
      FROM sub`;

    await tx`
      INSERT INTO quotes (
        id, organization_id, quote_number, quote_ref, status, subtotal_ex_gst, gst_amount,
        total_inc_gst, reference, client_id, sales_rep_email, delivery_method, delivery_date,
        notes, tax_rate_id, tax_name, tax_rate_pct, sent_to_email, sent_at, created_at, updated_at
      )
      SELECT q.id, ${organizationId}, q.number,
        'Q-' || CASE WHEN q.number >= 10000 THEN q.number::text ELSE lpad(q.number::text, 5, '0')
          END,
        CASE q.n % 10 WHEN 0 THEN 'sent' WHEN 5 THEN 'approved' ELSE 'draft' END,
        t.subtotal, t.gst, t.subtotal + t.gst,
        'PO-' || (100000 + q.n),
        ('00000000-0000-4000-8000-' || lpad(to_hex(q.n % 250), 12, '0'))::uuid,
        'rep' || (q.n % 5) || '@bench.test',
        CASE WHEN q.n % 3 = 0 THEN 'Courier' ELSE 'Pickup' END,
        current_date + (q.n % 60),
        CASE WHEN q.n % 4 = 0 THEN 'Seeded by deno task bench' END,
        ${taxRate.id}, ${taxRate.name}, ${taxRate.ratePct},
        CASE WHEN q.n % 10 = 0 THEN 'buyer' || q.n || '@client.test' END,
        CASE WHEN q.n % 10 = 0 THEN now() - (${QUOTES_SEEDED}::int - q.n) * interval '7 minutes'
          + interval '1 hour' END,
        now() - (${QUOTES_SEEDED}::int - q.n) * interval '7 minutes',
        now() - (${QUOTES_SEEDED}::int - q.n) * interval '7 minutes'
      FROM seed_q q JOIN seed_totals t ON t.quote_id = q.id
      ORDER BY q.n`;
    await tx`
      INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
      SELECT id, ${organizationId}, quote_id,
        (ARRAY['Staff uniforms', 'Event tees', 'Merch pack'])[g], g
      FROM seed_g ORDER BY n, g`;
    await tx`
      INSERT INTO quote_lines (
        id, organization_id, quote_id, quote_group_id, line_type, product_name, product_sku,
        title, quantity, unit_price_ex_gst, sort_order
      )
      SELECT id, ${organizationId}, quote_id, group_id, 'Garment',
        (ARRAY['Staple Tee', 'Classic Hood', 'Heavy Tee', 'Polo'])[l],
        'AS-500' || l, 'Garment ' || l, qty, unit_price, l
      FROM seed_lines ORDER BY n, g, l`;
    await tx`
      INSERT INTO quote_variants (
        id, organization_id, quote_id, quote_line_id, size, colour, quantity, unit_price_ex_gst,
        buy_price, extra_cost, markup_type, markup_value, markup_source, markup_group_id,
        sort_order
      )
      SELECT id, ${organizationId}, quote_id, line_id, size, colour, quantity, unit_price,
        buy_price, extra_cost, markup_type, markup_value, markup_source,
        CASE WHEN markup_source = 'group' THEN ${garmentGroupId}::uuid END, v
      FROM seed_v ORDER BY n, g, l, v`;
    await tx`
      INSERT INTO quote_decorations (
        id, organization_id, quote_id, quote_group_id, method, position, quantity, unit_cost,
        setup_cost, base_unit_cost, base_setup_cost, include_setup_cost, markup_type,
        markup_value, setup_markup_type, setup_markup_value, colour_count, colours, sort_order
      )
      SELECT id, ${organizationId}, quote_id, group_id, method, position, qty, unit_cost,
        setup_cost, base_unit_cost, base_setup_cost, include_setup_cost, markup_type,
        markup_value, 'percentage', setup_markup_value,
        CASE WHEN d = 1 THEN 2 END,
        CASE WHEN d = 1
          THEN '[{"name": "White", "isBase": true}, {"name": "Navy", "isBase": false}]'::jsonb
          ELSE '[]'::jsonb END,
        d
      FROM seed_d ORDER BY n, g, d`;
    await tx`UPDATE quote_ref_counters SET last_number = ${first + QUOTES_SEEDED - 1}
      WHERE organization_id = ${organizationId}`;
  });
  return (performance.now() - started) / 1000;
}

interface CheckVariantRow {
  quote_line_id: string;
  quantity: number;
  buy_price: string;
  extra_cost: string;
  markup_type: "percentage" | "fixed" | null;
  markup_value: string | null;
  markup_source: "group" | "manual";
  unit_price_ex_gst: string;
  is_custom_line: boolean;
}

/**
 * Re-prices a sample of seeded quotes with the service's own pricing functions and compares
 * every derived figure with what the seed stored; throws on the first difference.
 */
async function checkSeedPricing(sql: Sql, organizationId: string): Promise<number> {
  const quotes = await sql<
    {
      id: string;
      subtotal_ex_gst: string;
      gst_amount: string;
      total_inc_gst: string;
      tax_rate_pct: string;
    }[]
  >`
    SELECT id, subtotal_ex_gst, gst_amount, total_inc_gst, tax_rate_pct FROM quotes
    WHERE organization_id = ${organizationId} ORDER BY random() LIMIT ${PRICING_CHECK_QUOTES}`;
  const ids = quotes.map((q) => q.id);
  const [groups, lines, variants, decorations] = await Promise.all([
    sql<{ id: string; quote_id: string }[]>`SELECT id, quote_id FROM quote_groups
      WHERE quote_id = ANY(${ids}::uuid[]) ORDER BY sort_order, id`,
    sql<{ id: string; quote_group_id: string; quantity: number; unit_price_ex_gst: string }[]>`
      SELECT id, quote_group_id, quantity, unit_price_ex_gst FROM quote_lines
      WHERE quote_id = ANY(${ids}::uuid[]) ORDER BY sort_order, id`,
    sql<CheckVariantRow[]>`SELECT quote_line_id, quantity, buy_price, extra_cost, markup_type,
      markup_value, markup_source, unit_price_ex_gst, is_custom_line FROM quote_variants
      WHERE quote_id = ANY(${ids}::uuid[]) ORDER BY sort_order, id`,
    sql<
      {
        quote_group_id: string;
        quantity: number;
        unit_cost: string;
        setup_cost: string;
        base_unit_cost: string;
        base_setup_cost: string;
        include_setup_cost: boolean;
        markup_type: "percentage" | "fixed" | null;
        markup_value: string | null;
        setup_markup_type: "percentage" | "fixed" | null;
        setup_markup_value: string | null;
      }[]
    >`SELECT quote_group_id, quantity, unit_cost, setup_cost, base_unit_cost, base_setup_cost,
      include_setup_cost, markup_type, markup_value, setup_markup_type, setup_markup_value
      FROM quote_decorations WHERE quote_id = ANY(${ids}::uuid[]) ORDER BY sort_order, id`,
  ]);
  const garment: MarkupGroup = {
    lane: "garment",
    bands: GARMENT_BANDS.map((b) => ({
      from: String(b.from),
      markupType: b.markupType,
      markupValue: String(b.markupValue),
    })),
  };
  const same = (a: string | null, b: string | null): boolean =>
    a === null || b === null ? a === b : new Decimal(a).eq(b);
  const fail = (what: string, stored: unknown, expected: unknown): never => {
    throw new Error(`seeded ${what} is ${stored}, the pricing rules give ${expected}`);
  };
  for (const quote of quotes) {
    const groupInputs: GroupInput[] = [];
    for (const group of groups.filter((g) => g.quote_id === quote.id)) {
      const lineInputs: LineInput[] = [];
      for (const line of lines.filter((l) => l.quote_group_id === group.id)) {
        const rows = variants.filter((v) => v.quote_line_id === line.id);
        const inputs: VariantInput[] = rows.map((v) => ({
          quantity: v.quantity,
          buyPrice: v.buy_price,
          extraCost: v.extra_cost,
          markupType: v.markup_type,
          markupValue: v.markup_value,
          markupSource: v.markup_source,
          unitPriceExGst: v.unit_price_ex_gst,
          isCustomLine: v.is_custom_line,
        }));
        const qty = lineQuantity(inputs);
        for (const input of inputs) {
          if (input.markupSource === "group") {
            const banded = rebandVariant({ ...input, markupSource: "group" }, qty, garment);
            if (!same(banded.markupValue, input.markupValue)) {
              fail("group markup", input.markupValue, banded.markupValue);
            }
          }
          const priced = priceVariant(input).unitPriceExGst;
          if (!same(priced, input.unitPriceExGst)) {
            fail("variant unitPriceExGst", input.unitPriceExGst, priced);
          }
        }
        const lineInput: LineInput = {
          lineType: "Garment",
          quantity: line.quantity,
          unitPriceExGst: line.unit_price_ex_gst,
          valueType: null,
          percentage: null,
          discountValueType: null,
          discountPercentage: null,
          variants: inputs,
        };
        const totals = lineTotals(lineInput as LineInput<"Garment">);
        if (totals.quantity !== line.quantity) {
          fail("line quantity", line.quantity, totals.quantity);
        }
        if (!same(totals.unitPriceExGst, line.unit_price_ex_gst)) {
          fail("line unitPriceExGst", line.unit_price_ex_gst, totals.unitPriceExGst);
        }
        lineInputs.push(lineInput);
      }
      const decorationInputs = decorations.filter((d) => d.quote_group_id === group.id).map((
        d,
      ) => {
        const input = {
          quantity: d.quantity,
          unitCost: d.unit_cost,
          markupType: d.markup_type,
          markupValue: d.markup_value,
          markupSource: "manual" as const,
          baseUnitCost: d.base_unit_cost,
          setupCost: d.setup_cost,
          setupMarkupType: d.setup_markup_type,
          setupMarkupValue: d.setup_markup_value,
          setupMarkupSource: "manual" as const,
          baseSetupCost: d.base_setup_cost,
          includeSetupCost: d.include_setup_cost,
          rollUp: false,
          rollUpSetup: false,
          showOnDocuments: true,
        };
        const totals = decorationTotals(input);
        if (!same(totals.baseUnitCost, d.base_unit_cost)) {
          fail("decoration baseUnitCost", d.base_unit_cost, totals.baseUnitCost);
        }
        if (!same(totals.baseSetupCost, d.base_setup_cost)) {
          fail("decoration baseSetupCost", d.base_setup_cost, totals.baseSetupCost);
        }
        return input;
      });
      groupInputs.push({ lines: lineInputs, decorations: decorationInputs });
    }
    const totals = quoteTotals(groupInputs, quote.tax_rate_pct);
    if (!same(totals.subtotalExGst, quote.subtotal_ex_gst)) {
      fail("subtotalExGst", quote.subtotal_ex_gst, totals.subtotalExGst);
    }
    if (!same(totals.gstAmount, quote.gst_amount)) {
      fail("gstAmount", quote.gst_amount, totals.gstAmount);
    }
    if (!same(totals.totalIncGst, quote.total_inc_gst)) {
      fail("totalIncGst", quote.total_inc_gst, totals.totalIncGst);
    }
  }
  return quotes.length;
}

/** Runs the whole quotes-at-scale bench on a running stack and returns its figures. */
export async function runQuotesBench(options: QuotesBenchOptions): Promise<QuotesReport> {
  const { organizationId, apiKey } = await benchOrganization(options, "Quotes Bench Shop");
  const headers = { "x-api-key": apiKey };
  const garment = await api<{ id: string }>(`${options.gatewayUrl}/v1/markup-groups`, {
    method: "POST",
    headers,
    body: { name: "Garments (bench)", lane: "garment", isDefault: true, bands: GARMENT_BANDS },
  });
  const taxRate = await api<{ id: string; name: string; ratePct: number }>(
    `${options.gatewayUrl}/v1/tax-rates`,
    { method: "POST", headers, body: { name: "GST", ratePct: 10, isDefault: true } },
  );

  const sql = connect(options.databaseUrl, {
    schema: "quotes",
    max: 4,
    applicationName: "bench-seed",
  });
  try {
    console.error(
      `[bench] seeding ${QUOTES_SEEDED} quotes (${GROUPS_PER_QUOTE} groups × ` +
        `${LINES_PER_GROUP} lines × ${VARIANTS_PER_LINE} variants + ${DECORATIONS_PER_GROUP} ` +
        `decorations per group) with SQL…`,
    );
    const seedSeconds = await seed(sql, organizationId, garment.id, taxRate);
    const vacuumStarted = performance.now();
    for (
      const table of [
        "quotes",
        "quote_groups",
        "quote_lines",
        "quote_variants",
        "quote_decorations",
        "quote_ref_counters",
        "markup_groups",
        "tax_rates",
      ]
    ) {
      await sql.unsafe(`VACUUM ANALYZE ${table}`);
    }
    const vacuumAnalyzeSeconds = (performance.now() - vacuumStarted) / 1000;
    const counts = await sql<{ table: string; rows: number }[]>`
      SELECT 'quotes' AS table, count(*)::int AS rows FROM quotes WHERE organization_id = ${organizationId}
      UNION ALL SELECT 'groups', count(*)::int FROM quote_groups WHERE organization_id = ${organizationId}
      UNION ALL SELECT 'lines', count(*)::int FROM quote_lines WHERE organization_id = ${organizationId}
      UNION ALL SELECT 'variants', count(*)::int FROM quote_variants
        WHERE organization_id = ${organizationId}
      UNION ALL SELECT 'decorations', count(*)::int FROM quote_decorations
        WHERE organization_id = ${organizationId}
      UNION ALL SELECT 'groupSourceVariants', count(*)::int FROM quote_variants
        WHERE organization_id = ${organizationId} AND markup_source = 'group'`;
    const rows = Object.fromEntries(counts.map((c) => [c.table, c.rows]));
    const { groupSourceVariants, ...tableRows } = rows;
    const pricingCheckedOnQuotes = await checkSeedPricing(sql, organizationId);

    // A quote created through the API after the seed continues the numbering.
    const next = await api<{ id: string; quoteRef: string }>(
      `${options.gatewayUrl}/v1/quotes`,
      { method: "POST", headers, body: { reference: "after the seed" } },
    );
    const expectedRef = `Q-${String(QUOTES_SEEDED + 1).padStart(5, "0")}`;
    if (next.quoteRef !== expectedRef) {
      throw new Error(`the first quote after the seed is ${next.quoteRef}, not ${expectedRef}`);
    }
    await api(`${options.gatewayUrl}/v1/quotes/${next.id}`, { method: "DELETE", headers });

    console.error(
      `[bench] GET /v1/quotes?limit=${PAGE}: ${LIST_SAMPLES} sequential requests, then ` +
        `${options.durationS} s at ${LIST_CONNECTIONS} connections…`,
    );
    const list = await listBench(options.gatewayUrl, headers, options.durationS);
    console.error(`[bench] PATCH /v1/quote-variants/{id}: ${PATCH_SAMPLES} re-bands…`);
    const reband = await rebandBench({
      sql,
      gatewayUrl: options.gatewayUrl,
      headers,
      organizationId,
    });

    return {
      date: new Date().toISOString(),
      machine: { cpus: navigator.hardwareConcurrency, deno: Deno.version.deno },
      seed: {
        organizationId: organizationId,
        quotes: QUOTES_SEEDED,
        perQuote: {
          groups: GROUPS_PER_QUOTE,
          garmentLinesPerGroup: LINES_PER_GROUP,
          variantsPerLine: VARIANTS_PER_LINE,
          decorationsPerGroup: DECORATIONS_PER_GROUP,
        },
        note: '"+ 2 decorations each" read as 2 decorations per group (6 per quote)',
        rows: tableRows,
        groupSourceVariants: groupSourceVariants ?? 0,
        garmentBands: GARMENT_BANDS,
        seedSeconds,
        vacuumAnalyzeSeconds,
        pricingCheckedOnQuotes,
      },
      list,
      reband,
    };
  } finally {
    await sql.end();
  }
}

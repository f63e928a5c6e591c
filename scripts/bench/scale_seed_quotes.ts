/**
 * The scale bench's full quotes, seeded with set-based SQL in the shape and pricing of
 * scripts/bench_quotes.ts (whose seed is private to it and sized by BENCH_QUOTES, so it is
 * followed here rather than imported): 3 groups × 4 Garment lines × 5 variants and 2 decorations
 * per group; lines 1–2 of a group banded through the organisation's default garment markup
 * group, line 3 a manual 45.5 %, line 4 a manual fixed 4.25; line, decoration and quote totals
 * derived as the pricing rules do. Unlike that seed it takes any number of organisations at once
 * and a range of quote numbers `n`, so the same database grows from ×1 to ×10 by seeding the
 * difference, and its ids are derived from (organisation, n) so the other seeds (tasks, proofs)
 * can point at quote n without reading it back.
 */
import { createHash } from "node:crypto";
import type { Sql } from "@printshop/shared/db";
import { bandCaseSql, FULL_QUOTE_SHAPE } from "./quotes_shape.ts";

const DECORATIONS_PER_GROUP = 2;
/** Quotes per transaction: each holds its temporary tables (60 variants a quote) in memory. */
const QUOTES_PER_CHUNK = 10_000;

/** One organisation's quotes n = firstN…lastN, and what their rows point at. */
export interface QuoteSeedOrg {
  organizationId: string;
  garmentGroupId: string;
  taxRateId: string;
  taxName: string;
  taxRatePct: number;
  firstN: number;
  lastN: number;
  /** The organisation's seeded customers: quote n's client is customer 1 + (n - 1) % this. */
  customers: number;
  /** Seconds between consecutive quotes' created_at, the newest ending at `until`. */
  stepSeconds: number;
  /** The largest n this organisation will ever be seeded to, so older n are older in time. */
  spanN: number;
}

/**
 * The id the seeds give row `n` of `kind` in an organisation (SQL, over text parameters): `n` in
 * its first 48 bits, as a uuidv7's time, so ids grow with `n` the way the product's grow with
 * time (and indexes are filled at their end, not at random); the rest from an md5 of the three,
 * with the version (7) and variant bits a UUID validator checks.
 */
export function seededIdSql(organization: string, kind: string, n: string): string {
  const md5 = `md5(${organization}::text || ':${kind}:' || (${n})::text)`;
  return `(lpad(to_hex(${n}), 12, '0') || '7' || substr(${md5}, 14, 3) || '8' || ` +
    `substr(${md5}, 18, 15))::uuid`;
}

/** The same id computed here, to address one seeded row from the bench. */
export function seededId(organizationId: string, kind: string, n: number): string {
  const md5 = createHash("md5").update(`${organizationId}:${kind}:${n}`).digest("hex");
  const hex = `${n.toString(16).padStart(12, "0")}7${md5.slice(13, 16)}8${md5.slice(17)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/** Splits the organisations' ranges into chunks of at most QUOTES_PER_CHUNK quotes. */
export function quoteChunks(
  orgs: readonly QuoteSeedOrg[],
  perChunk = QUOTES_PER_CHUNK,
): QuoteSeedOrg[][] {
  const chunks: QuoteSeedOrg[][] = [];
  let chunk: QuoteSeedOrg[] = [];
  let inChunk = 0;
  for (const org of orgs) {
    let first = org.firstN;
    while (first <= org.lastN) {
      const last = Math.min(org.lastN, first + (perChunk - inChunk) - 1);
      chunk.push({ ...org, firstN: first, lastN: last });
      inChunk += last - first + 1;
      first = last + 1;
      if (inChunk >= perChunk) {
        chunks.push(chunk);
        chunk = [];
        inChunk = 0;
      }
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Transactions seeding at once: the machine's two cores, while the stack is idle. */
const SEED_WORKERS = 2;

/**
 * Seeds the quotes of `orgs` in chunks, each chunk one transaction of set-based statements run
 * as the owner role with triggers off (`session_replication_role = replica`): the rows are
 * consistent by construction, and their quotes' stored documents are empty anyway, which is all
 * the document triggers would ensure. Each organisation's quote numbers are reserved from its
 * counter first (left at the last one, so API creates carry on), so chunks need no lock on it
 * and SEED_WORKERS of them run at once. Answers the quotes written.
 */
export async function seedQuotes(
  sql: Sql,
  orgs: readonly QuoteSeedOrg[],
  until: string,
): Promise<number> {
  if (orgs.length === 0) return 0;
  const wanted = sql.json(
    orgs.map((o) => ({ org: o.organizationId, count: o.lastN - o.firstN + 1 })),
  );
  await sql`INSERT INTO quotes.quote_ref_counters (organization_id, last_number)
    SELECT org, 0 FROM jsonb_to_recordset(${wanted}::jsonb) AS r(org uuid)
    ON CONFLICT (organization_id) DO NOTHING`;
  const reserved = await sql<{ org: string; base: number }[]>`
    UPDATE quotes.quote_ref_counters c SET last_number = c.last_number + w.count
    FROM jsonb_to_recordset(${wanted}::jsonb) AS w(org uuid, count int)
    WHERE c.organization_id = w.org
    RETURNING c.organization_id AS org, c.last_number - w.count AS base`;
  const baseOf = new Map(reserved.map((r) => [r.org, r.base]));
  const firstOf = new Map(orgs.map((o) => [o.organizationId, o.firstN]));
  const queue = quoteChunks(orgs);
  let written = 0;
  const worker = async (): Promise<void> => {
    for (let chunk = queue.shift(); chunk; chunk = queue.shift()) {
      written += await seedChunk(
        sql,
        chunk.map((o) => ({
          ...o,
          numberBase: baseOf.get(o.organizationId)! + o.firstN - firstOf.get(o.organizationId)!,
        })),
        until,
      );
    }
  };
  await Promise.all(Array.from({ length: SEED_WORKERS }, worker));
  return written;
}

async function seedChunk(
  sql: Sql,
  orgs: readonly (QuoteSeedOrg & { numberBase: number })[],
  until: string,
): Promise<number> {
  const rows = orgs.map((o) => ({
    org: o.organizationId,
    garment_group_id: o.garmentGroupId,
    tax_rate_id: o.taxRateId,
    tax_name: o.taxName,
    tax_pct: o.taxRatePct,
    first_n: o.firstN,
    last_n: o.lastN,
    number_base: o.numberBase,
    customers: o.customers,
    step_s: o.stepSeconds,
    span_n: o.spanN,
  }));
  const quoteId = seededIdSql("o.org", "quote", "n");
  const clientId = seededIdSql("o.org", "customer", "1 + (n - 1) % o.customers");
  return await sql.begin(async (tx) => {
    await tx`SET LOCAL work_mem = '256MB'`;
    await tx`SET LOCAL session_replication_role = replica`;
    // Each temporary table is analysed once made: without statistics the planner joins 600,000
    // variants to their quotes by nested loops (9 s for 5,000 quotes instead of well under 1).
    await tx`CREATE TEMP TABLE seed_o ON COMMIT DROP AS
      SELECT * FROM jsonb_to_recordset(${tx.json(rows)}::jsonb) AS r(
        org uuid, garment_group_id uuid, tax_rate_id uuid, tax_name text, tax_pct numeric,
        first_n int, last_n int, number_base int, customers int, step_s int, span_n int)`;
    await tx`ANALYZE seed_o`;
    await tx`CREATE TEMP TABLE seed_q ON COMMIT DROP AS
      SELECT o.org, n, ${tx.unsafe(quoteId)} AS id,
        o.number_base + n - o.first_n + 1 AS number,
        CASE WHEN o.customers > 0 THEN ${tx.unsafe(clientId)} END AS client_id,
        o.garment_group_id, o.tax_rate_id, o.tax_name, o.tax_pct,
        ${until}::timestamptz - (o.span_n - n + 1) * o.step_s * interval '1 second' AS at
      FROM seed_o o, generate_series(o.first_n, o.last_n) AS n`;
    await tx`ANALYZE seed_q`;
    await tx`CREATE TEMP TABLE seed_g ON COMMIT DROP AS
      SELECT q.org, q.n, g, uuidv7() AS id, q.id AS quote_id
      FROM seed_q q CROSS JOIN generate_series(1, ${FULL_QUOTE_SHAPE.groups}::int) AS g`;
    await tx`ANALYZE seed_g`;
    await tx`CREATE TEMP TABLE seed_l ON COMMIT DROP AS
      SELECT g.org, g.n, g.g, l, uuidv7() AS id, g.id AS group_id, g.quote_id
      FROM seed_g g CROSS JOIN generate_series(1, ${FULL_QUOTE_SHAPE.linesPerGroup}::int) AS l`;
    await tx`ANALYZE seed_l`;
    // Variants as bench_quotes.ts prices them: quantities 2..10, sell = cost ⊕ markup (4 dp).
    await tx`CREATE TEMP TABLE seed_v ON COMMIT DROP AS
      WITH base AS (
        SELECT l.org, l.n, l.g, l.l, v, uuidv7() AS id, l.id AS line_id, l.quote_id,
          (ARRAY['S', 'M', 'L', 'XL', '2XL'])[v] AS size,
          (ARRAY['Black', 'White', 'Navy', 'Heather Grey'])[l.l] AS colour,
          2 + (l.n * 7 + l.g * 5 + l.l * 3 + v * 11) % 9 AS quantity,
          (3.50 + ((l.n * 3 + l.l * 7) % 15) * 0.45 + (v - 1) * 0.35)::numeric(18, 4) AS buy_price,
          (CASE WHEN v >= 4 THEN 0.75 ELSE 0 END)::numeric(18, 4) AS extra_cost,
          CASE WHEN l.l <= 2 THEN 'group' ELSE 'manual' END AS markup_source
        FROM seed_l l CROSS JOIN generate_series(1, ${FULL_QUOTE_SHAPE.variantsPerLine}::int) AS v
      ),
      line_qty AS (SELECT line_id, sum(quantity)::int AS qty FROM base GROUP BY line_id),
      marked AS (
        SELECT b.*,
          CASE WHEN b.l = 4 THEN 'fixed' ELSE 'percentage' END AS markup_type,
          (CASE WHEN b.markup_source = 'group' THEN ${tx.unsafe(bandCaseSql("q.qty"))}
            WHEN b.l = 3 THEN 45.5 ELSE 4.25 END)::numeric(30, 10) AS markup_value
        FROM base b JOIN line_qty q USING (line_id)
      )
      SELECT m.*,
        CASE WHEN m.markup_type = 'percentage'
          THEN round((m.buy_price + m.extra_cost) * (100 + m.markup_value) / 100, 4)
          ELSE round(m.buy_price + m.extra_cost + m.markup_value, 4)
        END::numeric(18, 4) AS unit_price
      FROM marked m`;
    await tx`ANALYZE seed_v`;
    await tx`CREATE TEMP TABLE seed_lines ON COMMIT DROP AS
      SELECT l.*, s.qty, s.total, round(s.total / s.qty, 4)::numeric(18, 4) AS unit_price
      FROM seed_l l JOIN (
        SELECT line_id, sum(quantity)::int AS qty, sum(quantity * unit_price) AS total
        FROM seed_v GROUP BY line_id
      ) s ON s.line_id = l.id`;
    await tx`ANALYZE seed_lines`;
    await tx`CREATE TEMP TABLE seed_d ON COMMIT DROP AS
      WITH costed AS (
        SELECT g.org, g.n, g.g, d, uuidv7() AS id, g.id AS group_id, g.quote_id, gq.qty,
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
    await tx`ANALYZE seed_d`;
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
      SELECT s.quote_id, s.subtotal, round(s.subtotal * q.tax_pct / 100, 2) AS gst
      FROM sub s JOIN seed_q q ON q.id = s.quote_id`;
    await tx`ANALYZE seed_totals`;

    const inserted = await tx`
      INSERT INTO quotes.quotes (
        id, organization_id, quote_number, quote_ref, status, subtotal_ex_gst, gst_amount,
        total_inc_gst, reference, client_id, sales_rep_email, delivery_method, delivery_date,
        notes, tax_rate_id, tax_name, tax_rate_pct, sent_to_email, sent_at, created_at, updated_at
      )
      SELECT q.id, q.org, q.number,
        'Q-' || CASE WHEN q.number >= 10000 THEN q.number::text ELSE lpad(q.number::text, 5, '0')
          END,
        CASE q.n % 10 WHEN 0 THEN 'sent' WHEN 5 THEN 'approved' ELSE 'draft' END,
        t.subtotal, t.gst, t.subtotal + t.gst,
        'PO-' || (100000 + q.n), q.client_id,
        'rep' || (q.n % 5) || '@bench.test',
        CASE WHEN q.n % 3 = 0 THEN 'Courier' ELSE 'Pickup' END,
        current_date + (q.n % 60),
        CASE WHEN q.n % 4 = 0 THEN 'Seeded by deno task bench:scale' END,
        q.tax_rate_id, q.tax_name, q.tax_pct,
        CASE WHEN q.n % 10 = 0 THEN 'buyer' || q.n || '@client.test' END,
        CASE WHEN q.n % 10 = 0 THEN q.at + interval '1 hour' END,
        q.at, q.at
      FROM seed_q q JOIN seed_totals t ON t.quote_id = q.id
      ORDER BY q.org, q.n`;
    await tx`
      INSERT INTO quotes.quote_groups (id, organization_id, quote_id, name, sort_order)
      SELECT id, org, quote_id, (ARRAY['Staff uniforms', 'Event tees', 'Merch pack'])[g], g
      FROM seed_g ORDER BY org, n, g`;
    await tx`
      INSERT INTO quotes.quote_lines (
        id, organization_id, quote_id, quote_group_id, line_type, product_name, product_sku,
        title, quantity, unit_price_ex_gst, sort_order
      )
      SELECT id, org, quote_id, group_id, 'Garment',
        (ARRAY['Staple Tee', 'Classic Hood', 'Heavy Tee', 'Polo'])[l],
        'AS-500' || l, 'Garment ' || l, qty, unit_price, l
      FROM seed_lines ORDER BY org, n, g, l`;
    await tx`
      INSERT INTO quotes.quote_variants (
        id, organization_id, quote_id, quote_line_id, size, colour, quantity, unit_price_ex_gst,
        buy_price, extra_cost, markup_type, markup_value, markup_source, markup_group_id,
        sort_order
      )
      SELECT v.id, v.org, v.quote_id, v.line_id, v.size, v.colour, v.quantity, v.unit_price,
        v.buy_price, v.extra_cost, v.markup_type, v.markup_value, v.markup_source,
        CASE WHEN v.markup_source = 'group' THEN q.garment_group_id END, v.v
      FROM seed_v v JOIN seed_q q ON q.id = v.quote_id ORDER BY v.org, v.n, v.g, v.l, v.v`;
    await tx`
      INSERT INTO quotes.quote_decorations (
        id, organization_id, quote_id, quote_group_id, method, position, quantity, unit_cost,
        setup_cost, base_unit_cost, base_setup_cost, include_setup_cost, markup_type,
        markup_value, setup_markup_type, setup_markup_value, colour_count, colours, sort_order
      )
      SELECT id, org, quote_id, group_id, method, position, qty, unit_cost,
        setup_cost, base_unit_cost, base_setup_cost, include_setup_cost, markup_type,
        markup_value, 'percentage', setup_markup_value,
        CASE WHEN d = 1 THEN 2 END,
        CASE WHEN d = 1
          THEN '[{"name": "White", "isBase": true}, {"name": "Navy", "isBase": false}]'::jsonb
          ELSE '[]'::jsonb END,
        d
      FROM seed_d ORDER BY org, n, g, d`;
    return inserted.count;
  });
}

/**
 * The scale bench's seed (issue 32): grows one organisation's data from one size to the next
 * (scale_sizes.ts) with set-based SQL, seeding only the difference, so one database goes from
 * ×1 to ×3 to ×10; the crowd of other organisations is seeded with the first size.
 *
 * Every statement runs as the bench cluster's superuser, on the stack's database URL, as
 * scripts/bench_quotes.ts seeds (it owns the schemas' data and is not held to the tenancy
 * policies), with triggers off (`session_replication_role = replica`): the rows are consistent
 * by construction (ids derived from (organisation, n), so a task can name quote n without
 * reading it back), and checking each row's foreign keys and firing the quote-document triggers
 * would only add to the seed's time what the API calls are measured for.
 *
 * What each row looks like follows the benches before it: customers as scripts/bench_crm.ts
 * seeds them (plus contacts, custom-field values and the quotes service's copy of each, so a
 * quote's client name is known to its search), catalogue items as
 * scripts/bench/catalogue_paging.ts (plus 10 variants each and a stock ledger whose running
 * figure ends at the variant's stock), quotes as scripts/bench_quotes.ts (scale_seed_quotes.ts).
 */
import type { Sql } from "@printshop/shared/db";
import {
  LEDGER_ROWS_PER_VARIANT,
  longLedgerRows,
  QUOTES_PER_OTHER_ORGANIZATION,
  type ScaleSize,
  VARIANTS_PER_ITEM,
} from "./scale_sizes.ts";
import { type QuoteSeedOrg, seededIdSql, seedQuotes } from "./scale_seed_quotes.ts";

/** What the API made for the shop before seeding, which seeded rows point at. */
export interface SeedShop {
  organizationId: string;
  /** The shop's API key id: the credential its seeded ledger rows name. */
  apiKeyId: string;
  garmentGroupId: string;
  taxRate: { id: string; name: string; ratePct: number };
  /** Custom fields of customers: a select (region) and a text (account manager). */
  customFieldIds: { region: string; accountManager: string };
  /** The subscription whose delivery history is seeded (an event the bench never fires). */
  historyWebhookId: string;
  /** Seeded rows are older than this (ISO time), the newest last. */
  until: string;
  /** The largest size, so that row n is as old at every size. */
  largest: ScaleSize;
}

/** Another organisation of the crowd, with the markup group and tax rate its quotes use. */
export interface CrowdOrganization {
  organizationId: string;
  garmentGroupId: string;
  taxRateId: string;
}

/** Seconds each part of one growth took, by part. */
export type SeedSeconds = Record<string, number>;

const id = (kind: string, n: string): string => seededIdSql("${org}", kind, n);

/** `text` with the organisation id in place of `${org}` (a trusted uuid, as a literal). */
function withOrg(text: string, organizationId: string): string {
  if (!/^[0-9a-f-]{36}$/.test(organizationId)) throw new Error(`not a uuid: ${organizationId}`);
  return text.replaceAll("${org}", `'${organizationId}'::uuid`);
}

/** One statement of the seed, in a transaction of its own with triggers off. */
async function seedStatement(sql: Sql, text: string, organizationId: string): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx`SET LOCAL work_mem = '256MB'`;
    await tx`SET LOCAL session_replication_role = replica`;
    const result = await tx.unsafe(withOrg(text, organizationId));
    return result.count;
  });
}

async function timed(
  seconds: SeedSeconds,
  part: string,
  fn: () => Promise<unknown>,
): Promise<void> {
  const started = performance.now();
  await fn();
  seconds[part] = (seconds[part] ?? 0) + (performance.now() - started) / 1000;
}

/**
 * The crowd's markup groups and tax rates: copies of the shop's, one each per organisation, so
 * their quotes price as the shop's do. Answers the crowd as the quotes seed takes it.
 */
export async function prepareCrowd(
  sql: Sql,
  shop: SeedShop,
  organizationIds: readonly string[],
): Promise<CrowdOrganization[]> {
  if (organizationIds.length === 0) return [];
  const groups = await sql<{ organization_id: string; id: string }[]>`
    INSERT INTO quotes.markup_groups (
      id, organization_id, name, lane, decoration_method, is_default, applies_to_setup_cost,
      bands
    )
    SELECT gen_random_uuid(), o, m.name, m.lane, m.decoration_method, true,
      m.applies_to_setup_cost, m.bands
    FROM quotes.markup_groups m, unnest(${organizationIds}::uuid[]) AS o
    WHERE m.id = ${shop.garmentGroupId}
    RETURNING organization_id, id`;
  const rates = await sql<{ organization_id: string; id: string }[]>`
    INSERT INTO quotes.tax_rates (id, organization_id, name, rate_pct, is_default)
    SELECT gen_random_uuid(), o, ${shop.taxRate.name}, ${shop.taxRate.ratePct}, true
    FROM unnest(${organizationIds}::uuid[]) AS o
    RETURNING organization_id, id`;
  const rateOf = new Map(rates.map((r) => [r.organization_id, r.id]));
  return groups.map((g) => ({
    organizationId: g.organization_id,
    garmentGroupId: g.id,
    taxRateId: rateOf.get(g.organization_id)!,
  }));
}

/**
 * Grows the shop from `from` to `to` (and seeds the crowd when `from` has none): customers
 * first (quotes, tasks and the catalogue point at them or at vendors), then the rest. Answers
 * the seconds of each part.
 */
export async function growTo(
  sql: Sql,
  shop: SeedShop,
  crowd: readonly CrowdOrganization[],
  from: ScaleSize,
  to: ScaleSize,
): Promise<SeedSeconds> {
  const seconds: SeedSeconds = {};
  const org = shop.organizationId;
  const run = (text: string): Promise<number> => seedStatement(sql, text, org);
  const span = shop.largest;
  const until = `'${new Date(shop.until).toISOString()}'::timestamptz`;

  await timed(seconds, "customers", async () => {
    if (to.customers <= from.customers) return;
    const range = `generate_series(${from.customers + 1}, ${to.customers}) AS n`;
    const at = `LATERAL (SELECT ${until} - (${span.customers} - n + 1) * interval '5 seconds') ` +
      `AS t(at)`;
    const region = shop.customFieldIds.region.toLowerCase();
    const manager = shop.customFieldIds.accountManager.toLowerCase();
    // The oldest tierBlock customers are the bulk tier change's target, all silver, none
    // archived; the rest spread over the other tiers, a few archived.
    await run(`
      INSERT INTO crm.customers (
        id, organization_id, company_name, email, phone, tier, tags, tax_exempt, tax_number,
        sales_rep_email, notes, custom_fields, is_archived, created_at, updated_at
      )
      SELECT ${id("customer", "n")}, \${org}, 'Scale Customer ' || lpad(n::text, 6, '0'),
        'orders' || n || '@customer.scale.test', '+61 2 9555 ' || lpad((n % 10000)::text, 4, '0'),
        CASE WHEN n <= ${to.tierBlock} THEN 'silver'
          ELSE (ARRAY['standard', 'bronze', 'gold'])[1 + n % 3] END,
        ARRAY['scale', (ARRAY['hospitality', 'sport', 'school', 'retail'])[1 + n % 4]],
        n % 10 = 0, CASE WHEN n % 3 = 0 THEN 'ABN ' || n END, 'rep' || (n % 4) || '@scale.test',
        CASE WHEN n % 5 = 0 THEN 'Seeded by deno task bench:scale' END,
        jsonb_build_object('${region}', (ARRAY['North', 'South', 'East', 'West'])[1 + n % 4],
          '${manager}', 'Manager ' || (n % 20)),
        n > ${to.tierBlock} AND n % 50 = 0, t.at, t.at
      FROM ${range}, ${at}`);
    await run(`
      INSERT INTO crm.customer_contacts (
        id, organization_id, customer_id, first_name, last_name, email, phone, role, created_at,
        updated_at
      )
      SELECT uuidv7(), \${org}, ${id("customer", "n")},
        (ARRAY['Sam', 'Alex', 'Jo', 'Mia', 'Lee'])[1 + (n + k) % 5], 'Contact ' || n,
        'contact' || k || '.' || n || '@customer.scale.test', '+61 400 ' || lpad(n::text, 6, '0'),
        CASE k WHEN 1 THEN 'Buyer' ELSE 'Accounts' END,
        t.at + k * interval '1 millisecond', t.at + k * interval '1 millisecond'
      FROM ${range}, generate_series(1, 1 + n % 2) AS k, ${at}`);
    // The quotes service's copy of each customer, as its consumer would have made it from the
    // customer.created events the seed did not write: a quote's client name comes from here.
    await run(`
      INSERT INTO quotes.crm_customers (
        organization_id, id, name, is_archived, deleted, occurred_at, event_id
      )
      SELECT c.organization_id, c.id, c.company_name, c.is_archived, false, c.updated_at,
        gen_random_uuid()
      FROM ${range}
      JOIN crm.customers c ON c.organization_id = \${org} AND c.id = ${id("customer", "n")}`);
  });

  await timed(seconds, "vendors", async () => {
    if (to.vendors <= from.vendors) return;
    await run(`
      INSERT INTO crm.vendors (
        id, organization_id, name, kind, service_types, archived_at, account_number,
        default_lead_time_days, minimum_order, notes, created_at, updated_at
      )
      SELECT ${id("vendor", "n")}, \${org}, 'Scale Vendor ' || lpad(n::text, 6, '0'), k.kind,
        CASE WHEN k.kind = 'Decorator'
          THEN ARRAY[(ARRAY['ScreenPrint', 'Embroidery', 'DirectToGarment'])[1 + n % 3]]
          ELSE '{}'::text[] END,
        CASE WHEN n % 10 = 0 THEN t.at END, 'ACC-' || n, 3 + n % 20, 50 + (n % 10) * 25,
        CASE WHEN n % 4 = 0 THEN 'Seeded by deno task bench:scale' END, t.at, t.at
      FROM generate_series(${from.vendors + 1}, ${to.vendors}) AS n,
        LATERAL (SELECT (ARRAY['InventorySupplier', 'Decorator', 'ConsumablesSupplier',
          'Freight', 'Other'])[1 + n % 5]) AS k(kind),
        LATERAL (SELECT ${until} - (${span.vendors} - n + 1) * interval '1 minute') AS t(at)`);
  });

  await timed(seconds, "quotes", async () => {
    const orgs: QuoteSeedOrg[] = [];
    if (to.quotes > from.quotes) {
      orgs.push({
        organizationId: org,
        garmentGroupId: shop.garmentGroupId,
        taxRateId: shop.taxRate.id,
        taxName: shop.taxRate.name,
        taxRatePct: shop.taxRate.ratePct,
        firstN: from.quotes + 1,
        lastN: to.quotes,
        customers: to.customers,
        stepSeconds: 10,
        spanN: span.quotes,
      });
    }
    if (from.otherOrganizations === 0) {
      for (const other of crowd) {
        orgs.push({
          organizationId: other.organizationId,
          garmentGroupId: other.garmentGroupId,
          taxRateId: other.taxRateId,
          taxName: shop.taxRate.name,
          taxRatePct: shop.taxRate.ratePct,
          firstN: 1,
          lastN: QUOTES_PER_OTHER_ORGANIZATION,
          customers: 0,
          // The crowd's quotes over the same weeks as the shop's.
          stepSeconds: Math.round((10 * span.quotes) / QUOTES_PER_OTHER_ORGANIZATION),
          spanN: QUOTES_PER_OTHER_ORGANIZATION,
        });
      }
    }
    await seedQuotes(sql, orgs, new Date(shop.until).toISOString());
  });

  await timed(seconds, "tasks", async () => {
    if (to.tasks <= from.tasks) return;
    await run(`
      INSERT INTO crm.tasks (
        id, organization_id, title, description, status, priority, due_date, assignee_email,
        quote_id, customer_id, vendor_id, completed_at, created_at, updated_at
      )
      SELECT ${id("task", "n")}, \${org}, 'Scale task ' || n,
        CASE WHEN n % 3 = 0 THEN 'Seeded by deno task bench:scale' END, s.status,
        (ARRAY['low', 'normal', 'high', 'urgent'])[1 + n % 4],
        current_date + (n % 90) - 30, 'staff' || (n % 8) || '@scale.test',
        CASE WHEN n % 2 = 0 THEN ${id("quote", `1 + (n - 1) % ${to.quotes}`)} END,
        CASE WHEN n % 3 = 0 THEN ${id("customer", `1 + (n - 1) % ${to.customers}`)} END,
        CASE WHEN n % 7 = 0 THEN ${id("vendor", `1 + (n - 1) % ${to.vendors}`)} END,
        CASE WHEN s.status = 'done' THEN t.at + interval '1 day' END, t.at, t.at
      FROM generate_series(${from.tasks + 1}, ${to.tasks}) AS n,
        LATERAL (SELECT (ARRAY['todo', 'in_progress', 'done', 'cancelled'])[1 + n % 4])
          AS s(status),
        LATERAL (SELECT ${until} - (${span.tasks} - n + 1) * interval '10 seconds') AS t(at)`);
  });

  await timed(seconds, "proofs", async () => {
    if (to.proofs <= from.proofs) return;
    const range = `generate_series(${from.proofs + 1}, ${to.proofs}) AS n`;
    const at = `LATERAL (SELECT ${until} - (${span.proofs} - n + 1) * interval '10 seconds') ` +
      `AS t(at)`;
    await run(`
      INSERT INTO proofs.proofs (
        id, organization_id, quote_id, title, recipient_name, recipient_email, status,
        current_revision, created_at, updated_at
      )
      SELECT ${id("proof", "n")}, \${org}, ${id("quote", `1 + (n - 1) % ${to.quotes}`)},
        'Scale proof ' || n, 'Recipient ' || (n % 500), 'buyer' || (n % 500) || '@client.scale.test',
        (ARRAY['draft', 'draft', 'draft', 'sent', 'approved', 'changes_requested'])[1 + n % 6],
        1, t.at, t.at
      FROM ${range}, ${at}`);
    await run(`
      INSERT INTO proofs.proof_revisions (
        id, organization_id, proof_id, number, image_urls, notes, created_at
      )
      SELECT ${id("proof-revision", "n")}, \${org}, ${id("proof", "n")}, 1,
        ARRAY['https://files.scale.test/proofs/' || n || '.png'],
        CASE WHEN n % 4 = 0 THEN 'Seeded by deno task bench:scale' END, t.at
      FROM ${range}, ${at}`);
  });

  await timed(seconds, "catalogue", async () => {
    if (to.catalogueItems > from.catalogueItems) {
      await run(`
        INSERT INTO catalogue.catalogue_items (
          id, organization_id, style_code, name, brand, description, category,
          supplier_vendor_id, fabric, weight_gsm, images, source, external_id, buy_price,
          created_at, updated_at
        )
        SELECT ${id("item", "n")}, \${org}, 'SC-' || lpad(n::text, 6, '0'),
          (ARRAY['Staple Tee', 'Classic Hood', 'Heavy Tee', 'Polo', 'Crew'])[1 + n % 5] || ' ' || n,
          (ARRAY['Gildan', 'AS Colour', 'Bella+Canvas', 'Next Level'])[1 + n % 4],
          CASE WHEN n % 3 = 0 THEN 'Seeded by deno task bench:scale' END,
          (ARRAY['T-shirts', 'Hoodies', 'Polos', 'Sweats', 'Caps'])[1 + n % 5],
          CASE WHEN n % 2 = 0 THEN ${id("vendor", `1 + n % ${to.vendors}`)} END,
          '100% combed cotton', 150 + n % 150,
          ARRAY['https://cdn.scale.test/styles/' || n || '/main.jpg'], 'supplier_feed',
          'EXT-' || n, round(2 + (n % 700) * 0.0125, 4), t.at, t.at
        FROM generate_series(${from.catalogueItems + 1}, ${to.catalogueItems}) AS n,
          LATERAL (SELECT ${until} - (${span.catalogueItems} - n + 1) * interval '1 minute')
            AS t(at)`);
    }
    if (to.variants > from.variants) {
      // Variant m is item 1 + (m - 1) / 10's v-th (2 colours × 5 sizes); its stock is what its
      // ledger below adds up to (the long-ledger variant, m = 1, gets its own further down).
      const delta = (m: string, k: string): string =>
        `CASE WHEN ${k} % 4 = 0 THEN -1 ELSE 1 + (${m} + ${k}) % 5 END`;
      const variantAt = `LATERAL (SELECT ${until} - (${span.catalogueItems} - i + 1) * ` +
        `interval '1 minute' + v * interval '1 millisecond') AS t(at)`;
      const range = `generate_series(${from.variants + 1}, ${to.variants}) AS m,
        LATERAL (SELECT 1 + (m - 1) / ${VARIANTS_PER_ITEM}, 1 + (m - 1) % ${VARIANTS_PER_ITEM})
          AS p(i, v)`;
      await run(`
        INSERT INTO catalogue.garment_variants (
          id, organization_id, garment_catalogue_item_id, style_code, color, size, size_key,
          stock_code, unit_price, external_id, stock_on_hand, created_at, updated_at
        )
        SELECT ${id("variant", "m")}, \${org}, ${id("item", "i")}, 'SC-' || lpad(i::text, 6, '0'),
          (ARRAY['Black', 'White'])[1 + (v - 1) / 5], s.size, upper(s.size),
          'SC-' || i || '-' || v, round(4 + (m % 300) * 0.05, 4), 'VEXT-' || m,
          CASE WHEN m = 1 THEN 0 ELSE (SELECT sum(${delta("m", "k")})
            FROM generate_series(1, ${LEDGER_ROWS_PER_VARIANT}) AS k) END,
          t.at, t.at
        FROM ${range},
          LATERAL (SELECT (ARRAY['S', 'M', 'L', 'XL', '2XL'])[1 + (v - 1) % 5]) AS s(size),
          ${variantAt}`);
      await run(`
        INSERT INTO catalogue.stock_adjustments (
          id, organization_id, garment_variant_id, location, delta, reason, reference,
          stock_on_hand_after, credential_kind, credential_id, created_at
        )
        SELECT uuidv7(), \${org}, ${id("variant", "m")}, NULL, d.delta,
          CASE WHEN k = 1 THEN 'opening' WHEN d.delta < 0 THEN 'shipped'
            ELSE (ARRAY['received', 'returned'])[1 + k % 2] END,
          CASE WHEN k % 3 = 0 THEN 'PO-' || m END,
          sum(d.delta) OVER (PARTITION BY m ORDER BY k), 'tenant_key', '${shop.apiKeyId}',
          t.at + k * interval '1 second'
        FROM ${range}, generate_series(1, ${LEDGER_ROWS_PER_VARIANT}) AS k,
          LATERAL (SELECT ${delta("m", "k")}) AS d(delta), ${variantAt}
        WHERE m > 1`);
    }
    // The long ledger continues from the variant's stock now (API adjustments included), its
    // rows the newest of the ledger, microseconds apart.
    const fromLong = from.variants === 0 ? 0 : longLedgerRows(from);
    const toLong = longLedgerRows(to);
    if (toLong > fromLong) {
      await run(`
        WITH cur AS (
          SELECT stock_on_hand FROM catalogue.garment_variants
          WHERE organization_id = \${org} AND id = ${id("variant", "1")} FOR UPDATE
        ), rows AS (
          SELECT k, CASE WHEN k % 4 = 0 THEN -1 ELSE 1 + k % 5 END AS delta
          FROM generate_series(${fromLong + 1}, ${toLong}) AS k
        ), ins AS (
          INSERT INTO catalogue.stock_adjustments (
            id, organization_id, garment_variant_id, location, delta, reason, reference,
            stock_on_hand_after, credential_kind, credential_id, created_at
          )
          SELECT uuidv7(), \${org}, ${id("variant", "1")}, NULL, r.delta,
            CASE WHEN r.delta < 0 THEN 'shipped' ELSE (ARRAY['received', 'returned'])[1 + k % 2]
              END,
            CASE WHEN k % 3 = 0 THEN 'PO-L' || k END,
            cur.stock_on_hand + sum(r.delta) OVER (ORDER BY k), 'tenant_key', '${shop.apiKeyId}',
            now() - (${toLong} - k) * interval '1 microsecond'
          FROM rows r, cur
          RETURNING delta
        )
        UPDATE catalogue.garment_variants
        SET stock_on_hand = stock_on_hand + (SELECT sum(delta) FROM ins), updated_at = now()
        WHERE organization_id = \${org} AND id = ${id("variant", "1")}`);
    }
  });

  await timed(seconds, "deliveries", async () => {
    if (to.deliveries <= from.deliveries) return;
    const range = `generate_series(${from.deliveries + 1}, ${to.deliveries}) AS n`;
    const at = `LATERAL (SELECT ${until} - (${span.deliveries} - n + 1) * interval '1 second') ` +
      `AS t(at)`;
    const proof = id("proof", `1 + (n - 1) % ${to.proofs}`);
    await run(`
      INSERT INTO webhooks.events (
        id, organization_id, type, aggregate_id, occurred_at, data, recorded_at
      )
      SELECT ${id("event", "n")}, \${org}, 'proof.viewed', ${proof}, t.at,
        jsonb_build_object('id', ${proof}, 'viewedAt', t.at), t.at
      FROM ${range}, ${at} ORDER BY n`);
    await run(`
      INSERT INTO webhooks.deliveries (
        id, organization_id, subscription_id, event_id, status, attempt_count, next_attempt_at,
        last_http_status, last_failure_reason, created_at
      )
      SELECT ${id("delivery", "n")}, \${org}, '${shop.historyWebhookId}', ${id("event", "n")},
        CASE WHEN n % 20 = 0 THEN 'failed' ELSE 'succeeded' END,
        CASE WHEN n % 20 = 0 THEN 5 ELSE 1 END, NULL,
        CASE WHEN n % 20 = 0 THEN 500 ELSE 204 END,
        CASE WHEN n % 20 = 0 THEN 'HTTP 500' END, t.at
      FROM ${range}, ${at}`);
    await run(`
      INSERT INTO webhooks.delivery_attempts (
        id, organization_id, delivery_id, attempt, started_at, duration_ms, http_status,
        succeeded, failure_reason, trigger
      )
      SELECT uuidv7(), \${org}, ${id("delivery", "n")}, 1,
        t.at + interval '50 milliseconds', 40 + n % 60,
        CASE WHEN n % 20 = 0 THEN 500 ELSE 204 END, n % 20 <> 0,
        CASE WHEN n % 20 = 0 THEN 'HTTP 500' END, 'automatic'
      FROM ${range}, ${at}`);
  });
  return seconds;
}

/** VACUUM ANALYZE of the whole database after a seed; answers the seconds it took. */
export async function vacuumAnalyze(sql: Sql): Promise<number> {
  const started = performance.now();
  await sql.unsafe("VACUUM ANALYZE");
  return (performance.now() - started) / 1000;
}

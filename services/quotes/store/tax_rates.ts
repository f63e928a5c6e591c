import { type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateTaxRateBody,
  ListTaxRatesQuery,
  type TAX_RATE_SORT_FIELDS,
  type TaxRate,
} from "@printshop/shared/contracts/quotes";
import type { FieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { ApiError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";

/** The tax_rates table, declared once: the resource's columns, and those lists use. */
const TAX_RATES = defineTable({
  name: "tax_rates",
  tenant: true,
  noun: "Tax rate",
  columns: {
    id: col.uuid(),
    name: col.text().filterable(),
    ratePct: col.number().filterable(),
    isDefault: col.boolean().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type TaxRateRow = RowOf<typeof TAX_RATES>;

/** The organisation's default until it chooses another. */
export const DEFAULT_TAX_RATE = { name: "GST", ratePct: "10" } as const;

/** What a quote copies from its tax rate. `ratePct` is the exact `numeric` text, e.g. "10.0000". */
export interface TaxRateRef {
  id: string;
  name: string;
  ratePct: string;
}

/** The rate as a quote copies it: the exact text, where the resource answers a JSON number. */
function toRef(row: TaxRateRow): TaxRateRef {
  return { id: row.id, name: row.name, ratePct: row.rate_pct };
}

/** A pool (its statements autocommit) rather than an open transaction. */
function isPool(sql: Queryable): sql is Sql {
  return "begin" in sql;
}

/**
 * Serialises, for the rest of the transaction, every write that creates or moves one
 * organisation's default tax rate (the lazy GST insert and `createTaxRate` with `isDefault`).
 * Without it, a lazy GST insert racing a new default could leave the latter's insert to fail on
 * the one-default index.
 */
async function lockDefault(tx: Queryable, organizationId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('tax_rates.default'), hashtext(${organizationId}))`;
}

async function findDefault(sql: Queryable, organizationId: string): Promise<TaxRateRow | null> {
  // Given the pool, a read for the organisation: a statement sent straight to it sees no rate.
  const [row] = await read(sql, (q) =>
    q<TaxRateRow[]>`
      SELECT ${q.unsafe(TAX_RATES.select)} FROM tax_rates
      WHERE organization_id = ${organizationId} AND is_default`);
  return row ?? null;
}

/**
 * The organisation's default tax rate, creating "GST" 10 % (with its `tax_rate.created` event) the
 * first time an organisation without a default needs one. Race-free: concurrent first calls
 * create exactly one, through the partial unique index `tax_rates_one_default`
 * (`ON CONFLICT … DO NOTHING`, then read what won). Give it the transaction that uses the rate
 * (e.g. a quote create); given the pool, it opens its own transaction for the insert and event.
 */
export async function ensureDefaultTaxRate(
  tx: Queryable,
  organizationId: string,
): Promise<TaxRateRef> {
  const existing = await findDefault(tx, organizationId);
  if (existing) return toRef(existing);
  if (isPool(tx)) {
    return await transaction(tx, (inner) => createDefault(inner, organizationId));
  }
  return await createDefault(tx, organizationId);
}

async function createDefault(tx: Queryable, organizationId: string): Promise<TaxRateRef> {
  await lockDefault(tx, organizationId);
  const [inserted] = await tx<TaxRateRow[]>`
    INSERT INTO tax_rates (id, organization_id, name, rate_pct, is_default)
    VALUES (${uuidv7()}, ${organizationId}, ${DEFAULT_TAX_RATE.name},
            ${DEFAULT_TAX_RATE.ratePct}, true)
    ON CONFLICT (organization_id) WHERE is_default DO NOTHING
    RETURNING ${tx.unsafe(TAX_RATES.select)}`;
  if (inserted) {
    const rate = TAX_RATES.read(inserted);
    await writeEvent(tx, {
      organizationId,
      type: "tax_rate.created",
      aggregateId: rate.id,
      payload: rate,
    });
    return toRef(inserted);
  }
  const winner = await findDefault(tx, organizationId);
  if (!winner) throw new Error(`No default tax rate for organisation ${organizationId}`);
  return toRef(winner);
}

/** The organisation's default tax rate, or null when it has none yet (nothing is created). */
export async function findDefaultTaxRate(
  sql: Queryable,
  organizationId: string,
): Promise<TaxRateRef | null> {
  const row = await findDefault(sql, organizationId);
  return row ? toRef(row) : null;
}

/** A write names a tax rate the organisation does not have. */
export function unknownTaxRate(id: string): ApiError {
  return new ApiError("validation_error", `Tax rate "${id}" was not found`, [
    { path: "taxRateId", message: "No such tax rate in this organisation" },
  ]);
}

/** One of the organisation's tax rates, or null when it has none with that id. */
export async function findTaxRate(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<TaxRateRef | null> {
  const row = await TAX_RATES.find(tx, organizationId, id);
  return row ? toRef(row) : null;
}

/** The tax-rate list's fields: what `filters` may name, and what `sortField` orders on. */
export const TAX_RATE_FIELDS = TAX_RATES.fields() satisfies FieldTable<
  typeof TAX_RATE_SORT_FIELDS[number]
>;

const TAX_RATE_LIST = listSpec(ListTaxRatesQuery, {
  from: "tax_rates",
  select: TAX_RATES.select,
  fields: TAX_RATE_FIELDS,
  first: "is_default DESC",
  order: { field: "createdAt", direction: "asc" },
});

/** One page of the organisation's tax rates, the default first unless a sort is asked for. */
export async function listTaxRates(
  sql: Sql,
  organizationId: string,
  query: ListTaxRatesQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<TaxRate>> {
  await ensureDefaultTaxRate(sql, organizationId);
  return await offsetPage(
    sql,
    TAX_RATE_LIST,
    { where: TAX_RATES.ofOrganization(organizationId)(sql), query, pageSizeMax },
    (rows: TaxRateRow[]) => rows.map(TAX_RATES.read),
  );
}

/**
 * Creates a tax rate. With `isDefault` it becomes the organisation's default: the previous default
 * is unset (with a `tax_rate.updated` event) in the same transaction. Without it, an
 * organisation that has no default yet gets nothing extra: GST 10 % appears when one is needed.
 */
export async function createTaxRate(
  sql: Sql,
  organizationId: string,
  input: CreateTaxRateBody,
): Promise<TaxRate> {
  const isDefault = input.isDefault ?? false;
  return await transaction(sql, async (tx) => {
    const id = uuidv7();
    if (isDefault) {
      await lockDefault(tx, organizationId);
      const previous = await tx<TaxRateRow[]>`
        UPDATE tax_rates SET is_default = false, updated_at = now()
        WHERE organization_id = ${organizationId} AND is_default
        RETURNING ${tx.unsafe(TAX_RATES.select)}`;
      for (const row of previous) {
        const rate = TAX_RATES.read(row);
        await writeEvent(tx, {
          organizationId,
          type: "tax_rate.updated",
          aggregateId: rate.id,
          payload: rate,
        });
      }
    }
    const [row] = await tx<TaxRateRow[]>`
      INSERT INTO tax_rates (id, organization_id, name, rate_pct, is_default)
      VALUES (${id}, ${organizationId}, ${input.name}, ${String(input.ratePct)}, ${isDefault})
      RETURNING ${tx.unsafe(TAX_RATES.select)}`;
    const rate = TAX_RATES.read(row!);
    await writeEvent(tx, {
      organizationId,
      type: "tax_rate.created",
      aggregateId: rate.id,
      payload: rate,
    });
    return rate;
  });
}

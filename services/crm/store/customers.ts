import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type BulkArchiveBody,
  type BulkTagBody,
  type BulkTierBody,
  type CreateCustomerBody,
  type Customer,
  type CUSTOMER_SORT_FIELDS,
  CUSTOMER_TIERS,
  type CustomerTier,
  ListCustomersQuery,
  type UpdateCustomerBody,
} from "@printshop/shared/contracts/crm";
import type { BulkResult } from "@printshop/shared/contracts/bulk";
import { type BulkChange, type BulkDecision, runBulk } from "@printshop/shared/db/bulk-target";
import { changedColumns, type FieldTable, fieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage } from "@printshop/shared/db/pages";
import { conflict, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { decideArchived, decideTags, decideTier, normalTags } from "../domain/customers.ts";
import { checkedCustomFields } from "./custom_fields.ts";
import { people } from "./people.ts";
import { unlinkCustomer } from "./tasks.ts";

const CUSTOMER_COLUMNS = "id, company_name, email, phone, tier, tags, tax_exempt, tax_number, " +
  "default_markup_group_id, sales_rep_email, notes, custom_fields, is_archived, created_at, " +
  "updated_at";

interface CustomerRow {
  id: string;
  company_name: string;
  email: string | null;
  phone: string | null;
  tier: CustomerTier;
  tags: string[];
  tax_exempt: boolean;
  tax_number: string | null;
  default_markup_group_id: string | null;
  sales_rep_email: string | null;
  notes: string | null;
  custom_fields: Record<string, unknown>;
  is_archived: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Customers with their contacts and addresses: two statements whatever the number of rows. */
async function withChildren(tx: Queryable, rows: readonly CustomerRow[]): Promise<Customer[]> {
  const childrenOf = await PEOPLE.childrenOf(tx, rows.map((row) => row.id));
  return rows.map((row) => ({
    id: row.id,
    companyName: row.company_name,
    email: row.email,
    phone: row.phone,
    tier: row.tier,
    tags: row.tags,
    taxExempt: row.tax_exempt,
    taxNumber: row.tax_number,
    defaultMarkupGroupId: row.default_markup_group_id,
    salesRepEmail: row.sales_rep_email,
    notes: row.notes,
    customFields: row.custom_fields,
    isArchived: row.is_archived,
    ...childrenOf(row.id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

async function lockCustomer(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<CustomerRow> {
  const [row] = await tx<CustomerRow[]>`
    SELECT ${tx.unsafe(CUSTOMER_COLUMNS)} FROM customers
    WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
  if (!row) throw notFound("Customer", id);
  return row;
}

/** The customer as it now is, with its `customer.updated` event (after any change to it). */
async function announceUpdated(
  tx: TransactionSql,
  organizationId: string,
  id: string,
): Promise<Customer> {
  await tx`UPDATE customers SET updated_at = now() WHERE id = ${id}`;
  const [customer] = await readCustomers(tx, organizationId, [id]);
  await writeEvent(tx, {
    organizationId,
    type: "customer.updated",
    aggregateId: id,
    payload: customer!,
  });
  return customer!;
}

async function readCustomers(
  tx: Queryable,
  organizationId: string,
  ids: readonly string[],
): Promise<Customer[]> {
  const rows = await tx<CustomerRow[]>`
    SELECT ${tx.unsafe(CUSTOMER_COLUMNS)} FROM customers
    WHERE organization_id = ${organizationId} AND id = ANY(${ids}::uuid[])`;
  const byId = new Map((await withChildren(tx, rows)).map((c) => [c.id, c]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export async function findCustomer(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Customer> {
  const [customer] = await readCustomers(sql, organizationId, [id]);
  if (!customer) throw notFound("Customer", id);
  return customer;
}

export async function createCustomer(
  sql: Sql,
  organizationId: string,
  input: CreateCustomerBody,
): Promise<Customer> {
  return await transaction(sql, async (tx) => {
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "customer",
      {},
      input.customFields,
    );
    const id = uuidv7();
    await tx`
      INSERT INTO customers ${
      tx({
        id,
        organization_id: organizationId,
        ...changedColumns(input, ["customFields", "tags"]),
        tags: normalTags(input.tags ?? []),
        custom_fields: jsonParam(tx, values ?? {}),
      })
    }`;
    const [customer] = await readCustomers(tx, organizationId, [id]);
    await writeEvent(tx, {
      organizationId,
      type: "customer.created",
      aggregateId: id,
      payload: customer!,
    });
    return customer!;
  });
}

export async function updateCustomer(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateCustomerBody,
): Promise<Customer> {
  return await transaction(sql, async (tx) => {
    const row = await lockCustomer(tx, organizationId, id);
    // The bulk rule holds for one customer too: an archived customer's tier is frozen (unless
    // the same write brings it back).
    if (input.tier !== undefined && (input.isArchived ?? row.is_archived)) {
      const decision = decideTier(stateOf(row), input.tier);
      if (decision.status === "refused") throw conflict(decision.reason);
    }
    const changes = changedColumns(input, ["customFields", "tags"]);
    if (input.tags !== undefined) changes.tags = normalTags(input.tags);
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "customer",
      row.custom_fields,
      input.customFields,
    );
    if (values !== undefined) changes.custom_fields = jsonParam(tx, values);
    if (Object.keys(changes).length === 0) {
      return (await readCustomers(tx, organizationId, [id]))[0]!;
    }
    await tx`UPDATE customers SET ${tx(changes)} WHERE id = ${id}`;
    return await announceUpdated(tx, organizationId, id);
  });
}

export async function deleteCustomer(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<Customer> {
  return await transaction(sql, async (tx) => {
    await lockCustomer(tx, organizationId, id);
    const [customer] = await readCustomers(tx, organizationId, [id]);
    await unlinkCustomer(tx, organizationId, id);
    await tx`DELETE FROM customers WHERE id = ${id}`;
    await writeEvent(tx, {
      organizationId,
      type: "customer.deleted",
      aggregateId: id,
      payload: customer!,
    });
    return customer!;
  });
}

/** The customers' fields: what `filters` may name, and what `sortField` orders on. */
export const CUSTOMER_FIELDS = fieldTable({
  companyName: { type: "text" },
  email: { type: "text", nullable: true },
  phone: { type: "text", nullable: true },
  // Sorted and compared in tier order (standard < … < wholesale), not alphabetically.
  tier: {
    type: "enum",
    values: CUSTOMER_TIERS,
    sortColumn: `array_position(ARRAY[${
      CUSTOMER_TIERS.map((t) => `'${t}'`).join(",")
    }]::text[], tier)`,
    sortType: "integer",
  },
  taxExempt: { type: "boolean" },
  taxNumber: { type: "text", nullable: true },
  salesRepEmail: { type: "text", nullable: true },
  isArchived: { type: "boolean" },
  createdAt: { type: "datetime" },
  updatedAt: { type: "datetime" },
}) satisfies FieldTable<typeof CUSTOMER_SORT_FIELDS[number]>;

const CUSTOMER_LIST = listSpec(ListCustomersQuery, {
  from: "customers",
  select: CUSTOMER_COLUMNS,
  fields: CUSTOMER_FIELDS,
  search: ["company_name", "email", "phone", "tax_number", "array_to_string(tags, ' ')"],
  order: { field: "createdAt", direction: "asc" },
});

export async function listCustomers(
  sql: Sql,
  organizationId: string,
  query: ListCustomersQuery,
  pageSizeMax: number,
): Promise<{ items: Customer[]; totalCount: number }> {
  return await offsetPage(
    sql,
    CUSTOMER_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: CustomerRow[]) => withChildren(sql, rows),
  );
}

// ---------------------------------------------------------------------------------------------
// Bulk changes over a target (shared/db/bulk_target.ts): one transaction, one event per change.

const ofOrganization = (organizationId: string) => (sql: Queryable) =>
  sql`organization_id = ${organizationId}`;

const stateOf = (row: CustomerRow) => ({
  tier: row.tier,
  tags: row.tags,
  isArchived: row.is_archived,
});

/**
 * Runs one bulk change: `decide` per customer, then `columns` gives each changed customer's
 * new values, written in one statement, with a `customer.updated` event per changed customer.
 */
async function bulkChange<C>(
  sql: Sql,
  organizationId: string,
  target: BulkTierBody["target"],
  bulkMaxRows: number,
  decide: (row: CustomerRow) => BulkDecision<C>,
  columns: (change: C) => { tier?: string; tags?: string[]; is_archived?: boolean },
): Promise<BulkResult> {
  return await runBulk<CustomerRow, C>(
    sql,
    CUSTOMER_LIST,
    { where: ofOrganization(organizationId), target, bulkMaxRows },
    decide,
    async (tx: TransactionSql, changes: BulkChange<CustomerRow, C>[]) => {
      const rows = changes.map(({ row, change }) => ({ id: row.id, ...columns(change) }));
      await tx`
        UPDATE customers c SET
          tier = coalesce(r.tier, c.tier),
          tags = coalesce(r.tags, c.tags),
          is_archived = coalesce(r.is_archived, c.is_archived),
          updated_at = now()
        FROM jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb)
          AS r(id uuid, tier text, tags text[], is_archived boolean)
        WHERE c.id = r.id AND c.organization_id = ${organizationId}`;
      const ids = rows.map((row) => row.id);
      const customers = await readCustomers(tx, organizationId, ids);
      await writeEvents(
        tx,
        customers.map((customer) => ({
          organizationId,
          type: "customer.updated" as const,
          aggregateId: customer.id,
          payload: customer,
        })),
      );
    },
  );
}

export function bulkSetTier(
  sql: Sql,
  organizationId: string,
  body: BulkTierBody,
  bulkMaxRows: number,
): Promise<BulkResult> {
  return bulkChange(
    sql,
    organizationId,
    body.target,
    bulkMaxRows,
    (row) => decideTier(stateOf(row), body.tier),
    (tier) => ({ tier }),
  );
}

export function bulkTag(
  sql: Sql,
  organizationId: string,
  body: BulkTagBody,
  bulkMaxRows: number,
): Promise<BulkResult> {
  return bulkChange(
    sql,
    organizationId,
    body.target,
    bulkMaxRows,
    (row) => decideTags(stateOf(row), body),
    (tags) => ({ tags }),
  );
}

export function bulkArchive(
  sql: Sql,
  organizationId: string,
  body: BulkArchiveBody,
  bulkMaxRows: number,
): Promise<BulkResult> {
  return bulkChange(
    sql,
    organizationId,
    body.target,
    bulkMaxRows,
    (row) => decideArchived(stateOf(row), body.archived ?? true),
    (archived) => ({ is_archived: archived }),
  );
}

// Contacts and addresses (people.ts): each change to one is the customer's, announced as its own.
const PEOPLE = people({ parent: "customer", lock: lockCustomer, announce: announceUpdated });
export const { createContact, createAddress, updateContact, updateAddress, deleteChild } = PEOPLE;

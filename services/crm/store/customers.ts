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
  ListCustomersQuery,
  type UpdateCustomerBody,
} from "@printshop/shared/contracts/crm";
import type { BulkResult } from "@printshop/shared/contracts/bulk";
import { type BulkChange, type BulkDecision, runBulk } from "@printshop/shared/db/bulk-target";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { externalIdKey, holdingKeys } from "@printshop/shared/db/held-keys";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { childrenOf } from "./people.ts";
import { col, defineTable, enumRank, type RowOf } from "@printshop/shared/db/table";
import { conflict } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { decideArchived, decideTags, decideTier, normalTags } from "../domain/customers.ts";
import { announce } from "./answers.ts";
import { checkedCustomFields, type ValueHolder } from "./custom_fields.ts";
import { party } from "./parties.ts";
import { unlinkCustomer } from "./tasks.ts";

/** The customers table, declared once (shared/db/table.ts); contacts and addresses: people.ts. */
const CUSTOMERS = defineTable({
  name: "customers",
  tenant: true,
  noun: "Customer",
  columns: {
    id: col.uuid(),
    companyName: col.text().filterable(),
    externalId: col.text().nullable().filterable(),
    email: col.text().nullable().filterable(),
    phone: col.text().nullable().filterable(),
    // Sorted and compared in tier order (standard < … < wholesale), not alphabetically.
    tier: col.enum(CUSTOMER_TIERS).filterable({
      sortColumn: enumRank(CUSTOMER_TIERS, "tier"),
      sortType: "integer",
    }),
    tags: col.textArray(),
    taxExempt: col.boolean().filterable(),
    taxNumber: col.text().nullable().filterable(),
    defaultMarkupGroupId: col.uuid().nullable(),
    salesRepEmail: col.text().nullable().filterable(),
    notes: col.text().nullable(),
    customFields: col.json<Record<string, unknown>>(),
    isArchived: col.boolean().filterable(),
    ...childrenOf("customer"),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type CustomerRow = RowOf<typeof CUSTOMERS>;

/** The integrator's id of a customer, held once per organisation (409 naming the holder). */
const CUSTOMER_EXTERNAL_ID = externalIdKey(CUSTOMERS);

// With contacts and addresses (people.ts); each change to one is the customer's, announced as its
// own `customer.updated`.
const CUSTOMER = party(CUSTOMERS, "customer.updated");
export const { createContact, createAddress, updateContact, updateAddress, deleteChild } = CUSTOMER;

/** Customers as holders of custom field values: announced whole, contacts and addresses too. */
export const CUSTOMER_VALUES: ValueHolder<CustomerRow, "customer.updated"> = {
  table: CUSTOMERS,
  updated: "customer.updated",
  answer: (tx, rows) => CUSTOMER.withChildren(tx, rows),
};

export async function findCustomer(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Customer> {
  return await CUSTOMER.find(sql, organizationId, id);
}

export async function createCustomer(
  sql: Sql,
  organizationId: string,
  input: CreateCustomerBody,
): Promise<Customer> {
  return await holdingKeys(
    sql,
    organizationId,
    [{ key: CUSTOMER_EXTERNAL_ID, value: input.externalId }],
    () => insertCustomer(sql, organizationId, input),
  );
}

async function insertCustomer(
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
    const customer = await CUSTOMER.find(tx, organizationId, id);
    await announce(tx, organizationId, "customer.created", [customer]);
    return customer;
  });
}

export async function updateCustomer(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateCustomerBody,
): Promise<Customer> {
  return await holdingKeys(
    sql,
    organizationId,
    [{ key: CUSTOMER_EXTERNAL_ID, value: input.externalId }],
    () => changeCustomer(sql, organizationId, id, input),
  );
}

async function changeCustomer(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateCustomerBody,
): Promise<Customer> {
  return await transaction(sql, async (tx) => {
    const row = await CUSTOMERS.lock(tx, organizationId, id);
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
      return await CUSTOMER.find(tx, organizationId, id);
    }
    await tx`UPDATE customers SET ${tx(changes)} WHERE id = ${id}`;
    return await CUSTOMER.announceUpdated(tx, organizationId, id);
  });
}

export async function deleteCustomer(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<Customer> {
  return await transaction(sql, async (tx) => {
    await CUSTOMERS.lock(tx, organizationId, id);
    const customer = await CUSTOMER.find(tx, organizationId, id);
    await unlinkCustomer(tx, organizationId, id);
    await tx`DELETE FROM customers WHERE id = ${id}`;
    await announce(tx, organizationId, "customer.deleted", [customer]);
    return customer;
  });
}

/** The customers' fields: what `filters` may name, and what `sortField` orders on. */
export const CUSTOMER_FIELDS = CUSTOMERS.fields() satisfies FieldTable<
  typeof CUSTOMER_SORT_FIELDS[number]
>;

const CUSTOMER_LIST = listSpec(ListCustomersQuery, {
  from: "customers",
  select: CUSTOMERS.select,
  fields: CUSTOMER_FIELDS,
  search: "customers_matching",
  order: { field: "createdAt", direction: "asc" },
});

export async function listCustomers(
  sql: Sql,
  organizationId: string,
  query: ListCustomersQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<Customer>> {
  return await offsetPage(
    sql,
    CUSTOMER_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: CustomerRow[]) => CUSTOMER.withChildren(sql, rows),
  );
}

// ---------------------------------------------------------------------------------------------
// Bulk changes over a target (shared/db/bulk_target.ts): one transaction, one event per change.

/** The column types a bulk change's records are read with. */
const RECORD_TYPES = CUSTOMERS.recordTypes(["id", "tier", "tags", "isArchived"]);

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
    { where: CUSTOMERS.ofOrganization(organizationId), target, bulkMaxRows },
    decide,
    async (tx: TransactionSql, changes: BulkChange<CustomerRow, C>[]) => {
      const rows = changes.map(({ row, change }) => ({ id: row.id, ...columns(change) }));
      // Planned for its values each time (unsafe() sends an unnamed statement): prepared, it
      // went over to the generic plan after five calls, which reads all of a large
      // organisation's customers to find these (300 ms instead of 50 for a shop of 100,000).
      await tx.unsafe(
        `UPDATE customers c SET
           tier = coalesce(r.tier, c.tier),
           tags = coalesce(r.tags, c.tags),
           is_archived = coalesce(r.is_archived, c.is_archived),
           updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS r(${RECORD_TYPES})
         WHERE c.id = r.id AND c.organization_id = $2`,
        [jsonParam(tx, rows), organizationId],
      );
      const ids = rows.map((row) => row.id);
      const customers = await CUSTOMER.read(tx, organizationId, ids);
      await announce(tx, organizationId, "customer.updated", customers);
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

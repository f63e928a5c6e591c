import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type CreateVendorBody,
  ListVendorsQuery,
  type UpdateVendorBody,
  type Vendor,
  VENDOR_KINDS,
  type VENDOR_SORT_FIELDS,
  type VendorKind,
  type VendorServiceType,
} from "@printshop/shared/contracts/crm";
import { changedColumns, type FieldTable, fieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage } from "@printshop/shared/db/pages";
import { parseFiltersParam } from "@printshop/shared/filters";
import { notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { checkedCustomFields } from "./custom_fields.ts";
import { people } from "./people.ts";

const VENDOR_COLUMNS = "id, name, kind, service_types, is_active, archived_at, is_managed, " +
  "logo_url, orders_website, account_number, default_lead_time_days, minimum_order, " +
  "proximity_notes, notes, custom_fields, created_at, updated_at";

interface VendorRow {
  id: string;
  name: string;
  kind: VendorKind;
  service_types: VendorServiceType[];
  is_active: boolean;
  archived_at: Date | null;
  is_managed: boolean;
  logo_url: string | null;
  orders_website: string | null;
  account_number: string | null;
  default_lead_time_days: number | null;
  minimum_order: string | null;
  proximity_notes: string | null;
  notes: string | null;
  custom_fields: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** Vendors with their contacts and addresses: two statements whatever the number of rows. */
async function withChildren(tx: Queryable, rows: readonly VendorRow[]): Promise<Vendor[]> {
  const childrenOf = await PEOPLE.childrenOf(tx, rows.map((row) => row.id));
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    kind: row.kind,
    serviceTypes: row.service_types,
    isActive: row.is_active,
    archivedAt: row.archived_at?.toISOString() ?? null,
    isManaged: row.is_managed,
    logoUrl: row.logo_url,
    ordersWebsite: row.orders_website,
    accountNumber: row.account_number,
    defaultLeadTimeDays: row.default_lead_time_days,
    minimumOrder: row.minimum_order === null ? null : Number(row.minimum_order),
    proximityNotes: row.proximity_notes,
    notes: row.notes,
    customFields: row.custom_fields,
    ...childrenOf(row.id),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

async function lockVendor(tx: Queryable, organizationId: string, id: string): Promise<VendorRow> {
  const [row] = await tx<VendorRow[]>`
    SELECT ${tx.unsafe(VENDOR_COLUMNS)} FROM vendors
    WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
  if (!row) throw notFound("Vendor", id);
  return row;
}

async function readVendor(tx: Queryable, organizationId: string, id: string): Promise<Vendor> {
  const rows = await tx<VendorRow[]>`
    SELECT ${tx.unsafe(VENDOR_COLUMNS)} FROM vendors
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  const [vendor] = await withChildren(tx, rows);
  if (!vendor) throw notFound("Vendor", id);
  return vendor;
}

/** The vendor as it now is, with its `vendor.updated` event (after any change to it). */
async function announceUpdated(
  tx: TransactionSql,
  organizationId: string,
  id: string,
): Promise<Vendor> {
  await tx`UPDATE vendors SET updated_at = now() WHERE id = ${id}`;
  const vendor = await readVendor(tx, organizationId, id);
  await writeEvent(tx, {
    organizationId,
    type: "vendor.updated",
    aggregateId: id,
    payload: vendor,
  });
  return vendor;
}

export async function findVendor(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Vendor> {
  return await readVendor(sql, organizationId, id);
}

export async function createVendor(
  sql: Sql,
  organizationId: string,
  input: CreateVendorBody,
): Promise<Vendor> {
  return await transaction(sql, async (tx) => {
    const values = await checkedCustomFields(tx, organizationId, "vendor", {}, input.customFields);
    const id = uuidv7();
    await tx`
      INSERT INTO vendors ${
      tx({
        id,
        organization_id: organizationId,
        ...changedColumns(input, ["customFields"]),
        custom_fields: jsonParam(tx, values ?? {}),
      })
    }`;
    const vendor = await readVendor(tx, organizationId, id);
    await writeEvent(tx, {
      organizationId,
      type: "vendor.created",
      aggregateId: id,
      payload: vendor,
    });
    return vendor;
  });
}

/** Changes a vendor; a body that changes nothing answers it as it is, with no event. */
export async function updateVendor(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateVendorBody,
): Promise<Vendor> {
  return await transaction(sql, async (tx) => {
    const row = await lockVendor(tx, organizationId, id);
    const changes = changedColumns(input, ["customFields"]);
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "vendor",
      row.custom_fields,
      input.customFields,
    );
    if (values !== undefined) changes.custom_fields = jsonParam(tx, values);
    if (Object.keys(changes).length === 0) return await readVendor(tx, organizationId, id);
    await tx`UPDATE vendors SET ${tx(changes)} WHERE id = ${id}`;
    return await announceUpdated(tx, organizationId, id);
  });
}

/**
 * Archives (`archived` true) or brings back a vendor. A vendor already in that state is
 * answered as it is: no change, no event, so a retried call is harmless.
 */
export async function setArchived(
  sql: Sql,
  organizationId: string,
  id: string,
  archived: boolean,
): Promise<Vendor> {
  return await transaction(sql, async (tx) => {
    const row = await lockVendor(tx, organizationId, id);
    if ((row.archived_at !== null) === archived) return await readVendor(tx, organizationId, id);
    await tx`
      UPDATE vendors SET archived_at = ${archived ? tx`now()` : null}, updated_at = now()
      WHERE id = ${id}`;
    const vendor = await readVendor(tx, organizationId, id);
    await writeEvent(tx, {
      organizationId,
      type: archived ? "vendor.archived" : "vendor.unarchived",
      aggregateId: id,
      payload: vendor,
    });
    return vendor;
  });
}

/** The vendors' fields: what `filters` may name, and what `sortField` orders on. */
export const VENDOR_FIELDS = fieldTable({
  name: { type: "text" },
  kind: { type: "enum", values: VENDOR_KINDS },
  isActive: { type: "boolean" },
  archivedAt: { type: "datetime", nullable: true },
  isManaged: { type: "boolean" },
  accountNumber: { type: "text", nullable: true },
  defaultLeadTimeDays: { type: "integer", nullable: true },
  minimumOrder: { type: "number", nullable: true },
  createdAt: { type: "datetime" },
  updatedAt: { type: "datetime" },
}) satisfies FieldTable<typeof VENDOR_SORT_FIELDS[number]>;

/**
 * `serviceType` asks whether the vendor's array holds the type, which is no equality on a
 * column, so it is left out of the named filters here and applied by `listVendors` itself.
 */
const VENDOR_LIST = listSpec(ListVendorsQuery.omit({ serviceType: true }), {
  from: "vendors",
  select: VENDOR_COLUMNS,
  fields: VENDOR_FIELDS,
  search: ["name", "account_number", "notes"],
  order: { field: "name", direction: "asc" },
});

/**
 * One page of the organisation's vendors, by name unless sorted otherwise. Archived vendors are
 * left out unless the query asks about `isActive` (the named filter, or `filters` naming it).
 */
export async function listVendors(
  sql: Sql,
  organizationId: string,
  query: ListVendorsQuery,
  pageSizeMax: number,
): Promise<{ items: Vendor[]; totalCount: number }> {
  let where = sql`organization_id = ${organizationId}`;
  const asksActive = query.isActive !== undefined ||
    parseFiltersParam(query.filters).some((filter) => filter.field === "isActive");
  if (!asksActive) where = sql`${where} AND is_active`;
  if (query.serviceType !== undefined) {
    where = sql`${where} AND ${query.serviceType} = ANY(service_types)`;
  }
  return await offsetPage(
    sql,
    VENDOR_LIST,
    { where, query, pageSizeMax },
    (rows: VendorRow[]) => withChildren(sql, rows),
  );
}

// Contacts and addresses (people.ts): each change to one is the vendor's, announced as its own.
const PEOPLE = people({ parent: "vendor", lock: lockVendor, announce: announceUpdated });
export const { createContact, createAddress, updateContact, updateAddress, deleteChild } = PEOPLE;

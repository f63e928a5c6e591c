import type { Queryable, Sql, TransactionSql } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type CreateVendorAddressBody,
  type CreateVendorBody,
  type CreateVendorContactBody,
  ListVendorsQuery,
  type UpdateVendorAddressBody,
  type UpdateVendorBody,
  type UpdateVendorContactBody,
  type Vendor,
  VENDOR_KINDS,
  type VENDOR_SORT_FIELDS,
  type VendorAddress,
  type VendorContact,
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

const CONTACT_COLUMNS = "id, vendor_id, first_name, last_name, email, phone, role, " +
  "created_at, updated_at";

interface ContactRow {
  id: string;
  vendor_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  role: string | null;
  created_at: Date;
  updated_at: Date;
}

const ADDRESS_COLUMNS = "id, vendor_id, label, street, city, state, postcode, country, " +
  "created_at, updated_at";

interface AddressRow {
  id: string;
  vendor_id: string;
  label: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  postcode: string | null;
  country: string | null;
  created_at: Date;
  updated_at: Date;
}

function toContact(row: ContactRow): VendorContact {
  return {
    id: row.id,
    vendorId: row.vendor_id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    role: row.role,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toAddress(row: AddressRow): VendorAddress {
  return {
    id: row.id,
    vendorId: row.vendor_id,
    label: row.label,
    street: row.street,
    city: row.city,
    state: row.state,
    postcode: row.postcode,
    country: row.country,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Vendors with their contacts and addresses: two statements whatever the number of rows. */
async function withChildren(tx: Queryable, rows: readonly VendorRow[]): Promise<Vendor[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [contacts, addresses] = await Promise.all([
    tx<ContactRow[]>`
      SELECT ${tx.unsafe(CONTACT_COLUMNS)} FROM vendor_contacts
      WHERE vendor_id = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
    tx<AddressRow[]>`
      SELECT ${tx.unsafe(ADDRESS_COLUMNS)} FROM vendor_addresses
      WHERE vendor_id = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
  ]);
  const group = <R extends { vendor_id: string }, T>(list: readonly R[], to: (r: R) => T) => {
    const by = new Map<string, T[]>();
    for (const row of list) by.set(row.vendor_id, [...(by.get(row.vendor_id) ?? []), to(row)]);
    return by;
  };
  const contactsOf = group(contacts, toContact);
  const addressesOf = group(addresses, toAddress);
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
    contacts: contactsOf.get(row.id) ?? [],
    addresses: addressesOf.get(row.id) ?? [],
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
  return await sql.begin(async (tx) => {
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
  return await sql.begin(async (tx) => {
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
  return await sql.begin(async (tx) => {
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

// ---------------------------------------------------------------------------------------------
// Contacts and addresses: children addressed by their own ids; each change is the vendor's.

type ChildTable = "vendor_contacts" | "vendor_addresses";

const CHILD_NAMES: Record<ChildTable, string> = {
  vendor_contacts: "Vendor contact",
  vendor_addresses: "Vendor address",
};

/** A child's vendor, locked (so children of one vendor change one at a time), or 404. */
async function lockParentOf(
  tx: Queryable,
  table: ChildTable,
  organizationId: string,
  id: string,
): Promise<string> {
  const [child] = await tx<{ vendor_id: string }[]>`
    SELECT vendor_id FROM ${tx(table)} WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!child) throw notFound(CHILD_NAMES[table], id);
  await lockVendor(tx, organizationId, child.vendor_id);
  return child.vendor_id;
}

async function insertChild<Row extends object>(
  sql: Sql,
  organizationId: string,
  vendorId: string,
  table: ChildTable,
  columns: string,
  input: object,
): Promise<Row> {
  // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
  const { row } = await sql.begin(async (tx) => {
    await lockVendor(tx, organizationId, vendorId);
    const [row] = await tx<Row[]>`
      INSERT INTO ${tx(table)} ${
      tx({
        id: uuidv7(),
        organization_id: organizationId,
        vendor_id: vendorId,
        ...changedColumns(input),
      })
    } RETURNING ${tx.unsafe(columns)}`;
    await announceUpdated(tx, organizationId, vendorId);
    return { row: row! };
  });
  return row;
}

/** Changes a child; a body that changes nothing answers it as it is, with no event. */
async function updateChild<Row extends object>(
  sql: Sql,
  organizationId: string,
  table: ChildTable,
  columns: string,
  id: string,
  input: object,
): Promise<Row> {
  // Wrapped: the type sql.begin answers cannot be worked out for a bare generic row.
  const { row } = await sql.begin(async (tx) => {
    const vendorId = await lockParentOf(tx, table, organizationId, id);
    const changes = changedColumns(input);
    if (Object.keys(changes).length === 0) {
      const [row] = await tx<Row[]>`
        SELECT ${tx.unsafe(columns)} FROM ${tx(table)} WHERE id = ${id}`;
      return { row: row! };
    }
    const [row] = await tx<Row[]>`
      UPDATE ${tx(table)} SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
      RETURNING ${tx.unsafe(columns)}`;
    await announceUpdated(tx, organizationId, vendorId);
    return { row: row! };
  });
  return row;
}

export async function createContact(
  sql: Sql,
  organizationId: string,
  vendorId: string,
  input: CreateVendorContactBody,
): Promise<VendorContact> {
  return toContact(
    await insertChild<ContactRow>(
      sql,
      organizationId,
      vendorId,
      "vendor_contacts",
      CONTACT_COLUMNS,
      input,
    ),
  );
}

export async function updateContact(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateVendorContactBody,
): Promise<VendorContact> {
  return toContact(
    await updateChild<ContactRow>(
      sql,
      organizationId,
      "vendor_contacts",
      CONTACT_COLUMNS,
      id,
      input,
    ),
  );
}

export async function createAddress(
  sql: Sql,
  organizationId: string,
  vendorId: string,
  input: CreateVendorAddressBody,
): Promise<VendorAddress> {
  return toAddress(
    await insertChild<AddressRow>(
      sql,
      organizationId,
      vendorId,
      "vendor_addresses",
      ADDRESS_COLUMNS,
      input,
    ),
  );
}

export async function updateAddress(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateVendorAddressBody,
): Promise<VendorAddress> {
  return toAddress(
    await updateChild<AddressRow>(
      sql,
      organizationId,
      "vendor_addresses",
      ADDRESS_COLUMNS,
      id,
      input,
    ),
  );
}

export async function deleteChild(
  sql: Sql,
  organizationId: string,
  table: ChildTable,
  id: string,
): Promise<{ id: string; vendorId: string }> {
  return await sql.begin(async (tx) => {
    const vendorId = await lockParentOf(tx, table, organizationId, id);
    await tx`DELETE FROM ${tx(table)} WHERE id = ${id}`;
    await announceUpdated(tx, organizationId, vendorId);
    return { id, vendorId };
  });
}

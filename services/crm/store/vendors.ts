import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type CreateVendorBody,
  ListVendorsQuery,
  type UpdateVendorBody,
  type Vendor,
  VENDOR_KINDS,
  type VENDOR_SORT_FIELDS,
  type VendorServiceType,
} from "@printshop/shared/contracts/crm";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { externalIdKey, holdingKeys } from "@printshop/shared/db/held-keys";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { parseFiltersParam } from "@printshop/shared/filters";
import { childrenOf } from "./people.ts";
import { col, type Column, defineTable, type RowOf } from "@printshop/shared/db/table";
import { uuidv7 } from "@printshop/shared/ids";
import { announce } from "./answers.ts";
import { checkedCustomFields, type ValueHolder } from "./custom_fields.ts";
import { party } from "./parties.ts";

/** The vendors table, declared once (shared/db/table.ts); contacts and addresses: people.ts. */
const VENDORS = defineTable({
  name: "vendors",
  tenant: true,
  noun: "Vendor",
  columns: {
    id: col.uuid(),
    name: col.text().filterable(),
    externalId: col.text().nullable().filterable(),
    kind: col.enum(VENDOR_KINDS).filterable(),
    // The table tool types text[] as any text; the column's CHECK holds it to the service types.
    serviceTypes: col.textArray() as Column<VendorServiceType[], VendorServiceType[]>,
    // Generated from archived_at: true exactly while the vendor is not archived.
    isActive: col.boolean().filterable(),
    archivedAt: col.timestamp().nullable().filterable(),
    isManaged: col.boolean().filterable(),
    logoUrl: col.text().nullable(),
    ordersWebsite: col.text().nullable(),
    accountNumber: col.text().nullable().filterable(),
    defaultLeadTimeDays: col.integer().nullable().filterable(),
    minimumOrder: col.number().nullable().filterable(),
    proximityNotes: col.text().nullable(),
    notes: col.text().nullable(),
    customFields: col.json<Record<string, unknown>>(),
    ...childrenOf("vendor"),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type VendorRow = RowOf<typeof VENDORS>;

/** The integrator's id of a vendor, held once per organisation (409 naming the holder). */
const VENDOR_EXTERNAL_ID = externalIdKey(VENDORS);

// With contacts and addresses (people.ts); each change to one is the vendor's, announced as its
// own `vendor.updated`.
const VENDOR = party(VENDORS, "vendor.updated");
export const { createContact, createAddress, updateContact, updateAddress, deleteChild } = VENDOR;

/** Vendors as holders of custom field values: announced whole, contacts and addresses too. */
export const VENDOR_VALUES: ValueHolder<VendorRow, "vendor.updated"> = {
  table: VENDORS,
  updated: "vendor.updated",
  answer: (tx, rows) => VENDOR.withChildren(tx, rows),
};

export async function findVendor(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Vendor> {
  return await VENDOR.find(sql, organizationId, id);
}

export async function createVendor(
  sql: Sql,
  organizationId: string,
  input: CreateVendorBody,
): Promise<Vendor> {
  return await holdingKeys(
    sql,
    organizationId,
    [{ key: VENDOR_EXTERNAL_ID, value: input.externalId }],
    () => insertVendor(sql, organizationId, input),
  );
}

async function insertVendor(
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
    const vendor = await VENDOR.find(tx, organizationId, id);
    await announce(tx, organizationId, "vendor.created", [vendor]);
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
  return await holdingKeys(
    sql,
    organizationId,
    [{ key: VENDOR_EXTERNAL_ID, value: input.externalId }],
    () => changeVendor(sql, organizationId, id, input),
  );
}

async function changeVendor(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateVendorBody,
): Promise<Vendor> {
  return await transaction(sql, async (tx) => {
    const row = await VENDORS.lock(tx, organizationId, id);
    const changes = changedColumns(input, ["customFields"]);
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "vendor",
      row.custom_fields,
      input.customFields,
    );
    if (values !== undefined) changes.custom_fields = jsonParam(tx, values);
    if (Object.keys(changes).length === 0) return await VENDOR.find(tx, organizationId, id);
    await tx`UPDATE vendors SET ${tx(changes)} WHERE id = ${id}`;
    return await VENDOR.announceUpdated(tx, organizationId, id);
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
    const row = await VENDORS.lock(tx, organizationId, id);
    if ((row.archived_at !== null) === archived) return await VENDOR.find(tx, organizationId, id);
    await tx`
      UPDATE vendors SET archived_at = ${archived ? tx`now()` : null}, updated_at = now()
      WHERE id = ${id}`;
    const vendor = await VENDOR.find(tx, organizationId, id);
    const type = archived ? "vendor.archived" : "vendor.unarchived";
    await announce(tx, organizationId, type, [vendor]);
    return vendor;
  });
}

/** The vendors' fields: what `filters` may name, and what `sortField` orders on. */
export const VENDOR_FIELDS = VENDORS.fields() satisfies FieldTable<
  typeof VENDOR_SORT_FIELDS[number]
>;

/**
 * `serviceType` asks whether the vendor's array holds the type, which is no equality on a
 * column, so it is left out of the named filters here and applied by `listVendors` itself.
 */
const VENDOR_LIST = listSpec(ListVendorsQuery.omit({ serviceType: true }), {
  from: "vendors",
  select: VENDORS.select,
  fields: VENDOR_FIELDS,
  search: "vendors_matching",
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
): Promise<OffsetPageOf<Vendor>> {
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
    (rows: VendorRow[]) => VENDOR.withChildren(sql, rows),
  );
}

/**
 * Vendors (spec 2.8): the businesses a shop buys from or outsources to, with their contacts and
 * addresses. A vendor is never deleted (quotes, purchase orders and catalogue items keep naming
 * it); it is archived, which takes it out of the default list, and brought back by unarchiving.
 */
import { z } from "zod";
import {
  BooleanParam,
  DateTime,
  described,
  ExternalId,
  externalIdDescription,
  externalIdFilter,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Amount, Flag, OptionalText, Url } from "../quotes/values.ts";
import {
  ADDRESS_DESCRIPTIONS,
  addressFields,
  addressShape,
  CONTACT_DESCRIPTIONS,
  contactFields,
  contactShape,
  CustomFieldValues,
  TIMESTAMP_DESCRIPTIONS,
} from "./values.ts";

/**
 * What a vendor is to the shop. The spec shows `InventorySupplier`; the rest are what a print
 * shop deals with besides: decorators it outsources to, suppliers of consumables, freight.
 */
export const VENDOR_KINDS = [
  "InventorySupplier",
  "Decorator",
  "ConsumablesSupplier",
  "Freight",
  "Other",
] as const;
export const VendorKind = z.enum(VENDOR_KINDS, {
  error: `Must be one of ${VENDOR_KINDS.join(", ")}`,
});
export type VendorKind = typeof VENDOR_KINDS[number];

/**
 * What a vendor does for the shop. The spec shows `ScreenPrint`; the others are the decoration
 * a shop outsources, and the work around it (digitising artwork for embroidery, finishing).
 */
export const VENDOR_SERVICE_TYPES = [
  "ScreenPrint",
  "Embroidery",
  "DirectToGarment",
  "DirectToFilm",
  "Transfers",
  "Sublimation",
  "PadPrint",
  "LaserEngraving",
  "Digitizing",
  "Finishing",
  "Other",
] as const;
export const VendorServiceType = z.enum(VENDOR_SERVICE_TYPES, {
  error: `Must be one of ${VENDOR_SERVICE_TYPES.join(", ")}`,
});
export type VendorServiceType = typeof VENDOR_SERVICE_TYPES[number];

export const VendorContact = z.object(described({
  id: Uuid,
  vendorId: Uuid,
  ...contactShape,
}, {
  id: "The contact's id",
  vendorId: "The vendor the contact works for",
  ...CONTACT_DESCRIPTIONS,
  ...TIMESTAMP_DESCRIPTIONS,
})).meta({ id: "VendorContact", description: "A person at a vendor" });
export type VendorContact = z.infer<typeof VendorContact>;

export const VendorAddress = z.object(described({
  id: Uuid,
  vendorId: Uuid,
  ...addressShape,
}, {
  id: "The address's id",
  vendorId: "The vendor it belongs to",
  ...ADDRESS_DESCRIPTIONS,
  ...TIMESTAMP_DESCRIPTIONS,
})).meta({
  id: "VendorAddress",
  description: "A pick-up, dispatch or billing address of a vendor",
});
export type VendorAddress = z.infer<typeof VendorAddress>;

const VENDOR_DESCRIPTIONS = {
  id: "The vendor's id (a catalogue item's `supplierVendorId`)",
  name: "The vendor's name",
  externalId: externalIdDescription("vendors"),
  kind:
    `What the vendor is to the shop: ${
      VENDOR_KINDS.map((k) => `\`${k}\``).join(", ")
    } (\`InventorySupplier\` sells blank garments and stock; \`Decorator\` decorates work the ` +
    "shop outsources)",
  serviceTypes: `What the vendor does for the shop, each at most once: ${
    VENDOR_SERVICE_TYPES.map((t) => `\`${t}\``).join(", ")
  }; empty for a vendor that only sells goods`,
  isActive: "Whether the vendor is active: false once it is archived (`POST " +
    "/v1/vendors/{vendorId}/archive`), true again once unarchived; true exactly when " +
    "`archivedAt` is null. Archived vendors are left out of the default list and can still be " +
    "read and changed",
  archivedAt: "When the vendor was archived; null while it is active",
  isManaged: "Whether an integration keeps the vendor's catalogue, prices and stock in sync " +
    "(a supplier feed) rather than the shop entering them by hand",
  logoUrl: "Where the vendor's logo is (http or https)",
  ordersWebsite: "Where the shop places orders with the vendor (http or https)",
  accountNumber: "The shop's account number with the vendor",
  defaultLeadTimeDays: "Days the vendor usually takes from order to dispatch",
  minimumOrder: "The smallest order the vendor accepts, in the organisation's currency",
  proximityNotes: "How near the vendor is and what that means (`Same suburb, pick up same day`)",
  notes: "Internal notes",
  customFields: "Values of the organisation's custom fields for vendors, by definition id",
  contacts: "People at the vendor, oldest first",
  addresses: "Addresses, oldest first",
  ...TIMESTAMP_DESCRIPTIONS,
};

export const Vendor = z.object(described({
  id: Uuid,
  name: z.string(),
  externalId: z.string().nullable(),
  kind: VendorKind,
  serviceTypes: z.array(VendorServiceType),
  isActive: z.boolean(),
  archivedAt: DateTime.nullable(),
  isManaged: z.boolean(),
  logoUrl: z.string().nullable(),
  ordersWebsite: z.string().nullable(),
  accountNumber: z.string().nullable(),
  defaultLeadTimeDays: z.int().nullable(),
  minimumOrder: z.number().nullable(),
  proximityNotes: z.string().nullable(),
  notes: z.string().nullable(),
  customFields: z.record(z.string(), z.unknown()),
  contacts: z.array(VendorContact),
  addresses: z.array(VendorAddress),
  createdAt: DateTime,
  updatedAt: DateTime,
}, VENDOR_DESCRIPTIONS)).meta({
  id: "Vendor",
  description: "A business the shop buys from or outsources to, with its contacts and addresses",
});
export type Vendor = z.infer<typeof Vendor>;

export const VENDOR_EXAMPLE: Vendor = {
  id: "0193a3d2-1c2d-7e3f-8a4b-5c6d7e8f9012",
  name: "Harbour Screen Co",
  externalId: "myob-supplier-204",
  kind: "Decorator",
  serviceTypes: ["ScreenPrint", "Transfers"],
  isActive: true,
  archivedAt: null,
  isManaged: false,
  logoUrl: "https://cdn.harbourscreen.com.au/logo.png",
  ordersWebsite: "https://orders.harbourscreen.com.au",
  accountNumber: "INK-20417",
  defaultLeadTimeDays: 7,
  minimumOrder: 150,
  proximityNotes: "Same suburb, pick up same day",
  notes: "Ask for Lee for rush jobs",
  customFields: { "0193a3d0-7e1f-7a20-8b31-4c5d6e7f8092": "Net 30" },
  contacts: [{
    id: "0193a3d2-1c2d-7e3f-8a4b-5c6d7e8f9013",
    vendorId: "0193a3d2-1c2d-7e3f-8a4b-5c6d7e8f9012",
    firstName: "Lee",
    lastName: "Tran",
    email: "lee@harbourscreen.com.au",
    phone: "02 9555 0188",
    role: "Production manager",
    createdAt: "2026-02-10T01:15:42.120Z",
    updatedAt: "2026-02-10T01:15:42.120Z",
  }],
  addresses: [{
    id: "0193a3d2-1c2d-7e3f-8a4b-5c6d7e8f9014",
    vendorId: "0193a3d2-1c2d-7e3f-8a4b-5c6d7e8f9012",
    label: "Workshop",
    street: "3/22 Mill Street",
    city: "Marrickville",
    state: "NSW",
    postcode: "2204",
    country: "AU",
    createdAt: "2026-02-10T01:15:42.120Z",
    updatedAt: "2026-02-10T01:15:42.120Z",
  }],
  createdAt: "2026-02-10T01:15:42.120Z",
  updatedAt: "2026-05-03T06:20:11.004Z",
};
setExamples(Vendor, VENDOR_EXAMPLE);
setExamples(VendorContact, VENDOR_EXAMPLE.contacts[0]!);
setExamples(VendorAddress, VENDOR_EXAMPLE.addresses[0]!);

const ServiceTypes = z.array(VendorServiceType).max(VENDOR_SERVICE_TYPES.length).refine(
  (types) => new Set(types).size === types.length,
  "Each service type may appear once",
);

/** Writable fields; `isActive` and `archivedAt` change by archiving and unarchiving only. */
const vendorFields = {
  name: Text(200),
  externalId: ExternalId,
  kind: VendorKind,
  serviceTypes: ServiceTypes,
  isManaged: Flag,
  logoUrl: Url.nullable(),
  ordersWebsite: Url.nullable(),
  accountNumber: OptionalText(100),
  defaultLeadTimeDays: z.int().min(0, "Must not be negative").max(
    365,
    "Must be at most 365",
  ).nullable(),
  minimumOrder: Amount(2, { max: 100_000_000 }).nullable(),
  proximityNotes: OptionalText(1000),
  notes: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  customFields: CustomFieldValues,
};

export const { create: CreateVendorBody, update: UpdateVendorBody } = writeBodies(
  "Vendor",
  described(vendorFields, VENDOR_DESCRIPTIONS),
  ["name", "kind"],
);
setExamples(CreateVendorBody, {
  name: "Harbour Screen Co",
  kind: "Decorator",
  serviceTypes: ["ScreenPrint", "Transfers"],
  defaultLeadTimeDays: 7,
  minimumOrder: 150,
}, { name: "AS Colour", kind: "InventorySupplier", isManaged: true });
setExamples(UpdateVendorBody, { defaultLeadTimeDays: 10 });
export type CreateVendorBody = z.infer<typeof CreateVendorBody>;
export type UpdateVendorBody = z.infer<typeof UpdateVendorBody>;

export const { create: CreateVendorContactBody, update: UpdateVendorContactBody } = writeBodies(
  "VendorContact",
  described(contactFields, CONTACT_DESCRIPTIONS),
);
setExamples(CreateVendorContactBody, {
  firstName: "Lee",
  lastName: "Tran",
  email: "lee@harbourscreen.com.au",
  role: "Production manager",
});
setExamples(UpdateVendorContactBody, { phone: "02 9555 0188" });
export type CreateVendorContactBody = z.infer<typeof CreateVendorContactBody>;
export type UpdateVendorContactBody = z.infer<typeof UpdateVendorContactBody>;

export const { create: CreateVendorAddressBody, update: UpdateVendorAddressBody } = writeBodies(
  "VendorAddress",
  described(addressFields, ADDRESS_DESCRIPTIONS),
);
setExamples(CreateVendorAddressBody, {
  label: "Workshop",
  street: "3/22 Mill Street",
  city: "Marrickville",
  state: "NSW",
  postcode: "2204",
  country: "AU",
});
setExamples(UpdateVendorAddressBody, { label: "Dispatch" });
export type CreateVendorAddressBody = z.infer<typeof CreateVendorAddressBody>;
export type UpdateVendorAddressBody = z.infer<typeof UpdateVendorAddressBody>;

export const VENDOR_SORT_FIELDS = [
  "name",
  "kind",
  "defaultLeadTimeDays",
  "createdAt",
  "updatedAt",
] as const;

export const ListVendorsQuery = offsetListQuery({
  sortFields: VENDOR_SORT_FIELDS,
  named: {
    ...described({
      kind: VendorKind.optional(),
      serviceType: VendorServiceType.optional(),
      isActive: BooleanParam.optional(),
    }, {
      kind: "Only vendors of this kind",
      serviceType: "Only vendors offering this service type",
      isActive: "`false` for archived vendors only, `true` for active ones only; when omitted " +
        "(and `filters` does not name `isActive`), active vendors only",
    }),
    ...externalIdFilter("vendor"),
  },
  search: true,
});
export type ListVendorsQuery = z.infer<typeof ListVendorsQuery>;

const ChildDeleted = z.object(described({ id: Uuid, vendorId: Uuid }, {
  id: "The id of what was removed",
  vendorId: "The vendor it belonged to",
})).meta({ id: "VendorChildDeleted", description: "What a contact or address delete removed" });
setExamples(ChildDeleted, { id: VENDOR_EXAMPLE.contacts[0]!.id, vendorId: VENDOR_EXAMPLE.id });

export const vendorEvents = defineEvents("crm", "vendors.read", {
  "vendor.created": { summary: "A vendor was created", data: Vendor },
  "vendor.updated": {
    summary: "A vendor, or one of its contacts or addresses, changed (the whole vendor)",
    data: Vendor,
  },
  "vendor.archived": { summary: "A vendor was archived (`isActive` became false)", data: Vendor },
  "vendor.unarchived": {
    summary: "An archived vendor was brought back (`isActive` became true)",
    data: Vendor,
  },
});

const VENDOR_WRITE_EVENTS = ["vendor.updated"] as const;

export const vendorOperations = operations("Vendors", {
  createVendor: {
    method: "POST",
    path: "/v1/vendors",
    scope: "vendors.write",
    summary: "Create a vendor",
    body: CreateVendorBody,
    responses: { 201: Vendor },
    events: ["vendor.created"],
  },
  listVendors: {
    method: "GET",
    path: "/v1/vendors",
    scope: "vendors.read",
    summary: "List vendors by name; active ones only unless `isActive` (or `filters`) asks " +
      "for archived ones",
    query: ListVendorsQuery,
    responses: { 200: page(Vendor) },
    examples: { query: { kind: "Decorator", serviceType: "Embroidery" } },
  },
  getVendor: {
    method: "GET",
    path: "/v1/vendors/{vendorId}",
    scope: "vendors.read",
    summary: "Read one vendor (archived or not) with its contacts and addresses",
    responses: { 200: Vendor },
  },
  updateVendor: {
    method: "PATCH",
    path: "/v1/vendors/{vendorId}",
    scope: "vendors.write",
    summary: "Change a vendor",
    body: UpdateVendorBody,
    responses: { 200: Vendor },
    events: VENDOR_WRITE_EVENTS,
  },
  archiveVendor: {
    method: "POST",
    path: "/v1/vendors/{vendorId}/archive",
    scope: "vendors.write",
    summary: "Archive a vendor: `isActive` becomes false and it leaves the default list " +
      "(vendors are archived, never deleted); an archived vendor answers as it is",
    responses: { 200: Vendor },
    events: ["vendor.archived"],
  },
  unarchiveVendor: {
    method: "POST",
    path: "/v1/vendors/{vendorId}/unarchive",
    scope: "vendors.write",
    summary: "Bring an archived vendor back (`isActive` true); an active vendor answers as it is",
    responses: { 200: Vendor },
    events: ["vendor.unarchived"],
  },
  createVendorContact: {
    method: "POST",
    path: "/v1/vendors/{vendorId}/contacts",
    scope: "vendors.write",
    summary: "Add a contact to a vendor",
    body: CreateVendorContactBody,
    responses: { 201: VendorContact },
    events: VENDOR_WRITE_EVENTS,
  },
  updateVendorContact: {
    method: "PATCH",
    path: "/v1/vendor-contacts/{vendorContactId}",
    scope: "vendors.write",
    summary: "Change a vendor's contact",
    body: UpdateVendorContactBody,
    responses: { 200: VendorContact },
    events: VENDOR_WRITE_EVENTS,
  },
  deleteVendorContact: {
    method: "DELETE",
    path: "/v1/vendor-contacts/{vendorContactId}",
    scope: "vendors.write",
    summary: "Remove a vendor's contact",
    responses: { 200: ChildDeleted },
    events: VENDOR_WRITE_EVENTS,
  },
  createVendorAddress: {
    method: "POST",
    path: "/v1/vendors/{vendorId}/addresses",
    scope: "vendors.write",
    summary: "Add an address to a vendor",
    body: CreateVendorAddressBody,
    responses: { 201: VendorAddress },
    events: VENDOR_WRITE_EVENTS,
  },
  updateVendorAddress: {
    method: "PATCH",
    path: "/v1/vendor-addresses/{vendorAddressId}",
    scope: "vendors.write",
    summary: "Change a vendor's address",
    body: UpdateVendorAddressBody,
    responses: { 200: VendorAddress },
    events: VENDOR_WRITE_EVENTS,
  },
  deleteVendorAddress: {
    method: "DELETE",
    path: "/v1/vendor-addresses/{vendorAddressId}",
    scope: "vendors.write",
    summary: "Remove a vendor's address",
    responses: { 200: ChildDeleted },
    events: VENDOR_WRITE_EVENTS,
  },
});

/** Customers: the shops' clients, with their contacts and addresses, and bulk changes. */
import { z } from "zod";
import {
  BooleanParam,
  DateTime,
  Deleted,
  described,
  Email,
  ExternalId,
  externalIdDescription,
  externalIdFilter,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { bulkBody, BulkResult } from "../bulk.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Flag, OptionalText } from "../quotes/values.ts";
import {
  ADDRESS_DESCRIPTIONS,
  addressFields,
  addressShape,
  CONTACT_DESCRIPTIONS,
  contactFields,
  contactShape,
  CustomerTier,
  CustomFieldValues,
  Tag,
  TAGS_MAX,
  TIMESTAMP_DESCRIPTIONS,
} from "./values.ts";

export const CustomerContact = z.object(described({
  id: Uuid,
  customerId: Uuid,
  ...contactShape,
}, {
  id: "The contact's id (a quote's `contactId`)",
  customerId: "The customer the contact works for",
  ...CONTACT_DESCRIPTIONS,
  ...TIMESTAMP_DESCRIPTIONS,
})).meta({ id: "CustomerContact", description: "A person at a customer" });
export type CustomerContact = z.infer<typeof CustomerContact>;

export const CustomerAddress = z.object(described({
  id: Uuid,
  customerId: Uuid,
  ...addressShape,
}, {
  id: "The address's id (a quote's `shippingAddressId`)",
  customerId: "The customer it belongs to",
  ...ADDRESS_DESCRIPTIONS,
  ...TIMESTAMP_DESCRIPTIONS,
})).meta({ id: "CustomerAddress", description: "A delivery or billing address of a customer" });
export type CustomerAddress = z.infer<typeof CustomerAddress>;

const CUSTOMER_DESCRIPTIONS = {
  id: "The customer's id (a quote's `clientId`)",
  companyName: "The customer's name: a company, a club, or a person",
  externalId: externalIdDescription("customers"),
  email: "Primary email address",
  phone: "Primary phone number",
  tier: "Price and service tier: `standard`, `bronze`, `silver`, `gold` or `wholesale`",
  tags: "The shop's own labels, compared without regard to case",
  taxExempt: "Whether quotes for this customer carry no tax",
  taxNumber: "The customer's tax or business number (ABN, VAT number)",
  defaultMarkupGroupId: "The quotes markup group its garments are priced with by default (an " +
    "id in the quotes service; not checked here)",
  salesRepEmail: "The account manager looking after the customer",
  notes: "Internal notes",
  customFields: "Values of the organisation's custom fields for customers, by definition id",
  isArchived: "Whether the customer is archived: kept for history, its tier frozen",
  contacts: "People at the customer, oldest first",
  addresses: "Addresses, oldest first",
  ...TIMESTAMP_DESCRIPTIONS,
};

export const Customer = z.object(described({
  id: Uuid,
  companyName: z.string(),
  externalId: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  tier: CustomerTier,
  tags: z.array(z.string()),
  taxExempt: z.boolean(),
  taxNumber: z.string().nullable(),
  defaultMarkupGroupId: Uuid.nullable(),
  salesRepEmail: z.string().nullable(),
  notes: z.string().nullable(),
  customFields: z.record(z.string(), z.unknown()),
  isArchived: z.boolean(),
  contacts: z.array(CustomerContact),
  addresses: z.array(CustomerAddress),
  createdAt: DateTime,
  updatedAt: DateTime,
}, CUSTOMER_DESCRIPTIONS)).meta({
  id: "Customer",
  description: "A client of the shop, with its contacts and addresses",
});
export type Customer = z.infer<typeof Customer>;

export const CUSTOMER_EXAMPLE: Customer = {
  id: "0193a3d1-0a1b-7c2d-8e3f-405162738495",
  companyName: "Riverside Bakery",
  externalId: "xero-contact-88f2",
  email: "orders@riversidebakery.com.au",
  phone: "+61 2 9555 0142",
  tier: "silver",
  tags: ["hospitality", "repeat"],
  taxExempt: false,
  taxNumber: "51 824 753 556",
  defaultMarkupGroupId: null,
  salesRepEmail: "mia@inkwellprint.com.au",
  notes: "Prefers proofs by email before 10am",
  customFields: { "0193a3d0-7e1f-7a20-8b31-4c5d6e7f8091": "StarTrack" },
  isArchived: false,
  contacts: [{
    id: "0193a3d1-0a1b-7c2d-8e3f-405162738496",
    customerId: "0193a3d1-0a1b-7c2d-8e3f-405162738495",
    firstName: "Sam",
    lastName: "Okafor",
    email: "sam@riversidebakery.com.au",
    phone: "0412 555 019",
    role: "Owner",
    createdAt: "2026-03-01T22:03:11.502Z",
    updatedAt: "2026-03-01T22:03:11.502Z",
  }],
  addresses: [{
    id: "0193a3d1-0a1b-7c2d-8e3f-405162738497",
    customerId: "0193a3d1-0a1b-7c2d-8e3f-405162738495",
    label: "Shop",
    street: "14 Wharf Road",
    city: "Balmain",
    state: "NSW",
    postcode: "2041",
    country: "AU",
    createdAt: "2026-03-01T22:03:11.502Z",
    updatedAt: "2026-03-01T22:03:11.502Z",
  }],
  createdAt: "2026-03-01T22:03:11.502Z",
  updatedAt: "2026-06-18T04:40:00.915Z",
};
setExamples(Customer, CUSTOMER_EXAMPLE);
setExamples(CustomerContact, CUSTOMER_EXAMPLE.contacts[0]!);
setExamples(CustomerAddress, CUSTOMER_EXAMPLE.addresses[0]!);

const Tags = z.array(Tag).max(TAGS_MAX, `At most ${TAGS_MAX} tags`);

const customerFields = {
  companyName: Text(200),
  externalId: ExternalId,
  email: Email.nullable(),
  phone: OptionalText(50),
  tier: CustomerTier,
  tags: Tags,
  taxExempt: Flag,
  taxNumber: OptionalText(50),
  defaultMarkupGroupId: Uuid.nullable(),
  salesRepEmail: Email.nullable(),
  notes: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  customFields: CustomFieldValues,
  isArchived: Flag,
};

export const { create: CreateCustomerBody, update: UpdateCustomerBody } = writeBodies(
  "Customer",
  described(customerFields, CUSTOMER_DESCRIPTIONS),
  ["companyName"],
);
setExamples(CreateCustomerBody, {
  companyName: "Riverside Bakery",
  email: "orders@riversidebakery.com.au",
  tier: "silver",
  tags: ["hospitality"],
});
setExamples(UpdateCustomerBody, { tier: "gold" });
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;
export type UpdateCustomerBody = z.infer<typeof UpdateCustomerBody>;

export const { create: CreateCustomerContactBody, update: UpdateCustomerContactBody } = writeBodies(
  "CustomerContact",
  described(contactFields, CONTACT_DESCRIPTIONS),
);
setExamples(CreateCustomerContactBody, {
  firstName: "Sam",
  lastName: "Okafor",
  email: "sam@riversidebakery.com.au",
  role: "Owner",
});
setExamples(UpdateCustomerContactBody, { phone: "0412 555 019" });
export type CreateCustomerContactBody = z.infer<typeof CreateCustomerContactBody>;
export type UpdateCustomerContactBody = z.infer<typeof UpdateCustomerContactBody>;

export const { create: CreateCustomerAddressBody, update: UpdateCustomerAddressBody } = writeBodies(
  "CustomerAddress",
  described(addressFields, ADDRESS_DESCRIPTIONS),
);
setExamples(CreateCustomerAddressBody, {
  label: "Shop",
  street: "14 Wharf Road",
  city: "Balmain",
  state: "NSW",
  postcode: "2041",
  country: "AU",
});
setExamples(UpdateCustomerAddressBody, { label: "Warehouse" });
export type CreateCustomerAddressBody = z.infer<typeof CreateCustomerAddressBody>;
export type UpdateCustomerAddressBody = z.infer<typeof UpdateCustomerAddressBody>;

export const CUSTOMER_SORT_FIELDS = ["createdAt", "updatedAt", "companyName", "tier"] as const;

export const ListCustomersQuery = offsetListQuery({
  sortFields: CUSTOMER_SORT_FIELDS,
  named: {
    ...described({
      tier: CustomerTier.optional(),
      isArchived: BooleanParam.optional(),
      salesRepEmail: z.string().max(320, "Must be at most 320 characters").optional(),
    }, {
      tier: "Only customers of this tier",
      isArchived: "`true` for archived customers only, `false` for current ones only",
      salesRepEmail: "Only this account manager's customers",
    }),
    ...externalIdFilter("customer"),
  },
  search: true,
});
export type ListCustomersQuery = z.infer<typeof ListCustomersQuery>;

export const BulkTierBody = bulkBody(
  "CustomerTier",
  described({ tier: CustomerTier }, { tier: "The tier to give every targeted customer" }),
  "Set the tier of every customer the target picks",
);
setExamples(BulkTierBody, {
  target: { filters: [{ field: "tier", op: "eq", value: "silver" }], excludeIds: [] },
  tier: "gold",
});
export type BulkTierBody = z.infer<typeof BulkTierBody>;

export const BulkTagBody = bulkBody(
  "CustomerTags",
  described({
    add: Tags.optional(),
    remove: Tags.optional(),
  }, {
    add: "Tags to add (a customer that has one already keeps it once)",
    remove: "Tags to remove, compared without regard to case",
  }),
  "Add tags to, or remove tags from, every customer the target picks",
).refine((body) => (body.add?.length ?? 0) + (body.remove?.length ?? 0) > 0, {
  message: "Give tags to add or to remove",
  path: ["add"],
});
setExamples(BulkTagBody, { target: { ids: [CUSTOMER_EXAMPLE.id] }, add: ["repeat"] });
export type BulkTagBody = z.infer<typeof BulkTagBody>;

export const BulkArchiveBody = bulkBody(
  "CustomerArchive",
  described({ archived: Flag.optional() }, {
    archived: "`true` (the default) archives, `false` brings archived customers back",
  }),
  "Archive (or bring back) every customer the target picks",
);
setExamples(BulkArchiveBody, { target: { search: "closed down" }, archived: true });
export type BulkArchiveBody = z.infer<typeof BulkArchiveBody>;

const ChildDeleted = z.object(described({ id: Uuid, customerId: Uuid }, {
  id: "The id of what was removed",
  customerId: "The customer it belonged to",
})).meta({ id: "CustomerChildDeleted", description: "What a contact or address delete removed" });
setExamples(ChildDeleted, {
  id: CUSTOMER_EXAMPLE.contacts[0]!.id,
  customerId: CUSTOMER_EXAMPLE.id,
});

export const customerEvents = defineEvents("crm", "customers.read", {
  "customer.created": { summary: "A customer was created", data: Customer },
  "customer.updated": {
    summary: "A customer, one of its contacts or addresses, its tier, tags or archived flag " +
      "changed (one event per customer, also in bulk)",
    data: Customer,
  },
  "customer.deleted": { summary: "A customer was deleted", data: Customer },
});

const CUSTOMER_WRITE_EVENTS = ["customer.updated"] as const;

export const customerOperations = operations("Customers", {
  createCustomer: {
    method: "POST",
    path: "/v1/customers",
    scope: "customers.write",
    summary: "Create a customer",
    body: CreateCustomerBody,
    responses: { 201: Customer },
    events: ["customer.created"],
  },
  listCustomers: {
    method: "GET",
    path: "/v1/customers",
    scope: "customers.read",
    summary: "List customers, oldest first unless sorted otherwise",
    query: ListCustomersQuery,
    responses: { 200: page(Customer) },
    examples: { query: { tier: "gold", search: "bakery" } },
  },
  getCustomer: {
    method: "GET",
    path: "/v1/customers/{customerId}",
    scope: "customers.read",
    summary: "Read one customer with its contacts and addresses",
    responses: { 200: Customer },
  },
  updateCustomer: {
    method: "PATCH",
    path: "/v1/customers/{customerId}",
    scope: "customers.write",
    summary: "Change a customer",
    body: UpdateCustomerBody,
    responses: { 200: Customer },
    events: CUSTOMER_WRITE_EVENTS,
  },
  deleteCustomer: {
    method: "DELETE",
    path: "/v1/customers/{customerId}",
    scope: "customers.write",
    summary: "Delete a customer with its contacts and addresses; tasks that name it lose the link",
    responses: { 200: Deleted },
    events: ["customer.deleted", "task.updated"],
  },
  createCustomerContact: {
    method: "POST",
    path: "/v1/customers/{customerId}/contacts",
    scope: "customers.write",
    summary: "Add a contact to a customer",
    body: CreateCustomerContactBody,
    responses: { 201: CustomerContact },
    events: CUSTOMER_WRITE_EVENTS,
  },
  updateCustomerContact: {
    method: "PATCH",
    path: "/v1/customer-contacts/{customerContactId}",
    scope: "customers.write",
    summary: "Change a customer's contact",
    body: UpdateCustomerContactBody,
    responses: { 200: CustomerContact },
    events: CUSTOMER_WRITE_EVENTS,
  },
  deleteCustomerContact: {
    method: "DELETE",
    path: "/v1/customer-contacts/{customerContactId}",
    scope: "customers.write",
    summary: "Remove a customer's contact",
    responses: { 200: ChildDeleted },
    events: CUSTOMER_WRITE_EVENTS,
  },
  createCustomerAddress: {
    method: "POST",
    path: "/v1/customers/{customerId}/addresses",
    scope: "customers.write",
    summary: "Add an address to a customer",
    body: CreateCustomerAddressBody,
    responses: { 201: CustomerAddress },
    events: CUSTOMER_WRITE_EVENTS,
  },
  updateCustomerAddress: {
    method: "PATCH",
    path: "/v1/customer-addresses/{customerAddressId}",
    scope: "customers.write",
    summary: "Change a customer's address",
    body: UpdateCustomerAddressBody,
    responses: { 200: CustomerAddress },
    events: CUSTOMER_WRITE_EVENTS,
  },
  deleteCustomerAddress: {
    method: "DELETE",
    path: "/v1/customer-addresses/{customerAddressId}",
    scope: "customers.write",
    summary: "Remove a customer's address",
    responses: { 200: ChildDeleted },
    events: CUSTOMER_WRITE_EVENTS,
  },
  bulkSetCustomerTier: {
    method: "POST",
    path: "/v1/customers/bulk/tier",
    scope: "customers.write",
    summary: "Set the tier of every customer a target picks (archived customers are refused)",
    body: BulkTierBody,
    responses: { 200: BulkResult },
    events: CUSTOMER_WRITE_EVENTS,
  },
  bulkTagCustomers: {
    method: "POST",
    path: "/v1/customers/bulk/tag",
    scope: "customers.write",
    summary: "Add or remove tags on every customer a target picks",
    body: BulkTagBody,
    responses: { 200: BulkResult },
    events: CUSTOMER_WRITE_EVENTS,
  },
  bulkArchiveCustomers: {
    method: "POST",
    path: "/v1/customers/bulk/archive",
    scope: "customers.write",
    summary: "Archive, or bring back, every customer a target picks",
    body: BulkArchiveBody,
    responses: { 200: BulkResult },
    events: CUSTOMER_WRITE_EVENTS,
  },
});

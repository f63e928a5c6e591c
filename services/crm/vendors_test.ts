import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type {
  CustomFieldDefinition,
  Vendor,
  VendorAddress,
  VendorContact,
} from "@printshop/shared/contracts/crm";
import type { Config } from "./config.ts";
import { crmService } from "./app.ts";

type H = ServiceHarness<Config>;
const call = callAs;
const ok = okAs;

async function vendor(h: H, org: string, body: Record<string, unknown>): Promise<Vendor> {
  return await ok<Vendor>(h, "POST", "/v1/vendors", org, body);
}

/** The event types written for one vendor, oldest first. */
async function eventsOf(h: H, org: string, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE organization_id = ${org} AND aggregate_id = ${id}
    ORDER BY created_at, id`;
  return rows.map((r) => r.type);
}

async function names(h: H, org: string, query = ""): Promise<string[]> {
  const page = await ok<{ items: Vendor[]; totalCount: number }>(
    h,
    "GET",
    `/v1/vendors${query}`,
    org,
  );
  assertEquals(page.totalCount, page.items.length);
  return page.items.map((v) => v.name);
}

Deno.test("vendors: create, read, change, contacts and addresses, each change an event", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const screen = await vendor(h, org, {
    name: "Harbour Screen Co",
    kind: "Decorator",
    serviceTypes: ["ScreenPrint", "Transfers"],
    ordersWebsite: "https://orders.harbourscreen.example",
    defaultLeadTimeDays: 7,
    minimumOrder: 150.5,
  });
  assertEquals(
    [screen.kind, screen.serviceTypes, screen.isActive, screen.archivedAt, screen.isManaged],
    ["Decorator", ["ScreenPrint", "Transfers"], true, null, false],
  );
  assertEquals([screen.minimumOrder, screen.contacts, screen.customFields], [150.5, [], {}]);
  const twice = await call(h, "POST", "/v1/vendors", org, {
    name: "X",
    kind: "Decorator",
    serviceTypes: ["Embroidery", "Embroidery"],
  });
  assertEquals(twice.status, 400, JSON.stringify(twice.body));
  assertEquals((await call(h, "POST", "/v1/vendors", org, { name: "No kind" })).status, 400);

  const contact = await ok<VendorContact>(h, "POST", `/v1/vendors/${screen.id}/contacts`, org, {
    firstName: "Lee",
    email: "lee@harbourscreen.example",
  });
  assertEquals(contact.vendorId, screen.id);
  const address = await ok<VendorAddress>(h, "POST", `/v1/vendors/${screen.id}/addresses`, org, {
    label: "Workshop",
    city: "Marrickville",
  });
  await ok(h, "PATCH", `/v1/vendor-contacts/${contact.id}`, org, { role: "Production manager" });
  await ok(h, "PATCH", `/v1/vendor-addresses/${address.id}`, org, { postcode: "2204" });
  const patched = await ok<Vendor>(h, "PATCH", `/v1/vendors/${screen.id}`, org, {
    defaultLeadTimeDays: 10,
    notes: "Rush jobs: ask Lee",
  });
  assertEquals([patched.defaultLeadTimeDays, patched.notes], [10, "Rush jobs: ask Lee"]);
  const read = await ok<Vendor>(h, "GET", `/v1/vendors/${screen.id}`, org);
  assertEquals(read.contacts.map((c) => [c.firstName, c.role]), [["Lee", "Production manager"]]);
  assertEquals(read.addresses.map((a) => [a.city, a.postcode]), [["Marrickville", "2204"]]);
  // A change that changes nothing writes nothing.
  await ok(h, "PATCH", `/v1/vendors/${screen.id}`, org, {});
  await ok(h, "PATCH", `/v1/vendor-contacts/${contact.id}`, org, {});

  const removed = await ok(h, "DELETE", `/v1/vendor-contacts/${contact.id}`, org);
  assertEquals(removed, { id: contact.id, vendorId: screen.id });
  await ok(h, "DELETE", `/v1/vendor-addresses/${address.id}`, org);
  assertEquals((await call(h, "DELETE", `/v1/vendor-addresses/${address.id}`, org)).status, 404);
  const after = await ok<Vendor>(h, "GET", `/v1/vendors/${screen.id}`, org);
  assertEquals([after.contacts, after.addresses], [[], []]);

  assertEquals(await eventsOf(h, org, screen.id), [
    "vendor.created",
    ...Array(7).fill("vendor.updated"),
  ]);
  const [last] = await h.sql<{ payload: Vendor }[]>`
    SELECT payload FROM outbox WHERE aggregate_id = ${screen.id}
    ORDER BY created_at DESC, id DESC LIMIT 1`;
  assertEquals(last!.payload, after, "the event carries the whole vendor as it now is");
});

Deno.test("vendors: archive and unarchive are idempotent; the default list hides archived ones", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const blanks = await vendor(h, org, {
    name: "AS Colour",
    kind: "InventorySupplier",
    accountNumber: "ASC-88812",
    isManaged: true,
  });
  const stitch = await vendor(h, org, {
    name: "Bayside Stitch",
    kind: "Decorator",
    serviceTypes: ["Embroidery", "Digitizing"],
  });
  const freight = await vendor(h, org, { name: "Couriers Please", kind: "Freight" });

  const archived = await ok<Vendor>(h, "POST", `/v1/vendors/${freight.id}/archive`, org);
  assertEquals(archived.isActive, false);
  assert(archived.archivedAt !== null);
  const again = await ok<Vendor>(h, "POST", `/v1/vendors/${freight.id}/archive`, org, {});
  assertEquals(again, archived, "archiving an archived vendor changes nothing");
  assertEquals(await eventsOf(h, org, freight.id), ["vendor.created", "vendor.archived"]);

  assertEquals(await names(h, org), ["AS Colour", "Bayside Stitch"]);
  assertEquals(await names(h, org, "?isActive=false"), ["Couriers Please"]);
  assertEquals(await names(h, org, "?isActive=true"), ["AS Colour", "Bayside Stitch"]);
  const filters = encodeURIComponent(
    JSON.stringify([{ field: "isActive", op: "eq", value: false }]),
  );
  assertEquals(await names(h, org, `?filters=${filters}`), ["Couriers Please"]);
  assertEquals(await names(h, org, "?kind=Decorator"), ["Bayside Stitch"]);
  assertEquals(await names(h, org, "?serviceType=Embroidery"), ["Bayside Stitch"]);
  assertEquals(await names(h, org, "?serviceType=ScreenPrint"), []);
  assertEquals(await names(h, org, "?search=asc-888"), ["AS Colour"]);
  assertEquals(await names(h, org, "?sortField=name&sortDirection=desc"), [
    "Bayside Stitch",
    "AS Colour",
  ]);
  assertEquals((await call(h, "GET", "/v1/vendors?serviceType=Knitting", org)).status, 400);
  // Still readable and changeable while archived.
  assertEquals((await ok<Vendor>(h, "GET", `/v1/vendors/${freight.id}`, org)).isActive, false);

  const back = await ok<Vendor>(h, "POST", `/v1/vendors/${freight.id}/unarchive`, org);
  assertEquals([back.isActive, back.archivedAt], [true, null]);
  await ok(h, "POST", `/v1/vendors/${freight.id}/unarchive`, org);
  await ok(h, "POST", `/v1/vendors/${blanks.id}/unarchive`, org);
  assertEquals(await eventsOf(h, org, freight.id), [
    "vendor.created",
    "vendor.archived",
    "vendor.unarchived",
  ]);
  assertEquals(await eventsOf(h, org, blanks.id), ["vendor.created"]);
  assertEquals(await names(h, org), ["AS Colour", "Bayside Stitch", "Couriers Please"]);
  assertEquals(stitch.serviceTypes, ["Embroidery", "Digitizing"]);
});

Deno.test("vendors: custom field values are checked against the vendor definitions", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const terms = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Payment terms",
    type: "select",
    entity: "vendor",
    options: ["COD", "Net 30"],
  });
  const customerField = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Courier",
    type: "text",
    entity: "customer",
  });
  const bad = await call(h, "POST", "/v1/vendors", org, {
    name: "Harbour Screen Co",
    kind: "Decorator",
    customFields: { [terms.id]: "Net 90" },
  });
  assertEquals(bad.status, 400, JSON.stringify(bad.body));
  assertEquals(bad.body.details?.map((d) => d.path), [`customFields.${terms.id}`]);
  const notVendors = await call(h, "POST", "/v1/vendors", org, {
    name: "Harbour Screen Co",
    kind: "Decorator",
    customFields: { [customerField.id]: "StarTrack" },
  });
  assertEquals(notVendors.body.details?.map((d) => d.path), [`customFields.${customerField.id}`]);
  assertEquals(await names(h, org), [], "nothing was written");

  const made = await vendor(h, org, {
    name: "Harbour Screen Co",
    kind: "Decorator",
    customFields: { [terms.id]: "COD" },
  });
  assertEquals(made.customFields, { [terms.id]: "COD" });
  const refused = await call(h, "PATCH", `/v1/vendors/${made.id}`, org, {
    customFields: { [terms.id]: "Whenever" },
  });
  assertEquals(refused.status, 400);
  assertEquals(refused.body.details?.map((d) => d.path), [`customFields.${terms.id}`]);
  const changed = await ok<Vendor>(h, "PATCH", `/v1/vendors/${made.id}`, org, {
    customFields: { [terms.id]: "Net 30" },
  });
  assertEquals(changed.customFields, { [terms.id]: "Net 30" });
  // An option a vendor still holds cannot be taken away from the definition.
  const shrink = await call(h, "PATCH", `/v1/custom-fields/${terms.id}`, org, {
    options: ["COD"],
  });
  assertEquals(shrink.status, 400, JSON.stringify(shrink.body));
  const cleared = await ok<Vendor>(h, "PATCH", `/v1/vendors/${made.id}`, org, {
    customFields: { [terms.id]: null },
  });
  assertEquals(cleared.customFields, {});
});

Deno.test("vendors: another organisation's vendor and its children answer 404", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const mine = await vendor(h, org, { name: "AS Colour", kind: "InventorySupplier" });
  const contact = await ok<VendorContact>(h, "POST", `/v1/vendors/${mine.id}/contacts`, org, {
    firstName: "Ana",
  });
  const address = await ok<VendorAddress>(h, "POST", `/v1/vendors/${mine.id}/addresses`, org, {
    city: "Alexandria",
  });
  const attempts: [string, string, unknown?][] = [
    ["GET", `/v1/vendors/${mine.id}`],
    ["PATCH", `/v1/vendors/${mine.id}`, { name: "Mine now" }],
    ["POST", `/v1/vendors/${mine.id}/archive`],
    ["POST", `/v1/vendors/${mine.id}/unarchive`],
    ["POST", `/v1/vendors/${mine.id}/contacts`, { firstName: "Eve" }],
    ["POST", `/v1/vendors/${mine.id}/addresses`, { city: "Elsewhere" }],
    ["PATCH", `/v1/vendor-contacts/${contact.id}`, { role: "Spy" }],
    ["DELETE", `/v1/vendor-contacts/${contact.id}`],
    ["PATCH", `/v1/vendor-addresses/${address.id}`, { city: "Elsewhere" }],
    ["DELETE", `/v1/vendor-addresses/${address.id}`],
  ];
  for (const [method, path, body] of attempts) {
    const answer = await call(h, method, path, other, body);
    assertEquals([method, path, answer.status], [method, path, 404]);
    assertEquals(answer.body.error, "not_found");
  }
  assertEquals(await names(h, other), []);
  assertEquals(await names(h, other, "?isActive=true"), []);
  const unchanged = await ok<Vendor>(h, "GET", `/v1/vendors/${mine.id}`, org);
  assertEquals(unchanged, {
    ...mine,
    contacts: [contact],
    addresses: [address],
    updatedAt: unchanged.updatedAt,
  });
  assertEquals((await h.sql`SELECT 1 FROM outbox WHERE organization_id = ${other}`).length, 0);
});

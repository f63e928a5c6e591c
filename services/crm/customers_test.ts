import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { BulkResult } from "@printshop/shared/contracts/bulk";
import type { Customer, CustomFieldDefinition } from "@printshop/shared/contracts/crm";
import type { Config } from "./config.ts";
import { crmService } from "./app.ts";

type H = ServiceHarness<Config>;
const call = callAs;
const ok = okAs;

async function customer(h: H, org: string, body: Record<string, unknown>): Promise<Customer> {
  return await ok<Customer>(h, "POST", "/v1/customers", org, body);
}

async function events(h: H, org: string, type: string): Promise<string[]> {
  const rows = await h.sql<{ aggregate_id: string }[]>`
    SELECT aggregate_id FROM outbox WHERE organization_id = ${org} AND type = ${type}
    ORDER BY created_at, id`;
  return rows.map((r) => r.aggregate_id);
}

Deno.test("customers: create, read, change, contacts and addresses, delete, each an event", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const bakery = await customer(h, org, {
    companyName: "Riverside Bakery",
    email: "orders@riverside.example",
    tags: ["Hospitality", "hospitality ", "Repeat"],
  });
  assertEquals([bakery.tier, bakery.tags, bakery.isArchived], [
    "standard",
    ["hospitality", "repeat"],
    false,
  ]);
  const contact = await ok<{ id: string; customerId: string }>(
    h,
    "POST",
    `/v1/customers/${bakery.id}/contacts`,
    org,
    { firstName: "Sam", email: "sam@riverside.example" },
  );
  const address = await ok<{ id: string }>(h, "POST", `/v1/customers/${bakery.id}/addresses`, org, {
    label: "Shop",
    city: "Balmain",
  });
  await ok(h, "PATCH", `/v1/customer-contacts/${contact.id}`, org, { role: "Owner" });
  await ok(h, "PATCH", `/v1/customer-addresses/${address.id}`, org, { postcode: "2041" });
  const read = await ok<Customer>(h, "GET", `/v1/customers/${bakery.id}`, org);
  assertEquals(read.contacts.map((c) => [c.firstName, c.role]), [["Sam", "Owner"]]);
  assertEquals(read.addresses.map((a) => [a.city, a.postcode]), [["Balmain", "2041"]]);
  const other = crypto.randomUUID();
  assertEquals((await call(h, "GET", `/v1/customers/${bakery.id}`, other)).status, 404);
  assertEquals(
    (await call(h, "PATCH", `/v1/customer-contacts/${contact.id}`, other, {})).status,
    404,
  );
  assertEquals(
    (await call(h, "DELETE", `/v1/customer-addresses/${address.id}`, other)).status,
    404,
  );
  await ok(h, "DELETE", `/v1/customer-contacts/${contact.id}`, org);
  await ok(h, "DELETE", `/v1/customer-addresses/${address.id}`, org);
  const patched = await ok<Customer>(h, "PATCH", `/v1/customers/${bakery.id}`, org, {
    tier: "gold",
  });
  assertEquals([patched.tier, patched.contacts, patched.addresses], ["gold", [], []]);
  await ok(h, "DELETE", `/v1/customers/${bakery.id}`, org);
  assertEquals((await call(h, "GET", `/v1/customers/${bakery.id}`, org)).status, 404);
  assertEquals(await events(h, org, "customer.created"), [bakery.id]);
  assertEquals((await events(h, org, "customer.updated")).length, 7, "each child change too");
  assertEquals(await events(h, org, "customer.deleted"), [bakery.id]);
});

Deno.test("customers: custom field values are checked against their definitions", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const courier = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Courier",
    type: "select",
    entity: "customer",
    options: ["StarTrack", "Aramex"],
  });
  const since = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Customer since",
    type: "date",
    entity: "customer",
  });
  const taskOnly = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Hours",
    type: "number",
    entity: "task",
  });
  const bad = await call(h, "POST", "/v1/customers", org, {
    companyName: "X",
    customFields: { [courier.id]: "DHL", [since.id]: "2026-02-30", [taskOnly.id]: 3 },
  });
  assertEquals(bad.status, 400, JSON.stringify(bad.body));
  assertEquals(
    (bad.body.details ?? []).map((d) => d.path).sort(),
    [`customFields.${courier.id}`, `customFields.${since.id}`, `customFields.${taskOnly.id}`]
      .sort(),
  );
  const good = await customer(h, org, {
    companyName: "Good",
    customFields: { [courier.id]: "Aramex", [since.id]: "2020-01-31" },
  });
  assertEquals(good.customFields, { [courier.id]: "Aramex", [since.id]: "2020-01-31" });
  const cleared = await ok<Customer>(h, "PATCH", `/v1/customers/${good.id}`, org, {
    customFields: { [since.id]: null },
  });
  assertEquals(cleared.customFields, { [courier.id]: "Aramex" }, "null removes; the rest stays");
  const dropUsed = await call(h, "PATCH", `/v1/custom-fields/${courier.id}`, org, {
    options: ["StarTrack"],
  });
  assertEquals(dropUsed.status, 400, "an option a record holds cannot be removed");
  const inUse = await call(h, "DELETE", `/v1/custom-fields/${courier.id}`, org);
  assertEquals(inUse.status, 409, JSON.stringify(inUse.body));
  await ok(h, "DELETE", `/v1/custom-fields/${courier.id}?force=true`, org);
  const after = await ok<Customer>(h, "GET", `/v1/customers/${good.id}`, org);
  assertEquals(after.customFields, {}, "force removed the values with the definition");
  const listed = await ok<CustomFieldDefinition[]>(h, "GET", "/v1/custom-fields?entity=task", org);
  assertEquals(listed.map((d) => d.id), [taskOnly.id]);
  const noOptions = await call(h, "POST", "/v1/custom-fields", org, {
    name: "Size",
    type: "multiselect",
    entity: "customer",
  });
  assertEquals(noOptions.status, 400);
});

Deno.test("bulk tier: a filter target is resolved when it runs, with excluded, archived and other organisations' rows", async () => {
  await using h: H = await serviceHarness(crmService, { config: { BULK_MAX_ROWS: 5 } });
  const org = crypto.randomUUID();
  const a = await customer(h, org, { companyName: "A", tier: "silver" });
  const b = await customer(h, org, { companyName: "B", tier: "silver" });
  const excluded = await customer(h, org, { companyName: "C", tier: "silver" });
  const archived = await customer(h, org, { companyName: "D", tier: "silver", isArchived: true });
  const already = await customer(h, org, { companyName: "E", tier: "gold" });
  // The client chose its filter before this customer existed: it is included all the same.
  const target = {
    filters: [{ field: "tier", op: "in", values: ["silver", "gold"] }],
    excludeIds: [excluded.id],
  };
  const late = await customer(h, org, { companyName: "F", tier: "silver" });
  const result = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/tier", org, {
    target,
    tier: "gold",
  });
  const outcome = (id: string) => result.outcomes.find((o) => o.id === id);
  assertEquals(outcome(a.id)?.status, "ok");
  assertEquals(outcome(late.id)?.status, "ok", "a customer created after the filter is included");
  assertEquals(outcome(excluded.id), undefined, "excludeIds are left alone");
  assertEquals(outcome(archived.id)?.status, "refused");
  assert(outcome(archived.id)?.reason?.includes("archived"));
  assertEquals(outcome(already.id)?.status, "unchanged");
  assertEquals([result.requested, result.affected, result.refused, result.failed], [5, 3, 1, 0]);
  assertEquals((await ok<Customer>(h, "GET", `/v1/customers/${b.id}`, org)).tier, "gold");
  assertEquals((await ok<Customer>(h, "GET", `/v1/customers/${excluded.id}`, org)).tier, "silver");
  const updated = await events(h, org, "customer.updated");
  assertEquals(updated.sort(), [a.id, b.id, late.id].sort(), "an event per changed row only");

  const theirs = await customer(h, crypto.randomUUID(), { companyName: "Theirs" });
  const byIds = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/tier", org, {
    target: { ids: [a.id, theirs.id] },
    tier: "bronze",
  });
  assertEquals(byIds.outcomes, [
    { id: a.id, status: "ok" },
    { id: theirs.id, status: "failed", reason: "not_found" },
  ]);
  const both = await call(h, "POST", "/v1/customers/bulk/tier", org, {
    target: { ids: [a.id], filters: [] },
    tier: "gold",
  });
  assertEquals(both.status, 400);
  await customer(h, org, { companyName: "G" });
  const tooMany = await call(h, "POST", "/v1/customers/bulk/tier", org, {
    target: { filters: [] },
    tier: "gold",
  });
  assertEquals(tooMany.status, 400, "7 rows over BULK_MAX_ROWS 5");
  assert(String(tooMany.body.message).includes("5"), JSON.stringify(tooMany.body));
});

Deno.test("bulk tag and archive", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const a = await customer(h, org, { companyName: "A", tags: ["x"] });
  const b = await customer(h, org, { companyName: "B", tags: ["y"] });
  const tagged = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/tag", org, {
    target: { ids: [a.id, b.id] },
    add: ["Y", "z"],
    remove: ["x"],
  });
  assertEquals(tagged.outcomes.map((o) => o.status), ["ok", "ok"]);
  assertEquals((await ok<Customer>(h, "GET", `/v1/customers/${a.id}`, org)).tags, ["y", "z"]);
  assertEquals((await ok<Customer>(h, "GET", `/v1/customers/${b.id}`, org)).tags, ["y", "z"]);
  const again = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/tag", org, {
    target: { search: "A" },
    add: ["z"],
  });
  assertEquals(again.outcomes, [{ id: a.id, status: "unchanged" }]);
  const nothing = await call(h, "POST", "/v1/customers/bulk/tag", org, { target: { ids: [a.id] } });
  assertEquals(nothing.status, 400);
  const archived = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/archive", org, {
    target: { filters: [{ field: "companyName", op: "eq", value: "B" }] },
  });
  assertEquals(archived.affected, 1);
  const list = await ok<{ items: Customer[] }>(h, "GET", "/v1/customers?isArchived=true", org);
  assertEquals(list.items.map((c) => c.id), [b.id]);
  const back = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/archive", org, {
    target: { ids: [a.id, b.id] },
    archived: false,
  });
  assertEquals(back.outcomes.map((o) => o.status), ["unchanged", "ok"]);
});

Deno.test("found by an outside attack: year 0, frozen tiers by PATCH, tag and value limits, tier order", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const yearZero = await call(h, "POST", "/v1/tasks", org, { title: "d", dueDate: "0000-01-01" });
  assertEquals(yearZero.status, 400, "PostgreSQL has no year 0: refused, not a 500");
  const archived = await customer(h, org, { companyName: "Old", isArchived: true });
  const frozen = await call(h, "PATCH", `/v1/customers/${archived.id}`, org, { tier: "gold" });
  assertEquals(frozen.status, 409, JSON.stringify(frozen.body));
  const back = await ok<Customer>(h, "PATCH", `/v1/customers/${archived.id}`, org, {
    tier: "gold",
    isArchived: false,
  });
  assertEquals([back.tier, back.isArchived], ["gold", false], "bringing it back frees the tier");
  const tagged = await customer(h, org, {
    companyName: "Tagged",
    tags: Array.from({ length: 50 }, (_, i) => `t${i}`),
  });
  const more = await ok<BulkResult>(h, "POST", "/v1/customers/bulk/tag", org, {
    target: { ids: [tagged.id] },
    add: ["one-too-many"],
  });
  assertEquals(more.outcomes[0]?.status, "refused");
  await customer(h, org, { companyName: "W", tier: "wholesale" });
  await customer(h, org, { companyName: "B", tier: "bronze" });
  const byTier = await ok<{ items: Customer[] }>(
    h,
    "GET",
    "/v1/customers?sortField=tier&isArchived=false",
    org,
  );
  assertEquals(byTier.items.map((c) => c.tier), ["standard", "bronze", "gold", "wholesale"]);
});

Deno.test("found by an outside attack: no value outlives its definition when writes race a delete", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const people = await Promise.all(
    Array.from({ length: 8 }, (_, i) => customer(h, org, { companyName: `C${i}` })),
  );
  for (let round = 0; round < 3; round++) {
    const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
      name: `Region ${round}`,
      type: "select",
      entity: "customer",
      options: ["keep", "drop"],
    });
    const writes = people.map((p) =>
      call(h, "PATCH", `/v1/customers/${p.id}`, org, { customFields: { [field.id]: "drop" } })
    );
    const narrowed = call(h, "PATCH", `/v1/custom-fields/${field.id}`, org, { options: ["keep"] });
    await Promise.all([...writes, narrowed]);
    const held = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM customers
      WHERE organization_id = ${org} AND custom_fields ->> ${field.id} = 'drop'`;
    const options = (await ok<CustomFieldDefinition[]>(h, "GET", "/v1/custom-fields", org))
      .find((d) => d.id === field.id)!.options;
    assert(
      options.includes("drop") || held[0]!.n === 0,
      `"drop" was removed while ${held[0]!.n} customers hold it`,
    );
    const deleted = call(h, "DELETE", `/v1/custom-fields/${field.id}?force=true`, org);
    const more = people.map((p) =>
      call(h, "PATCH", `/v1/customers/${p.id}`, org, { customFields: { [field.id]: "keep" } })
    );
    const answers = await Promise.all([deleted, ...more]);
    assert(
      answers.every((a) => a.status < 500),
      JSON.stringify(answers.find((a) => a.status >= 500)),
    );
    const orphans = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM customers
      WHERE organization_id = ${org} AND custom_fields ? ${field.id}`;
    assertEquals(orphans[0]!.n, 0, "no value outlived its definition");
  }
});

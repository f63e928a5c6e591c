import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  callAs as call,
  okAs as ok,
  type ServiceHarness,
  serviceHarness,
} from "@printshop/shared/testing";
import type { CustomFieldDefinition } from "@printshop/shared/contracts/crm";
import type { Config } from "./config.ts";
import { crmService } from "./app.ts";

type H = ServiceHarness<Config>;

interface HasValues {
  id: string;
  customFields: Record<string, unknown>;
  updatedAt: string;
}

/** Each record type with values: where it is created, read and what announces its changes. */
const HOLDERS = [
  {
    entity: "customer",
    path: "/v1/customers",
    body: (i: number) => ({ companyName: `Customer ${i}` }),
    updated: "customer.updated",
  },
  {
    entity: "vendor",
    path: "/v1/vendors",
    body: (i: number) => ({ name: `Vendor ${i}`, kind: "Decorator" }),
    updated: "vendor.updated",
  },
  {
    entity: "task",
    path: "/v1/tasks",
    body: (i: number) => ({ title: `Task ${i}` }),
    updated: "task.updated",
  },
] as const;

async function payloads<T>(h: H, org: string, type: string): Promise<T[]> {
  const rows = await h.sql<{ payload: T }[]>`
    SELECT payload FROM outbox WHERE organization_id = ${org} AND type = ${type}
    ORDER BY created_at, id`;
  return rows.map((row) => row.payload);
}

for (const holder of HOLDERS) {
  Deno.test(`custom fields: a forced delete announces every ${holder.entity} it strips, as it now is, batch by batch`, async () => {
    // Seven records over batches of three: three transactions of values, then the definition's.
    await using h: H = await serviceHarness(crmService, { config: { BULK_MAX_ROWS: 3 } });
    const org = crypto.randomUUID();
    const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
      name: "Region",
      type: "text",
      entity: holder.entity,
    });
    const kept = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
      name: "Notes",
      type: "text",
      entity: holder.entity,
    });
    const holding = await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        ok<HasValues>(h, "POST", holder.path, org, {
          ...holder.body(i),
          customFields: { [field.id]: "north", [kept.id]: `kept ${i}` },
        })),
    );
    const without = await ok<HasValues>(h, "POST", holder.path, org, {
      ...holder.body(99),
      customFields: { [kept.id]: "untouched" },
    });
    if (holder.entity === "customer") {
      // The payload is the whole customer, contacts included, as its ordinary update's is.
      await ok(h, "POST", `/v1/customers/${holding[0]!.id}/contacts`, org, { firstName: "Sam" });
    }
    const before = (await payloads<HasValues>(h, org, holder.updated)).length;

    await ok(h, "DELETE", `/v1/custom-fields/${field.id}?force=true`, org);

    // Bounded: the transaction that last wrote each record (its xmin) changed at most three.
    const writers = await h.sql<{ records: number }[]>`
      SELECT count(*)::int AS records FROM ${h.sql(`${holder.entity}s`)}
      WHERE organization_id = ${org} AND id = ANY(${holding.map((r) => r.id)}::uuid[])
      GROUP BY xmin::text`;
    assertEquals(
      writers.map((w) => w.records).sort(),
      [1, 3, 3],
      "seven records stripped in transactions of at most three",
    );

    const announced = (await payloads<HasValues>(h, org, holder.updated)).slice(before);
    assertEquals(
      announced.map((p) => p.id).sort(),
      holding.map((r) => r.id).sort(),
      "one event per record stripped, none for a record without the value",
    );
    for (const payload of announced) {
      const now = await ok<HasValues>(h, "GET", `${holder.path}/${payload.id}`, org);
      assertEquals(payload, now, "the event carries the record as it is after the change");
      assert(!(field.id in now.customFields));
      assert(kept.id in now.customFields, "the other values stay");
    }
    const untouched = await ok<HasValues>(h, "GET", `${holder.path}/${without.id}`, org);
    assertEquals(untouched.updatedAt, without.updatedAt);
    const deleted = await payloads<{ id: string }>(h, org, "custom_field.deleted");
    assertEquals(deleted.map((d) => d.id), [field.id]);
  });
}

Deno.test("custom fields: a forced delete racing writes announces every value it strips, once", async () => {
  await using h: H = await serviceHarness(crmService, { config: { BULK_MAX_ROWS: 2 } });
  const org = crypto.randomUUID();
  const people = await Promise.all(
    Array.from(
      { length: 6 },
      (_, i) => ok<HasValues>(h, "POST", "/v1/customers", org, { companyName: `C${i}` }),
    ),
  );
  for (let round = 0; round < 5; round++) {
    const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
      name: `Region ${round}`,
      type: "text",
      entity: "customer",
    });
    await Promise.all(
      people.slice(0, 3).map((p) =>
        ok(h, "PATCH", `/v1/customers/${p.id}`, org, { customFields: { [field.id]: "a" } })
      ),
    );
    const before = (await payloads<HasValues>(h, org, "customer.updated")).length;
    const [deleted, deletedAgain, ...writes] = await Promise.all([
      call(h, "DELETE", `/v1/custom-fields/${field.id}?force=true`, org),
      call(h, "DELETE", `/v1/custom-fields/${field.id}?force=true`, org),
      ...people.map((p) =>
        call<HasValues>(h, "PATCH", `/v1/customers/${p.id}`, org, {
          customFields: { [field.id]: "b" },
        })
      ),
    ]);
    const answers = [deleted!, deletedAgain!, ...writes];
    assert(
      answers.every((a) => a.status < 500),
      JSON.stringify(answers.find((a) => a.status >= 500)),
    );
    assertEquals([deleted!.status, deletedAgain!.status].sort(), [200, 404], "deleted once");
    const orphans = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM customers
      WHERE organization_id = ${org} AND custom_fields ? ${field.id}`;
    assertEquals(orphans[0]!.n, 0, "no value outlived its definition");
    // Each customer's events after the race: at most a batch's strip (when it held "a"), its own
    // write's (when it was let in, which a batch leaves open) and the last strip's (the write's
    // value, removed under the definition's lock): three, in that order at the most. The last
    // event of each is the customer as it is.
    const announced = (await payloads<HasValues>(h, org, "customer.updated")).slice(before);
    for (const p of people) {
      const mine = announced.filter((e) => e.id === p.id);
      const now = await ok<HasValues>(h, "GET", `/v1/customers/${p.id}`, org);
      if (mine.length > 0) assertEquals(mine.at(-1), now, "the newest event is the customer now");
      assert(mine.length <= 3, `${mine.length} events for one customer`);
    }
  }
});

Deno.test("custom fields: a PATCH that names nothing answers the definition as it is, with no event", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Region",
    type: "text",
    entity: "customer",
  });
  const same = await ok<CustomFieldDefinition>(
    h,
    "PATCH",
    `/v1/custom-fields/${field.id}`,
    org,
    {},
  );
  assertEquals(same, field);
  assertEquals((await payloads(h, org, "custom_field.updated")).length, 0);
});

Deno.test("custom fields: a rename, an options change and a refused delete wait on no record", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Region",
    type: "select",
    entity: "customer",
    options: ["north", "south"],
  });
  const held = await ok<HasValues>(h, "POST", "/v1/customers", org, {
    companyName: "Riverside Bakery",
    customFields: { [field.id]: "north" },
  });
  // Another transaction holds a record with a value (as a long write to it would): none of
  // these writes a record, so none waits for it.
  const other = await h.sql.reserve();
  await other`BEGIN`;
  await other`SELECT 1 FROM customers WHERE id = ${held.id} FOR UPDATE`;
  const answered = Promise.all([
    call(h, "PATCH", `/v1/custom-fields/${field.id}`, org, { name: "Area" }),
    call(h, "PATCH", `/v1/custom-fields/${field.id}`, org, {
      options: ["north", "south", "east"],
    }),
    call(h, "DELETE", `/v1/custom-fields/${field.id}`, org),
  ]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waited">((resolve) => timer = setTimeout(resolve, 5_000, "waited"));
  const first = await Promise.race([answered, waited]);
  clearTimeout(timer);
  await other`ROLLBACK`;
  other.release();
  // Answered by now either way (the record is free): nothing is left running at the end.
  const answers = await answered;
  assert(first !== "waited", "answered while a record holding a value was locked elsewhere");
  assertEquals(answers.map((a) => a.status), [200, 200, 409]);
  const [now] = (await ok<CustomFieldDefinition[]>(h, "GET", "/v1/custom-fields", org))
    .filter((d) => d.id === field.id);
  assertEquals([now?.name, now?.options], ["Area", ["north", "south", "east"]]);
});

Deno.test("custom fields: a delete without force racing writes never leaves a value behind", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const people = await Promise.all(
    Array.from(
      { length: 6 },
      (_, i) => ok<HasValues>(h, "POST", "/v1/customers", org, { companyName: `C${i}` }),
    ),
  );
  for (let round = 0; round < 8; round++) {
    const field = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
      name: `Region ${round}`,
      type: "text",
      entity: "customer",
    });
    const [deleted, ...writes] = await Promise.all([
      call(h, "DELETE", `/v1/custom-fields/${field.id}`, org),
      ...people.map((p) =>
        call(h, "PATCH", `/v1/customers/${p.id}`, org, { customFields: { [field.id]: "a" } })
      ),
    ]);
    const answers = [deleted!, ...writes];
    assert(
      answers.every((a) => a.status < 500),
      JSON.stringify(answers.find((a) => a.status >= 500)),
    );
    const [{ n } = { n: 0 }] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM customers
      WHERE organization_id = ${org} AND custom_fields ? ${field.id}`;
    if (deleted!.status === 200) assertEquals(n, 0, "no value outlived its definition");
    else assertEquals([deleted!.status, n > 0], [409, true], JSON.stringify(deleted!.body));
  }
});

/**
 * Changes that race each other on a real database, many times over: whatever the interleaving,
 * each answer is one a caller could have had alone (never a 500), and the outbox holds an event
 * for exactly the changes that happened.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  type Answer,
  callAs as call,
  okAs as ok,
  type ServiceHarness,
  serviceHarness,
} from "@printshop/shared/testing";
import type { Customer, Task, Vendor } from "@printshop/shared/contracts/crm";
import type { Config } from "./config.ts";
import { crmService } from "./app.ts";

type H = ServiceHarness<Config>;

/** Tries per race: enough that each interleaving comes up, on two busy cores. */
const TRIES = 30;

/** The `….updated` events written about a record, oldest first, as their payloads. */
async function updates<T>(h: H, org: string, type: string, id: string): Promise<T[]> {
  const rows = await h.sql<{ payload: T }[]>`
    SELECT payload FROM outbox
    WHERE organization_id = ${org} AND type = ${type} AND aggregate_id = ${id}
    ORDER BY created_at, id`;
  return rows.map((row) => row.payload);
}

function noServerError(answers: readonly Answer<unknown>[]): void {
  const failed = answers.find((answer) => answer.status >= 500);
  assert(failed === undefined, `a 500: ${JSON.stringify(failed)}`);
}

/** The parents with contacts and addresses, and what their paths and events are called. */
const PARENTS = [
  {
    parent: "customer",
    create: { path: "/v1/customers", body: { companyName: "Riverside Bakery" } },
    children: { contacts: "/v1/customer-contacts", addresses: "/v1/customer-addresses" },
  },
  {
    parent: "vendor",
    create: { path: "/v1/vendors", body: { name: "Harbour Screen Co", kind: "Decorator" } },
    children: { contacts: "/v1/vendor-contacts", addresses: "/v1/vendor-addresses" },
  },
] as const;

/** A child's field a PATCH changes, by kind. */
const CHANGE = {
  contacts: { role: "Owner" },
  addresses: { postcode: "2041" },
} as const;

for (const { parent, create, children } of PARENTS) {
  /** A new contact or address of the record, and the path that names it. */
  const newChild = async (
    h: H,
    org: string,
    recordId: string,
    kind: "contacts" | "addresses",
  ): Promise<{ child: { id: string }; path: string }> => {
    const child = await ok<{ id: string }>(
      h,
      "POST",
      `${create.path}/${recordId}/${kind}`,
      org,
      {},
    );
    return { child, path: `${children[kind]}/${child.id}` };
  };

  for (const kind of ["contacts", "addresses"] as const) {
    Deno.test(`${parent} ${kind}: a PATCH racing a DELETE answers the changed row or 404, with an event only for a change`, async () => {
      await using h: H = await serviceHarness(crmService);
      const org = crypto.randomUUID();
      const record = await ok<Customer | Vendor>(h, "POST", create.path, org, create.body);
      const type = `${parent}.updated`;
      for (let i = 0; i < TRIES; i++) {
        const { child, path } = await newChild(h, org, record.id, kind);
        const before = (await updates(h, org, type, record.id)).length;
        // Alternately the empty body (answered as it is) and a change: both race the DELETE.
        const body = i % 2 === 0 ? CHANGE[kind] : {};
        const [patched, deleted] = await Promise.all([
          call<Record<string, unknown>>(h, "PATCH", path, org, body),
          call(h, "DELETE", path, org),
        ]);
        noServerError([patched, deleted]);
        assertEquals(deleted.status, 200, JSON.stringify(deleted.body));
        assert([200, 404].includes(patched.status), JSON.stringify(patched.body));
        if (patched.status === 200) {
          assertEquals(patched.body.data.id, child.id);
          for (const [field, value] of Object.entries(body)) {
            assertEquals(patched.body.data[field], value, "the row as changed");
          }
        }
        const changed = patched.status === 200 && Object.keys(body).length > 0;
        const written = (await updates(h, org, type, record.id)).length - before;
        assertEquals(written, changed ? 2 : 1, "one event per change that happened");
      }
    });
  }

  Deno.test(`${parent} contacts and addresses: concurrent deletes answer 200 once and write one event`, async () => {
    await using h: H = await serviceHarness(crmService);
    const org = crypto.randomUUID();
    const record = await ok<Customer | Vendor>(h, "POST", create.path, org, create.body);
    const type = `${parent}.updated`;
    for (let i = 0; i < TRIES; i++) {
      const kind = i % 2 === 0 ? "contacts" : "addresses";
      const { path } = await newChild(h, org, record.id, kind);
      const before = (await updates(h, org, type, record.id)).length;
      const answers = await Promise.all([1, 2, 3].map(() => call(h, "DELETE", path, org)));
      noServerError(answers);
      assertEquals(answers.map((a) => a.status).sort(), [200, 404, 404]);
      const written = (await updates(h, org, type, record.id)).length - before;
      assertEquals(written, 1, "one delete happened: one event");
    }
  });
}

Deno.test("customer contacts: a PATCH racing the customer's delete answers the changed row or the contact's 404", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  for (let i = 0; i < TRIES; i++) {
    const record = await ok<Customer>(h, "POST", "/v1/customers", org, { companyName: `C${i}` });
    const child = await ok<{ id: string }>(
      h,
      "POST",
      `/v1/customers/${record.id}/contacts`,
      org,
      {},
    );
    const [patched, deleted] = await Promise.all([
      call(h, "PATCH", `/v1/customer-contacts/${child.id}`, org, { role: "Owner" }),
      call(h, "DELETE", `/v1/customers/${record.id}`, org),
    ]);
    noServerError([patched, deleted]);
    assertEquals(deleted.status, 200);
    assert([200, 404].includes(patched.status), JSON.stringify(patched.body));
    if (patched.status === 404) {
      assert(
        String(patched.body.message).startsWith("Contact"),
        "the contact asked for is missing",
      );
    }
    const written = (await updates(h, org, "customer.updated", record.id)).length;
    assertEquals(
      written,
      patched.status === 200 ? 2 : 1,
      "the create's, and the PATCH's if it ran",
    );
  }
});

Deno.test("tasks: a PATCH naming the task's customer racing that customer's delete never deadlocks", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  // Each deadlock PostgreSQL breaks costs its deadlock_timeout (1 s): fewer tries find it.
  for (let i = 0; i < 10; i++) {
    const record = await ok<Customer>(h, "POST", "/v1/customers", org, { companyName: `C${i}` });
    const task = await ok<Task>(h, "POST", "/v1/tasks", org, {
      title: "Order blanks",
      customerId: record.id,
    });
    const [patched, deleted] = await Promise.all([
      call<Task>(h, "PATCH", `/v1/tasks/${task.id}`, org, {
        title: "Order blanks today",
        customerId: record.id,
      }),
      call(h, "DELETE", `/v1/customers/${record.id}`, org),
    ]);
    noServerError([patched, deleted]);
    assertEquals(deleted.status, 200);
    // Before the delete, the PATCH links the customer (then unlinked by the delete, with an
    // event); after it, the customer is gone (400 naming it).
    assert([200, 400].includes(patched.status), JSON.stringify(patched.body));
    const now = await ok<Task>(h, "GET", `/v1/tasks/${task.id}`, org);
    assertEquals(now.customerId, null, "the deleted customer is no task's");
  }
});

Deno.test("task checklist items: a PATCH racing the task's delete answers the changed item or the item's 404", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  for (let i = 0; i < TRIES; i++) {
    const task = await ok<Task>(h, "POST", "/v1/tasks", org, { title: `T${i}` });
    const item = await ok<{ id: string }>(h, "POST", `/v1/tasks/${task.id}/checklist`, org, {
      text: "Order blanks",
    });
    const [patched, deleted] = await Promise.all([
      call(h, "PATCH", `/v1/task-checklist-items/${item.id}`, org, { completed: true }),
      call(h, "DELETE", `/v1/tasks/${task.id}`, org),
    ]);
    noServerError([patched, deleted]);
    assertEquals(deleted.status, 200);
    assert([200, 404].includes(patched.status), JSON.stringify(patched.body));
    if (patched.status === 404) {
      assert(
        String(patched.body.message).startsWith("Checklist item"),
        `the item asked for is missing: ${patched.body.message}`,
      );
    }
    const written = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outbox
      WHERE organization_id = ${org} AND type = 'task_checklist_item.updated'
        AND aggregate_id = ${item.id}`;
    assertEquals(written[0]!.n, patched.status === 200 ? 1 : 0, "an event only for a change");
  }
});

/**
 * The CRM service's events, as the contracts declare them, are the truth about what it emits:
 * every declared name comes out of some operation, and nothing else comes out. Operations run
 * through the real gateway; what they emitted is read back from the outbox.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { declaredBy, emittedBy, startTestStack, type TestStack } from "@printshop/shared/testing";
import { connect } from "@printshop/shared/db";

type Json = Record<string, unknown>;

Deno.test("every CRM event is emitted by an operation, and nothing else is", async () => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant();
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.call(shop.apiKey, method, path, body);
    const json = await res.json() as Json;
    if (!res.ok) {
      const errors = (await stack.logs()).split("\n").filter((l) => l.includes('"error"'));
      assert.fail(`${method} ${path}: ${res.status} ${JSON.stringify(json)}\n${errors.join("\n")}`);
    }
    return json.data as Json;
  };

  // Nothing has been emitted before the first CRM operation.
  assertEquals(await emittedBy(stack, "crm"), []);

  // Custom fields: one used by a customer (deleted with force), one unused (deleted plainly).
  const courier = await send("POST", "/v1/custom-fields", {
    name: "Courier",
    type: "select",
    entity: "customer",
    options: ["StarTrack", "Aramex"],
  });
  await send("PATCH", `/v1/custom-fields/${courier.id}`, {
    options: ["StarTrack", "Aramex", "Pick-up"],
  });
  const unused = await send("POST", "/v1/custom-fields", {
    name: "Lead time",
    type: "number",
    entity: "vendor",
  });

  // Customers, their children, and the three bulk changes.
  const bakery = await send("POST", "/v1/customers", {
    companyName: "Riverside Bakery",
    customFields: { [courier.id as string]: "Aramex" },
  });
  const club = await send("POST", "/v1/customers", { companyName: "Harbour Rowing Club" });
  await send("PATCH", `/v1/customers/${bakery.id}`, { phone: "+61 2 9555 0142" });
  const contact = await send("POST", `/v1/customers/${bakery.id}/contacts`, { firstName: "Sam" });
  await send("PATCH", `/v1/customer-contacts/${contact.id}`, { role: "Owner" });
  await send("DELETE", `/v1/customer-contacts/${contact.id}`);
  const address = await send("POST", `/v1/customers/${bakery.id}/addresses`, { city: "Balmain" });
  await send("PATCH", `/v1/customer-addresses/${address.id}`, { postcode: "2041" });
  await send("DELETE", `/v1/customer-addresses/${address.id}`);
  const tiered = await send("POST", "/v1/customers/bulk/tier", {
    target: { ids: [bakery.id, club.id] },
    tier: "gold",
  });
  assertEquals(tiered.affected, 2);
  const tagged = await send("POST", "/v1/customers/bulk/tag", {
    target: { ids: [club.id] },
    add: ["rowing"],
  });
  assertEquals(tagged.affected, 1);
  const archived = await send("POST", "/v1/customers/bulk/archive", {
    target: { ids: [club.id] },
  });
  assertEquals(archived.affected, 1);
  await send("DELETE", `/v1/customers/${club.id}`);

  // The used definition goes only with force; the unused one without.
  const held = await stack.call(shop.apiKey, "DELETE", `/v1/custom-fields/${courier.id}`);
  assertEquals(held.status, 409, JSON.stringify(await held.json()));
  await send("DELETE", `/v1/custom-fields/${courier.id}?force=true`);
  await send("DELETE", `/v1/custom-fields/${unused.id}`);

  // Vendors: created, changed, children, archived and brought back.
  const vendor = await send("POST", "/v1/vendors", {
    name: "Harbour Screen Co",
    kind: "Decorator",
  });
  await send("PATCH", `/v1/vendors/${vendor.id}`, { defaultLeadTimeDays: 7 });
  const vContact = await send("POST", `/v1/vendors/${vendor.id}/contacts`, { firstName: "Lee" });
  await send("PATCH", `/v1/vendor-contacts/${vContact.id}`, { role: "Production manager" });
  await send("DELETE", `/v1/vendor-contacts/${vContact.id}`);
  const vAddress = await send("POST", `/v1/vendors/${vendor.id}/addresses`, { label: "Workshop" });
  await send("PATCH", `/v1/vendor-addresses/${vAddress.id}`, { label: "Dispatch" });
  await send("DELETE", `/v1/vendor-addresses/${vAddress.id}`);
  await send("POST", `/v1/vendors/${vendor.id}/archive`);
  await send("POST", `/v1/vendors/${vendor.id}/unarchive`);

  // Tasks and their extras.
  const task = await send("POST", "/v1/tasks", {
    title: "Order blanks",
    customerId: bakery.id,
    vendorId: vendor.id,
  });
  await send("PATCH", `/v1/tasks/${task.id}`, { status: "in_progress" });
  const first = await send("POST", `/v1/tasks/${task.id}/checklist`, { text: "Confirm sizes" });
  const second = await send("POST", `/v1/tasks/${task.id}/checklist`, { text: "Order blanks" });
  await send("PATCH", `/v1/task-checklist-items/${first.id}`, { completed: true });
  await send("PATCH", `/v1/task-checklist-items/${second.id}`, { position: 1 });
  await send("DELETE", `/v1/task-checklist-items/${second.id}`);
  const comment = await send("POST", `/v1/tasks/${task.id}/comments`, { body: "Chasing" });
  await send("PATCH", `/v1/task-comments/${comment.id}`, { body: "Chased" });
  await send("DELETE", `/v1/task-comments/${comment.id}`);
  const attachment = await send("POST", `/v1/tasks/${task.id}/attachments`, {
    fileUrl: "https://files.example.com/po.pdf",
    filename: "po.pdf",
    mimeType: "application/pdf",
    sizeBytes: 48213,
  });
  await send("DELETE", `/v1/task-attachments/${attachment.id}`);
  await send("DELETE", `/v1/tasks/${task.id}`);
  await send("DELETE", `/v1/customers/${bakery.id}`);

  assertEquals(await emittedBy(stack, "crm"), declaredBy("crm"));

  // The names are distinct types; which row each of the shared names came from is checked here.
  const sql = connect(stack.db.url, { schema: "crm", max: 1 });
  try {
    const of = async (type: string): Promise<string[]> =>
      (await sql<{ aggregate_id: string }[]>`
        SELECT aggregate_id FROM outbox WHERE type = ${type} ORDER BY aggregate_id`)
        .map((r) => r.aggregate_id);
    assertEquals(await of("customer.deleted"), [bakery.id, club.id].sort());
    assertEquals(await of("custom_field.deleted"), [courier.id, unused.id].sort());
    assertEquals(await of("vendor.archived"), [vendor.id]);
    assertEquals(await of("vendor.unarchived"), [vendor.id]);
    assertEquals(await of("task_checklist_item.deleted"), [second.id]);
    // The forced delete of a field the bakery held announced the bakery without it, before the
    // field's own event.
    const [stripped] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM outbox u, outbox d
      WHERE u.type = 'customer.updated' AND u.aggregate_id = ${bakery.id as string}
        AND NOT u.payload -> 'customFields' ? ${courier.id as string}
        AND d.type = 'custom_field.deleted' AND d.aggregate_id = ${courier.id as string}
        AND (u.created_at, u.id) < (d.created_at, d.id)`;
    assertEquals(stripped!.n, 1, "one customer.updated for the customer whose value went");
  } finally {
    await sql.end();
  }
});

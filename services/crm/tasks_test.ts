import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type {
  Customer,
  CustomFieldDefinition,
  Task,
  TaskAttachment,
  TaskChecklistItem,
  TaskComment,
  TaskExtras,
  Vendor,
} from "@printshop/shared/contracts/crm";
import type { Config } from "./config.ts";
import { crmService } from "./app.ts";

type H = ServiceHarness<Config>;
const call = callAs;
const ok = okAs;

async function task(h: H, org: string, body: Record<string, unknown> = {}): Promise<Task> {
  return await ok<Task>(h, "POST", "/v1/tasks", org, { title: "Order blanks", ...body });
}

async function item(h: H, org: string, taskId: string, text: string, position?: number) {
  return await ok<TaskChecklistItem>(h, "POST", `/v1/tasks/${taskId}/checklist`, org, {
    text,
    ...(position === undefined ? {} : { position }),
  });
}

async function extras(h: H, org: string, taskId: string): Promise<TaskExtras> {
  return await ok<TaskExtras>(h, "GET", `/v1/tasks/${taskId}/extras`, org);
}

/** The event types written for one aggregate, oldest first. */
async function eventsOf(h: H, id: string): Promise<string[]> {
  const rows = await h.sql<{ type: string }[]>`
    SELECT type FROM outbox WHERE aggregate_id = ${id} ORDER BY created_at, id`;
  return rows.map((r) => r.type);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

Deno.test("tasks: create, read, change, list and delete, completedAt following done", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const customer = await ok<Customer>(h, "POST", "/v1/customers", org, {
    companyName: "Riverside Bakery",
  });
  const vendor = await ok<Vendor>(h, "POST", "/v1/vendors", org, {
    name: "Harbour Screen Co",
    kind: "Decorator",
  });
  const quoteId = crypto.randomUUID();
  const created = await task(h, org, {
    title: "Chase the tees",
    description: "Supplier late again",
    priority: "high",
    dueDate: "2026-11-24",
    assigneeEmail: "mia@inkwellprint.com.au",
    customerId: customer.id,
    vendorId: vendor.id,
    quoteId,
  });
  assertEquals(
    [created.status, created.priority, created.dueDate, created.completedAt, created.jobId],
    ["todo", "high", "2026-11-24", null, null],
  );
  assertEquals([created.customerId, created.vendorId, created.quoteId], [
    customer.id,
    vendor.id,
    quoteId,
  ]);
  assertEquals(await ok<Task>(h, "GET", `/v1/tasks/${created.id}`, org), created);

  const done = await ok<Task>(h, "PATCH", `/v1/tasks/${created.id}`, org, { status: "done" });
  assert(done.completedAt && ISO.test(done.completedAt), "done stamps completedAt");
  const again = await ok<Task>(h, "PATCH", `/v1/tasks/${created.id}`, org, {
    status: "done",
    title: "Chased",
  });
  assertEquals(again.completedAt, done.completedAt, "done again keeps when it was finished");
  const reopened = await ok<Task>(h, "PATCH", `/v1/tasks/${created.id}`, org, {
    status: "in_progress",
  });
  assertEquals(reopened.completedAt, null);
  const bornDone = await task(h, org, { title: "Already done", status: "done" });
  assert(bornDone.completedAt !== null);

  await task(h, org, { title: "Urgent reprint", priority: "urgent", dueDate: "2026-11-20" });
  await task(h, org, { title: "Low one", priority: "low" });
  const byPriority = await ok<{ items: Task[]; totalCount: number }>(
    h,
    "GET",
    "/v1/tasks?sortField=priority&sortDirection=desc",
    org,
  );
  assertEquals(byPriority.items.map((t) => t.priority), [
    "urgent",
    "high",
    "normal",
    "low",
  ]);
  const mine = await ok<{ items: Task[]; totalCount: number }>(
    h,
    "GET",
    `/v1/tasks?customerId=${customer.id}&status=in_progress&search=supplier`,
    org,
  );
  assertEquals(mine.items.map((t) => t.id), [created.id]);
  const due = await ok<{ items: Task[] }>(h, "GET", "/v1/tasks?sortField=dueDate&limit=2", org);
  assertEquals(due.items.map((t) => t.dueDate), ["2026-11-20", "2026-11-24"]);
  assertEquals((await call(h, "GET", "/v1/tasks?status=later", org)).status, 400);

  const other = crypto.randomUUID();
  assertEquals((await call(h, "GET", `/v1/tasks/${created.id}`, other)).status, 404);
  assertEquals(
    (await call(h, "PATCH", `/v1/tasks/${created.id}`, other, { title: "x" })).status,
    404,
  );
  assertEquals((await call(h, "DELETE", `/v1/tasks/${created.id}`, other)).status, 404);
  assertEquals(
    (await ok<{ totalCount: number }>(h, "GET", "/v1/tasks", other)).totalCount,
    0,
  );

  assertEquals(await ok(h, "DELETE", `/v1/tasks/${created.id}`, org), { id: created.id });
  assertEquals((await call(h, "GET", `/v1/tasks/${created.id}`, org)).status, 404);
  assertEquals(await eventsOf(h, created.id), [
    "task.created",
    "task.updated",
    "task.updated",
    "task.updated",
    "task.deleted",
  ]);
});

Deno.test("tasks: a customer or vendor of another organisation, or none, is a 400 naming it", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const theirs = await ok<Customer>(h, "POST", "/v1/customers", other, { companyName: "Theirs" });
  const theirVendor = await ok<Vendor>(h, "POST", "/v1/vendors", other, {
    name: "Their vendor",
    kind: "Decorator",
  });
  const refused = await call(h, "POST", "/v1/tasks", org, {
    title: "Steal",
    customerId: theirs.id,
    vendorId: theirVendor.id,
  });
  assertEquals(refused.status, 400, JSON.stringify(refused.body));
  assertEquals(refused.body.details?.map((d) => d.path), ["customerId", "vendorId"]);
  const unknown = await call(h, "POST", "/v1/tasks", org, {
    title: "Ghost",
    customerId: crypto.randomUUID(),
  });
  assertEquals([unknown.status, unknown.body.details?.[0]?.path], [400, "customerId"]);
  const mine = await task(h, org);
  const patched = await call(h, "PATCH", `/v1/tasks/${mine.id}`, org, { vendorId: theirVendor.id });
  assertEquals([patched.status, patched.body.details?.[0]?.path], [400, "vendorId"]);
  assertEquals(await eventsOf(h, mine.id), ["task.created"], "nothing written by a refusal");

  // A deleted customer unlinks its tasks rather than blocking the delete.
  const customer = await ok<Customer>(h, "POST", "/v1/customers", org, { companyName: "Gone" });
  const linked = await task(h, org, { customerId: customer.id });
  await ok(h, "DELETE", `/v1/customers/${customer.id}`, org);
  assertEquals((await ok<Task>(h, "GET", `/v1/tasks/${linked.id}`, org)).customerId, null);
});

Deno.test("tasks: custom field values are checked against the organisation's task fields", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const copies = await ok<CustomFieldDefinition>(h, "POST", "/v1/custom-fields", org, {
    name: "Copies",
    type: "number",
    entity: "task",
  });
  const wrong = await call(h, "POST", "/v1/tasks", org, {
    title: "Print",
    customFields: { [copies.id]: "three" },
  });
  assertEquals(wrong.status, 400, JSON.stringify(wrong.body));
  assertEquals(wrong.body.details?.[0]?.path, `customFields.${copies.id}`);
  const created = await task(h, org, { customFields: { [copies.id]: 3 } });
  assertEquals(created.customFields, { [copies.id]: 3 });
  const patchedWrong = await call(h, "PATCH", `/v1/tasks/${created.id}`, org, {
    customFields: { [copies.id]: true },
  });
  assertEquals([patchedWrong.status, patchedWrong.body.details?.[0]?.path], [
    400,
    `customFields.${copies.id}`,
  ]);
  const cleared = await ok<Task>(h, "PATCH", `/v1/tasks/${created.id}`, org, {
    customFields: { [copies.id]: null },
  });
  assertEquals(cleared.customFields, {});
});

Deno.test("task extras: checklist by position, comments and attachments by creation, every field", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const t = await task(h, org);
  const a = await item(h, org, t.id, "Confirm sizes");
  const b = await item(h, org, t.id, "Order blanks");
  const first = await item(h, org, t.id, "Get artwork", 1);
  assertEquals([a.position, b.position, first.position], [1, 2, 1]);
  assertEquals(
    (await extras(h, org, t.id)).checklist.map((i) => [i.text, i.position]),
    [["Get artwork", 1], ["Confirm sizes", 2], ["Order blanks", 3]],
  );

  const ticked = await ok<TaskChecklistItem>(
    h,
    "PATCH",
    `/v1/task-checklist-items/${a.id}`,
    org,
    { completed: true },
  );
  assert(ticked.completed && ticked.completedAt && ISO.test(ticked.completedAt));
  const unticked = await ok<TaskChecklistItem>(
    h,
    "PATCH",
    `/v1/task-checklist-items/${a.id}`,
    org,
    { completed: false },
  );
  assertEquals([unticked.completed, unticked.completedAt], [false, null]);

  const moved = await ok<TaskChecklistItem>(
    h,
    "PATCH",
    `/v1/task-checklist-items/${b.id}`,
    org,
    { position: 1, text: "Order blanks today" },
  );
  assertEquals([moved.position, moved.text], [1, "Order blanks today"]);
  assertEquals(
    (await extras(h, org, t.id)).checklist.map((i) => [i.id, i.position]),
    [[b.id, 1], [first.id, 2], [a.id, 3]],
  );
  await ok(h, "DELETE", `/v1/task-checklist-items/${first.id}`, org);
  assertEquals(
    (await extras(h, org, t.id)).checklist.map((i) => [i.id, i.position]),
    [[b.id, 1], [a.id, 2]],
  );

  const credentialId = "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f";
  const res = await h.request("POST", `/v1/tasks/${t.id}/comments`, {
    organizationId: org,
    credentialId,
    body: { body: "Supplier says Thursday" },
  });
  assertEquals(res.status, 201);
  const c1 = (await res.json()).data as TaskComment;
  assertEquals(
    [c1.authorName, c1.authorEmail, c1.authorCredentialKind, c1.authorCredentialId, c1.editedAt],
    ["API key 0192f3aa", null, "tenant_key", credentialId, null],
  );
  const c2 = await ok<TaskComment>(h, "POST", `/v1/tasks/${t.id}/comments`, org, {
    body: "Chasing",
  });
  const byOther = await call(h, "PATCH", `/v1/task-comments/${c1.id}`, org, { body: "Not mine" });
  assertEquals(byOther.status, 403, "only the author may edit a comment");
  assertEquals(byOther.body.error, "forbidden");
  const editing = await h.request("PATCH", `/v1/task-comments/${c1.id}`, {
    organizationId: org,
    credentialId,
    body: { body: "Supplier confirmed Wednesday" },
  });
  assertEquals(editing.status, 200);
  const edited = (await editing.json()).data as TaskComment;
  assert(edited.editedAt && ISO.test(edited.editedAt), "an edit stamps editedAt");
  assertEquals([edited.body, edited.createdAt], ["Supplier confirmed Wednesday", c1.createdAt]);

  const http = await call(h, "POST", `/v1/tasks/${t.id}/attachments`, org, {
    fileUrl: "http://files.example.com/po.pdf",
    filename: "po.pdf",
    mimeType: "application/pdf",
    sizeBytes: 10,
  });
  assertEquals([http.status, http.body.details?.[0]?.path], [400, "fileUrl"]);
  const f1 = await ok<TaskAttachment>(h, "POST", `/v1/tasks/${t.id}/attachments`, org, {
    fileUrl: "https://files.example.com/po.pdf",
    filename: "po.pdf",
    mimeType: "application/pdf",
    sizeBytes: 48213,
  });
  const f2 = await ok<TaskAttachment>(h, "POST", `/v1/tasks/${t.id}/attachments`, org, {
    fileUrl: "https://files.example.com/art.png",
    filename: "art.png",
    mimeType: "image/png",
    sizeBytes: 5_000_000_000,
  });
  assertEquals([f1.uploadedByEmail, f1.uploadedByName.startsWith("API key "), f2.sizeBytes], [
    null,
    true,
    5_000_000_000,
  ]);

  const all = await extras(h, org, t.id);
  assertEquals(Object.keys(all), ["checklist", "comments", "attachments"]);
  const fields = (o: object): string[] => Object.keys(o).sort();
  for (const i of all.checklist) {
    for (const f of ["id", "taskId", "text", "completed", "position", "completedAt"]) {
      assert(fields(i).includes(f), `checklist item has ${f}`);
    }
  }
  for (const f of ["id", "taskId", "authorEmail", "body", "authorName", "createdAt", "editedAt"]) {
    assert(fields(all.comments[0]!).includes(f), `comment has ${f}`);
  }
  for (
    const f of [
      "id",
      "taskId",
      "fileUrl",
      "filename",
      "mimeType",
      "uploadedByEmail",
      "uploadedByName",
      "sizeBytes",
      "createdAt",
    ]
  ) {
    assert(fields(all.attachments[0]!).includes(f), `attachment has ${f}`);
  }
  assertEquals(all.comments.map((c) => c.id), [c1.id, c2.id]);
  assertEquals(all.comments[0], edited);
  assertEquals(all.attachments, [f1, f2]);

  await ok(h, "DELETE", `/v1/task-comments/${c2.id}`, org);
  await ok(h, "DELETE", `/v1/task-attachments/${f1.id}`, org);
  const after = await extras(h, org, t.id);
  assertEquals([after.comments.map((c) => c.id), after.attachments.map((f) => f.id)], [
    [c1.id],
    [f2.id],
  ]);

  assertEquals(await eventsOf(h, a.id), [
    "task_checklist_item.created",
    "task_checklist_item.updated", // moved down by "Get artwork"
    "task_checklist_item.updated", // ticked
    "task_checklist_item.updated", // unticked
    "task_checklist_item.updated", // moved down by "Order blanks"
    "task_checklist_item.updated", // moved up when "Get artwork" went
  ]);
  assertEquals(await eventsOf(h, first.id), [
    "task_checklist_item.created",
    "task_checklist_item.updated",
    "task_checklist_item.deleted",
  ]);
  assertEquals(await eventsOf(h, c1.id), ["task_comment.created", "task_comment.updated"]);
  assertEquals(await eventsOf(h, c2.id), ["task_comment.created", "task_comment.deleted"]);
  assertEquals(await eventsOf(h, f1.id), ["task_attachment.created", "task_attachment.deleted"]);
});

Deno.test("task extras: another organisation's task and extras are 404 and stay as they were", async () => {
  await using h: H = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const t = await task(h, org);
  const i = await item(h, org, t.id, "Confirm sizes");
  const c = await ok<TaskComment>(h, "POST", `/v1/tasks/${t.id}/comments`, org, { body: "Hi" });
  const f = await ok<TaskAttachment>(h, "POST", `/v1/tasks/${t.id}/attachments`, org, {
    fileUrl: "https://files.example.com/po.pdf",
    filename: "po.pdf",
    mimeType: "application/pdf",
    sizeBytes: 1,
  });
  const before = await extras(h, org, t.id);
  const attempts: [string, string, unknown?][] = [
    ["GET", `/v1/tasks/${t.id}/extras`],
    ["POST", `/v1/tasks/${t.id}/checklist`, { text: "x" }],
    ["POST", `/v1/tasks/${t.id}/comments`, { body: "x" }],
    ["POST", `/v1/tasks/${t.id}/attachments`, {
      fileUrl: "https://x.example/a",
      filename: "a",
      mimeType: "text/plain",
      sizeBytes: 1,
    }],
    ["PATCH", `/v1/task-checklist-items/${i.id}`, { completed: true }],
    ["DELETE", `/v1/task-checklist-items/${i.id}`],
    ["PATCH", `/v1/task-comments/${c.id}`, { body: "x" }],
    ["DELETE", `/v1/task-comments/${c.id}`],
    ["DELETE", `/v1/task-attachments/${f.id}`],
  ];
  for (const [method, path, body] of attempts) {
    const answer = await call(h, method, path, other, body);
    assertEquals(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
  }
  assertEquals(await extras(h, org, t.id), before);
  // Deleting the task takes its extras with it.
  await ok(h, "DELETE", `/v1/tasks/${t.id}`, org);
  assertEquals((await call(h, "DELETE", `/v1/task-comments/${c.id}`, org)).status, 404);
});

Deno.test("deleting a customer unlinks its tasks, each with an event and a new updatedAt", async () => {
  await using h = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const customer = await ok<{ id: string }>(h, "POST", "/v1/customers", org, {
    companyName: "Gone",
  });
  const task = await ok<Task>(h, "POST", "/v1/tasks", org, {
    title: "Call them",
    customerId: customer.id,
  });
  await ok(h, "DELETE", `/v1/customers/${customer.id}`, org);
  const after = await ok<Task>(h, "GET", `/v1/tasks/${task.id}`, org);
  assertEquals(after.customerId, null);
  assert(after.updatedAt > task.updatedAt, "updatedAt tells a sync client");
  const events = await h.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outbox
    WHERE organization_id = ${org} AND type = 'task.updated' AND aggregate_id = ${task.id}`;
  assertEquals(events[0]!.n, 1);
});

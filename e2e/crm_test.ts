/**
 * The CRM service through the real gateway, as a new integrator would check it, with two
 * organisations: customers re-tiered in bulk by a filter resolved when the request runs,
 * a vendor archived and brought back, a task's checklist, comments and attachments read back
 * field by field, custom field values checked against their definition, a quote found by its
 * customer's name, and every CRM resource kept from the other organisation.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { eventually } from "./_webhooks.ts";

type Json = Record<string, unknown>;
interface Page {
  items: Json[];
  totalCount: number;
}
interface BulkResult {
  requested: number;
  affected: number;
  refused: number;
  failed: number;
  outcomes: { id: string; status: string; reason?: string }[];
}
interface LogEntry {
  id: string;
  type: string;
  aggregateId: string | null;
  data: Json;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The fields spec 2.9 gives each of a task's extras, in the spec's order. */
const CHECKLIST_FIELDS = ["id", "taskId", "text", "completed", "position", "completedAt"];
const COMMENT_FIELDS = [
  "id",
  "taskId",
  "authorEmail",
  "body",
  "authorName",
  "createdAt",
  "editedAt",
];
const ATTACHMENT_FIELDS = [
  "id",
  "taskId",
  "fileUrl",
  "filename",
  "mimeType",
  "uploadedByEmail",
  "uploadedByName",
  "sizeBytes",
  "createdAt",
];

/** The spec's fields of `row`, in the order the response gives them: all of them, in order. */
const specFields = (row: Json, fields: readonly string[]): unknown[] => {
  assertEquals(
    Object.keys(row).filter((k) => fields.includes(k)),
    [...fields],
    `every spec field, in order: ${JSON.stringify(row)}`,
  );
  return fields.map((f) => row[f]);
};

Deno.test("the CRM through the gateway", async (t) => {
  await using stack: TestStack = await startTestStack();
  const a = await stack.tenant(ALL_SCOPES, "Shop A");
  const b = await stack.tenant(ALL_SCOPES, "Shop B");

  const call = async (
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Json }> => {
    const res = await stack.call(key, method, path, body);
    return { status: res.status, json: await res.json() as Json };
  };
  /** The envelope's data, after checking the status. */
  const send = async <T = Json>(
    status: number,
    method: string,
    path: string,
    body?: unknown,
    key = a.apiKey,
  ): Promise<T> => {
    const answer = await call(key, method, path, body);
    assertEquals(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.json)}`);
    return answer.json.data as T;
  };
  /** The error envelope, after checking the status. */
  const refuse = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
    key = a.apiKey,
  ): Promise<{ message: string; details?: { path: string; message: string }[] }> => {
    const answer = await call(key, method, path, body);
    assertEquals(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.json)}`);
    assertEquals(answer.json.status, false);
    return answer.json as { message: string; details?: { path: string; message: string }[] };
  };
  const pathsOf = (error: { details?: { path: string }[] }): string[] =>
    (error.details ?? []).map((d) => d.path);

  /** The organisation's whole event log, oldest first (after an event id when given). */
  const eventLog = async (key: string, after?: string): Promise<LogEntry[]> => {
    const all: LogEntry[] = [];
    for (let cursor = after ? `&after=${after}` : "";;) {
      const page = await send<{ items: LogEntry[]; hasMore: boolean; lastEventId: string }>(
        200,
        "GET",
        `/v1/event-log?limit=200${cursor}`,
        undefined,
        key,
      );
      all.push(...page.items);
      if (!page.hasMore) break;
      cursor = `&after=${page.lastEventId}`;
    }
    return all;
  };
  /** The log up to and including the first event of `type` about `id`, once it is there. */
  const logUntil = (key: string, type: string, id: string, after?: string) =>
    eventually(`${type} of ${id} in the event log`, async () => {
      const log = await eventLog(key, after);
      const at = log.findIndex((e) => e.type === type && e.aggregateId === id);
      return at < 0 ? undefined : log.slice(0, at + 1);
    }, 15_000);

  // Shared by the steps: a customer, a vendor, a task and a custom field of A's, for B to try.
  let customerOfA: Json = {};
  let vendorOfA: Json = {};
  let taskOfA: Json = {};
  let extrasOfA: Json = {};
  let fieldOfA: Json = {};

  await t.step("customers re-tiered by a filter resolved when the bulk request runs", async () => {
    const customer = (companyName: string, tier: string, key = a.apiKey) =>
      send(201, "POST", "/v1/customers", { companyName, tier }, key);
    const first = await customer("Alpine Sports Club", "silver");
    const second = await customer("Bayside Bakery", "silver");
    const excluded = await customer("Coastal Cafe", "silver");
    const archived = await customer("Defunct Diner", "silver");
    assertEquals(
      (await send(200, "PATCH", `/v1/customers/${archived.id}`, { isArchived: true })).isArchived,
      true,
    );
    const bronze = await customer("Eastside Gym", "bronze");
    // B's silver customer matches the same filter in its own organisation: never A's to change.
    const theirs = await customer("Foreshore Rowing", "silver", b.apiKey);
    customerOfA = first;

    // The target is chosen now; one more matching customer arrives before it is sent.
    const target = {
      filters: [{ field: "tier", op: "eq", value: "silver" }],
      excludeIds: [excluded.id],
    };
    const late = await customer("Lakeside Yoga", "silver");
    const excludedBefore = await send(200, "GET", `/v1/customers/${excluded.id}`);
    const archivedBefore = await send(200, "GET", `/v1/customers/${archived.id}`);
    const theirsBefore = await send(200, "GET", `/v1/customers/${theirs.id}`, undefined, b.apiKey);
    // Where the log stands before the bulk change: after the late customer's creation.
    const upToLate = await logUntil(a.apiKey, "customer.created", late.id as string);
    const mark = upToLate.at(-1)!.id;

    const result = await send<BulkResult>(200, "POST", "/v1/customers/bulk/tier", {
      target,
      tier: "gold",
    });
    assertEquals(
      [result.requested, result.affected, result.refused, result.failed],
      [4, 3, 1, 0],
      JSON.stringify(result),
    );
    assertEquals(
      result.outcomes.map((o) => [o.id, o.status]),
      [
        [first.id, "ok"],
        [second.id, "ok"],
        [archived.id, "refused"],
        [late.id, "ok"],
      ],
      "the late customer is picked, the excluded one and B's are not",
    );
    const reason = result.outcomes[2]!.reason;
    assert(typeof reason === "string" && /archived/i.test(reason), `a reason: ${reason}`);
    assert(result.outcomes.every((o) => o.status !== "ok" || o.reason === undefined));

    for (const c of [first, second, late]) {
      assertEquals((await send(200, "GET", `/v1/customers/${c.id}`)).tier, "gold");
    }
    // Left alone: not changed at all, not even its updatedAt.
    assertEquals(await send(200, "GET", `/v1/customers/${excluded.id}`), excludedBefore);
    assertEquals(await send(200, "GET", `/v1/customers/${archived.id}`), archivedBefore);
    assertEquals((await send(200, "GET", `/v1/customers/${bronze.id}`)).tier, "bronze");
    assertEquals(
      await send(200, "GET", `/v1/customers/${theirs.id}`, undefined, b.apiKey),
      theirsBefore,
    );
    const golds = await send<Page>(200, "GET", "/v1/customers?tier=gold");
    assertEquals(
      golds.items.map((c) => c.id).sort(),
      [first.id, second.id, late.id].sort() as string[],
    );

    // One customer.updated per changed customer, none for the excluded or archived one: a
    // change made after the bulk one marks where its events end.
    await send(200, "PATCH", `/v1/customers/${bronze.id}`, { notes: "marker" });
    const since = await logUntil(a.apiKey, "customer.updated", bronze.id as string, mark);
    const bulkEvents = since.slice(0, -1);
    assertEquals(
      bulkEvents.map((e) => [e.type, e.aggregateId]).sort(),
      [first, second, late].map((c) => ["customer.updated", c.id]).sort(),
      JSON.stringify(bulkEvents.map((e) => [e.type, e.aggregateId])),
    );
    assert(bulkEvents.every((e) => e.data.tier === "gold"), "each event carries the new tier");

    // B's ids in an ids target: failed, not_found; B's rows as they were.
    const byIds = await send<BulkResult>(200, "POST", "/v1/customers/bulk/tier", {
      target: { ids: [bronze.id, theirs.id] },
      tier: "silver",
    });
    assertEquals(byIds, {
      requested: 2,
      affected: 1,
      refused: 0,
      failed: 1,
      outcomes: [
        { id: bronze.id, status: "ok" },
        { id: theirs.id, status: "failed", reason: "not_found" },
      ],
    });
    assertEquals(
      await send(200, "GET", `/v1/customers/${theirs.id}`, undefined, b.apiKey),
      theirsBefore,
    );
    assertEquals((await send(200, "GET", `/v1/customers/${bronze.id}`)).tier, "silver");

    // Both branches at once: a validation error, nothing changed.
    const both = await refuse(400, "POST", "/v1/customers/bulk/tier", {
      target: { ids: [bronze.id], filters: [] },
      tier: "wholesale",
    });
    assert(pathsOf(both).some((p) => p.startsWith("target")), JSON.stringify(both));
    assertEquals((await send(200, "GET", `/v1/customers/${bronze.id}`)).tier, "silver");
    const neither = await refuse(400, "POST", "/v1/customers/bulk/tier", {
      target: {},
      tier: "wholesale",
    });
    assert(pathsOf(neither).some((p) => p.startsWith("target")), JSON.stringify(neither));
    assertEquals((await send<Page>(200, "GET", "/v1/customers?tier=wholesale")).totalCount, 0);
  });

  await t.step("a vendor archived, archived again, and brought back", async () => {
    const vendor = await send(201, "POST", "/v1/vendors", {
      name: "Harbour Screen Co",
      kind: "Decorator",
      serviceTypes: ["ScreenPrint"],
    });
    const other = await send(201, "POST", "/v1/vendors", {
      name: "AS Colour",
      kind: "InventorySupplier",
    });
    vendorOfA = vendor;
    assertEquals([vendor.isActive, vendor.archivedAt], [true, null]);
    const listed = async (query = ""): Promise<string[]> =>
      (await send<Page>(200, "GET", `/v1/vendors${query}`)).items.map((v) => v.id as string);
    assertEquals((await listed()).sort(), [vendor.id, other.id].sort() as string[]);

    const archived = await send(200, "POST", `/v1/vendors/${vendor.id}/archive`);
    assertEquals([archived.id, archived.isActive], [vendor.id, false]);
    assert(typeof archived.archivedAt === "string" && ISO.test(archived.archivedAt));
    assertEquals(await send(200, "GET", `/v1/vendors/${vendor.id}`), archived);
    assertEquals(await listed(), [other.id], "an archived vendor leaves the default list");
    // The contract's `isActive=false` lists archived vendors.
    assertEquals(await listed("?isActive=false"), [vendor.id]);
    assertEquals(await listed("?isActive=true"), [other.id]);
    // B sees none of A's vendors, archived or not.
    assertEquals(
      (await send<Page>(200, "GET", "/v1/vendors?isActive=false", undefined, b.apiKey)).items,
      [],
    );

    const again = await send(200, "POST", `/v1/vendors/${vendor.id}/archive`);
    assertEquals(again, archived, "archiving an archived vendor answers it as it is");

    const back = await send(200, "POST", `/v1/vendors/${vendor.id}/unarchive`);
    assertEquals(
      [back.id, back.name, back.kind, back.serviceTypes, back.isActive, back.archivedAt],
      [vendor.id, "Harbour Screen Co", "Decorator", ["ScreenPrint"], true, null],
    );
    assertEquals(Object.keys(back).sort(), Object.keys(vendor).sort(), "the vendor record");
    assertEquals(await send(200, "GET", `/v1/vendors/${vendor.id}`), back);
    assertEquals((await listed()).sort(), [vendor.id, other.id].sort() as string[]);
    assertEquals(await listed("?isActive=false"), []);
    vendorOfA = back;
  });

  await t.step("a task's checklist, comments and attachments, every spec field", async () => {
    const me = await send<{ credential: { kind: string; id: string } }>(200, "GET", "/v1/me");
    const author = `API key ${me.credential.id.slice(0, 8)}`;
    const task = await send(201, "POST", "/v1/tasks", {
      title: "Order 120 black tees",
      customerId: customerOfA.id,
      vendorId: vendorOfA.id,
    });
    taskOfA = task;
    const sizes = await send(201, "POST", `/v1/tasks/${task.id}/checklist`, {
      text: "Confirm sizes with the customer",
    });
    assertEquals([sizes.position, sizes.completed, sizes.completedAt], [1, false, null]);
    // Put first: the checklist is read back by position, not by creation.
    const artwork = await send(201, "POST", `/v1/tasks/${task.id}/checklist`, {
      text: "Get the artwork signed off",
      position: 1,
    });
    const tickedFrom = Date.now();
    const ticked = await send(200, "PATCH", `/v1/task-checklist-items/${sizes.id}`, {
      completed: true,
    });
    const tickedTo = Date.now();
    assertEquals([ticked.completed, ticked.position], [true, 2]);
    assert(typeof ticked.completedAt === "string" && ISO.test(ticked.completedAt));
    const tickedAt = Date.parse(ticked.completedAt);
    assert(
      tickedAt >= tickedFrom - 2_000 && tickedAt <= tickedTo + 2_000,
      `completedAt ${ticked.completedAt} is when it was ticked`,
    );

    const comment = await send(201, "POST", `/v1/tasks/${task.id}/comments`, {
      body: "Supplier says Thursday",
    });
    assertEquals([comment.editedAt, comment.authorName], [null, author]);
    const edited = await send(200, "PATCH", `/v1/task-comments/${comment.id}`, {
      body: "Supplier confirmed Wednesday",
    });
    assert(typeof edited.editedAt === "string" && ISO.test(edited.editedAt), "edit stamps it");
    assert(Date.parse(edited.editedAt) >= Date.parse(comment.createdAt as string));
    const later = await send(201, "POST", `/v1/tasks/${task.id}/comments`, { body: "Chasing" });

    const attachment = await send(201, "POST", `/v1/tasks/${task.id}/attachments`, {
      fileUrl: "https://files.example.com/po/PO-2291.pdf",
      filename: "PO-2291.pdf",
      mimeType: "application/pdf",
      sizeBytes: 48213,
    });

    const extras = await send<{ checklist: Json[]; comments: Json[]; attachments: Json[] }>(
      200,
      "GET",
      `/v1/tasks/${task.id}/extras`,
    );
    extrasOfA = extras;
    assertEquals(Object.keys(extras), ["checklist", "comments", "attachments"]);
    assertEquals(extras.checklist.map((row) => specFields(row, CHECKLIST_FIELDS)), [
      [artwork.id, task.id, "Get the artwork signed off", false, 1, null],
      [sizes.id, task.id, "Confirm sizes with the customer", true, 2, ticked.completedAt],
    ]);
    assertEquals(extras.comments.map((row) => specFields(row, COMMENT_FIELDS)), [
      [
        comment.id,
        task.id,
        null,
        "Supplier confirmed Wednesday",
        author,
        comment.createdAt,
        edited.editedAt,
      ],
      [later.id, task.id, null, "Chasing", author, later.createdAt, null],
    ]);
    assertEquals(extras.attachments.map((row) => specFields(row, ATTACHMENT_FIELDS)), [
      [
        attachment.id,
        task.id,
        "https://files.example.com/po/PO-2291.pdf",
        "PO-2291.pdf",
        "application/pdf",
        null,
        author,
        48213,
        attachment.createdAt,
      ],
    ]);
    assert(ISO.test(attachment.createdAt as string) && ISO.test(comment.createdAt as string));
  });

  await t.step("a custom field's definition checks a customer's value", async () => {
    const courier = await send(201, "POST", "/v1/custom-fields", {
      name: "Preferred courier",
      type: "select",
      entity: "customer",
      options: ["StarTrack", "Aramex", "Pick-up"],
    });
    fieldOfA = courier;
    const path = `customFields.${courier.id}`;
    const bad = await refuse(400, "POST", "/v1/customers", {
      companyName: "Gumtree Garage",
      customFields: { [courier.id as string]: "Carrier pigeon" },
    });
    assertEquals(pathsOf(bad), [path], JSON.stringify(bad));
    assertEquals(
      (await send<Page>(200, "GET", "/v1/customers?search=Gumtree")).totalCount,
      0,
      "the refused customer was not created",
    );
    const created = await send(201, "POST", "/v1/customers", {
      companyName: "Gumtree Garage",
      customFields: { [courier.id as string]: "Aramex" },
    });
    assertEquals(created.customFields, { [courier.id as string]: "Aramex" });
    const badPatch = await refuse(400, "PATCH", `/v1/customers/${created.id}`, {
      customFields: { [courier.id as string]: "DHL" },
    });
    assertEquals(pathsOf(badPatch), [path], JSON.stringify(badPatch));
    const good = await send(200, "PATCH", `/v1/customers/${created.id}`, {
      customFields: { [courier.id as string]: "Pick-up" },
    });
    assertEquals(good.customFields, { [courier.id as string]: "Pick-up" });
    const read = await send(200, "GET", `/v1/customers/${created.id}`);
    assertEquals(read.customFields, { [courier.id as string]: "Pick-up" });
    assertEquals(read, good);
  });

  await t.step("a quote found by its customer's name", async () => {
    // The quotes service learns customers from the CRM's `customer.*` events on the bus
    // (services/quotes/consumer.ts), so the name arrives a moment after the quote: wait for it.
    const word = `Quokka${crypto.randomUUID().slice(0, 8)}`;
    const companyName = `Bondi ${word} Surf Club`;
    const client = await send(201, "POST", "/v1/customers", { companyName });
    const quote = await send(201, "POST", "/v1/quotes", {
      reference: "Club hoodies",
      clientId: client.id,
    });
    await send(201, "POST", "/v1/quotes", { reference: "Hoodies, no client" });
    const search = word.slice(2).toLowerCase();
    const found = await eventually(
      `GET /v1/quotes?search=${search} to find the quote with clientName "${companyName}"`,
      async () => {
        const page = await send<Page>(200, "GET", `/v1/quotes?search=${search}`);
        return page.items.some((q) => q.id === quote.id && q.clientName === companyName)
          ? page
          : undefined;
      },
      15_000,
      async () => JSON.stringify(await send(200, "GET", `/v1/quotes/${quote.id}`)),
    );
    assertEquals(found.items.map((q) => [q.id, q.clientId, q.clientName]), [
      [quote.id, client.id, companyName],
    ]);
    // B's quotes do not find A's customer.
    assertEquals(
      (await send<Page>(200, "GET", `/v1/quotes?search=${search}`, undefined, b.apiKey))
        .totalCount,
      0,
    );
  });

  await t.step("organisation B cannot see or touch A's CRM rows", async () => {
    assert(customerOfA.id && vendorOfA.id && taskOfA.id && fieldOfA.id, "earlier steps ran");
    const extras = extrasOfA as { checklist: Json[]; comments: Json[]; attachments: Json[] };
    const customerBefore = await send(200, "GET", `/v1/customers/${customerOfA.id}`);
    const vendorBefore = await send(200, "GET", `/v1/vendors/${vendorOfA.id}`);
    const taskBefore = await send(200, "GET", `/v1/tasks/${taskOfA.id}`);
    const fieldsBefore = await send(200, "GET", "/v1/custom-fields");
    const item = extras.checklist[0]!;
    const comment = extras.comments[0]!;
    const file = extras.attachments[0]!;
    const attachment = {
      fileUrl: "https://files.example.com/x.pdf",
      filename: "x.pdf",
      mimeType: "application/pdf",
      sizeBytes: 1,
    };
    const attempts: [string, string, unknown?][] = [
      ["GET", `/v1/customers/${customerOfA.id}`],
      ["PATCH", `/v1/customers/${customerOfA.id}`, { tier: "wholesale" }],
      ["POST", `/v1/customers/${customerOfA.id}/contacts`, { firstName: "Mallory" }],
      ["POST", `/v1/customers/${customerOfA.id}/addresses`, { city: "Elsewhere" }],
      ["DELETE", `/v1/customers/${customerOfA.id}`],
      ["GET", `/v1/vendors/${vendorOfA.id}`],
      ["PATCH", `/v1/vendors/${vendorOfA.id}`, { name: "Mine now" }],
      ["POST", `/v1/vendors/${vendorOfA.id}/archive`],
      ["POST", `/v1/vendors/${vendorOfA.id}/unarchive`],
      ["POST", `/v1/vendors/${vendorOfA.id}/contacts`, { firstName: "Mallory" }],
      ["GET", `/v1/tasks/${taskOfA.id}`],
      ["PATCH", `/v1/tasks/${taskOfA.id}`, { status: "done" }],
      ["GET", `/v1/tasks/${taskOfA.id}/extras`],
      ["POST", `/v1/tasks/${taskOfA.id}/checklist`, { text: "x" }],
      ["POST", `/v1/tasks/${taskOfA.id}/comments`, { body: "x" }],
      ["POST", `/v1/tasks/${taskOfA.id}/attachments`, attachment],
      ["PATCH", `/v1/task-checklist-items/${item.id}`, { completed: true }],
      ["DELETE", `/v1/task-checklist-items/${item.id}`],
      ["PATCH", `/v1/task-comments/${comment.id}`, { body: "x" }],
      ["DELETE", `/v1/task-comments/${comment.id}`],
      ["DELETE", `/v1/task-attachments/${file.id}`],
      ["DELETE", `/v1/tasks/${taskOfA.id}`],
      ["PATCH", `/v1/custom-fields/${fieldOfA.id}`, { name: "Mine now" }],
      ["DELETE", `/v1/custom-fields/${fieldOfA.id}?force=true`],
    ];
    for (const [method, path, body] of attempts) {
      await refuse(404, method, path, body, b.apiKey);
    }

    // B's lists hold none of A's rows.
    const theirs = await send<Page>(200, "GET", "/v1/customers?limit=100", undefined, b.apiKey);
    assertEquals(theirs.items.map((c) => c.companyName), ["Foreshore Rowing"]);
    assertEquals((await send<Page>(200, "GET", "/v1/tasks", undefined, b.apiKey)).totalCount, 0);
    assertEquals(await send(200, "GET", "/v1/custom-fields", undefined, b.apiKey), []);

    // A task of B's naming A's customer or vendor: 400 naming the field, nothing written.
    const stolen = await refuse(400, "POST", "/v1/tasks", {
      title: "Call their client",
      customerId: customerOfA.id,
    }, b.apiKey);
    assertEquals(pathsOf(stolen), ["customerId"], JSON.stringify(stolen));
    const stolenVendor = await refuse(400, "POST", "/v1/tasks", {
      title: "Use their vendor",
      vendorId: vendorOfA.id,
    }, b.apiKey);
    assertEquals(pathsOf(stolenVendor), ["vendorId"], JSON.stringify(stolenVendor));
    const own = await send(201, "POST", "/v1/tasks", { title: "B's own" }, b.apiKey);
    const relinked = await refuse(400, "PATCH", `/v1/tasks/${own.id}`, {
      customerId: customerOfA.id,
    }, b.apiKey);
    assertEquals(pathsOf(relinked), ["customerId"], JSON.stringify(relinked));
    assertEquals(
      (await send<Page>(200, "GET", "/v1/tasks", undefined, b.apiKey)).items.map((x) => x.id),
      [own.id],
    );
    // A's custom field is not B's to fill in.
    const borrowed = await refuse(400, "POST", "/v1/customers", {
      companyName: "Borrowed field",
      customFields: { [fieldOfA.id as string]: "Aramex" },
    }, b.apiKey);
    assertEquals(pathsOf(borrowed), [`customFields.${fieldOfA.id}`], JSON.stringify(borrowed));

    // A's rows are as they were.
    assertEquals(await send(200, "GET", `/v1/customers/${customerOfA.id}`), customerBefore);
    assertEquals(await send(200, "GET", `/v1/vendors/${vendorOfA.id}`), vendorBefore);
    assertEquals(await send(200, "GET", `/v1/tasks/${taskOfA.id}`), taskBefore);
    assertEquals(await send(200, "GET", `/v1/tasks/${taskOfA.id}/extras`), extrasOfA);
    assertEquals(await send(200, "GET", "/v1/custom-fields"), fieldsBefore);
  });
});

import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type CreateTaskBody,
  ListTasksQuery,
  type Task,
  TASK_PRIORITIES,
  type TASK_SORT_FIELDS,
  TASK_STATUSES,
  type UpdateTaskBody,
} from "@printshop/shared/contracts/crm";
import { changedColumns, type FieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { col, defineTable, enumRank, type RowOf } from "@printshop/shared/db/table";
import { type ErrorDetail, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { type Completion, taskCompletion } from "../domain/tasks.ts";
import { announce } from "./answers.ts";
import { checkedCustomFields, type ValueHolder } from "./custom_fields.ts";

/** The tasks table, declared once (shared/db/table.ts); its extras: task_extras.ts. */
export const TASKS = defineTable({
  name: "tasks",
  tenant: true,
  noun: "Task",
  // quote_id and job_id name rows of other services, kept as given.
  references: { customer_id: "customers", vendor_id: "vendors" },
  columns: {
    id: col.uuid(),
    title: col.text().filterable(),
    description: col.text().nullable().filterable(),
    // Status and priority sort by meaning (todo < … < cancelled, low < … < urgent).
    status: col.enum(TASK_STATUSES).filterable({
      sortColumn: enumRank(TASK_STATUSES, "status"),
      sortType: "integer",
    }),
    priority: col.enum(TASK_PRIORITIES).filterable({
      sortColumn: enumRank(TASK_PRIORITIES, "priority"),
      sortType: "integer",
    }),
    dueDate: col.date().nullable().filterable(),
    assigneeEmail: col.text().nullable().filterable(),
    quoteId: col.uuid().nullable().filterable(),
    customerId: col.uuid().nullable().filterable(),
    vendorId: col.uuid().nullable().filterable(),
    jobId: col.uuid().nullable().filterable(),
    customFields: col.json<Record<string, unknown>>(),
    completedAt: col.timestamp().nullable().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type TaskRow = RowOf<typeof TASKS>;

/** Tasks as holders of custom field values: a task is its row (its extras are not in it). */
export const TASK_VALUES: ValueHolder<TaskRow, "task.updated"> = {
  table: TASKS,
  updated: "task.updated",
  answer: (_tx, rows) => Promise.resolve(rows.map(TASKS.read)),
};

export async function findTask(sql: Queryable, organizationId: string, id: string): Promise<Task> {
  const row = await TASKS.get(sql, organizationId, id);
  return TASKS.read(row);
}

/**
 * Clears a customer's link from the tasks that name it, as part of deleting the customer, with
 * a `task.updated` for each: without it the foreign key's SET NULL would change tasks that no
 * event and no `updatedAt` tells of.
 */
export async function unlinkCustomer(
  tx: Queryable,
  organizationId: string,
  customerId: string,
): Promise<void> {
  const rows = await tx<TaskRow[]>`
    UPDATE tasks SET customer_id = NULL, updated_at = now()
    WHERE organization_id = ${organizationId} AND customer_id = ${customerId}
    RETURNING ${tx.unsafe(TASKS.select)}`;
  await announce(tx, organizationId, "task.updated", rows.map(TASKS.read));
}

/** The CRM records a task may link to, checked in the caller's organisation. */
const LINKS = [
  { field: "customerId", table: "customers", what: "Customer" },
  { field: "vendorId", table: "vendors", what: "Vendor" },
] as const;

/**
 * Refuses (400, naming each field) a customer or vendor id the organisation does not have: an
 * unknown id and another organisation's look the same. The rows found are key-share locked, so
 * they cannot be deleted before this transaction writes the link.
 */
async function assertLinks(
  tx: Queryable,
  organizationId: string,
  input: Pick<CreateTaskBody, "customerId" | "vendorId">,
): Promise<void> {
  const problems: ErrorDetail[] = [];
  for (const { field, table, what } of LINKS) {
    const id = input[field];
    if (id === undefined || id === null) continue;
    const [row] = await tx`
      SELECT 1 FROM ${tx(table)} WHERE organization_id = ${organizationId} AND id = ${id}
      FOR KEY SHARE`;
    if (!row) {
      problems.push({
        path: field,
        message: `${what} "${id}" was not found in this organisation; give one of its ids or ` +
          `null`,
      });
    }
  }
  if (problems.length > 0) throw invalid("task", problems);
}

/** The SQL value of a `completed_at` column after a write, by what the write does to it. */
export const COMPLETED_AT: Record<Completion, string> = {
  stamp: "now()",
  clear: "NULL",
  keep: "completed_at",
};

export async function createTask(
  sql: Sql,
  organizationId: string,
  input: CreateTaskBody,
): Promise<Task> {
  return await transaction(sql, async (tx) => {
    await assertLinks(tx, organizationId, input);
    const values = await checkedCustomFields(tx, organizationId, "task", {}, input.customFields);
    const status = input.status ?? "todo";
    const [row] = await tx<TaskRow[]>`
      INSERT INTO tasks ${
      tx({
        id: uuidv7(),
        organization_id: organizationId,
        ...changedColumns(input, ["customFields"]),
        custom_fields: jsonParam(tx, values ?? {}),
      })
    }
      RETURNING ${tx.unsafe(TASKS.select)}`;
    let created = row!;
    if (taskCompletion(null, status) === "stamp") {
      const [stamped] = await tx<TaskRow[]>`
        UPDATE tasks SET completed_at = created_at WHERE id = ${created.id}
        RETURNING ${tx.unsafe(TASKS.select)}`;
      created = stamped!;
    }
    const task = TASKS.read(created);
    await announce(tx, organizationId, "task.created", [task]);
    return task;
  });
}

export async function updateTask(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateTaskBody,
): Promise<Task> {
  return await transaction(sql, async (tx) => {
    // A missing task is its 404 before any link's 400.
    await TASKS.get(tx, organizationId, id);
    // The links' locks before the task's: deleting a customer locks it and then the tasks that
    // name it, so the other order deadlocked with it (a 500) when a PATCH named the customer.
    await assertLinks(tx, organizationId, input);
    const current = await TASKS.lock(tx, organizationId, id);
    const changes = changedColumns(input, ["customFields"]);
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "task",
      current.custom_fields,
      input.customFields,
    );
    if (values !== undefined) changes.custom_fields = jsonParam(tx, values);
    if (Object.keys(changes).length === 0) return TASKS.read(current);
    const completion = taskCompletion(current.status, input.status ?? current.status);
    const [row] = await tx<TaskRow[]>`
      UPDATE tasks SET ${tx(changes)},
        completed_at = ${tx.unsafe(COMPLETED_AT[completion])},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(TASKS.select)}`;
    const task = TASKS.read(row!);
    await announce(tx, organizationId, "task.updated", [task]);
    return task;
  });
}

/** Deletes a task; its checklist, comments and attachments go with it (one event, the task's). */
export async function deleteTask(sql: Sql, organizationId: string, id: string): Promise<Task> {
  return await transaction(sql, async (tx) => {
    const task = TASKS.read(await TASKS.lock(tx, organizationId, id));
    await tx`DELETE FROM tasks WHERE id = ${id}`;
    await announce(tx, organizationId, "task.deleted", [task]);
    return task;
  });
}

/** The tasks' fields: what `filters` may name, and what `sortField` orders on. */
export const TASK_FIELDS = TASKS.fields() satisfies FieldTable<typeof TASK_SORT_FIELDS[number]>;

const TASK_LIST = listSpec(ListTasksQuery, {
  from: "tasks",
  select: TASKS.select,
  fields: TASK_FIELDS,
  search: "tasks_matching",
  order: { field: "createdAt", direction: "asc" },
});

export async function listTasks(
  sql: Sql,
  organizationId: string,
  query: ListTasksQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<Task>> {
  return await offsetPage(
    sql,
    TASK_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: TaskRow[]) => rows.map(TASKS.read),
  );
}

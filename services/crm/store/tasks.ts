import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type CreateTaskBody,
  ListTasksQuery,
  type Task,
  TASK_PRIORITIES,
  type TASK_SORT_FIELDS,
  TASK_STATUSES,
  type TaskStatus,
  type UpdateTaskBody,
} from "@printshop/shared/contracts/crm";
import { changedColumns, type FieldTable, fieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage } from "@printshop/shared/db/pages";
import { type ErrorDetail, invalid, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { type Completion, taskCompletion } from "../domain/tasks.ts";
import { checkedCustomFields } from "./custom_fields.ts";

const TASK_COLUMNS = "id, title, description, status, priority, due_date, assignee_email, " +
  "quote_id, customer_id, vendor_id, job_id, custom_fields, completed_at, created_at, updated_at";

export interface TaskRow {
  id: string;
  title: string;
  description: string | null;
  status: TaskStatus;
  priority: Task["priority"];
  due_date: string | null;
  assignee_email: string | null;
  quote_id: string | null;
  customer_id: string | null;
  vendor_id: string | null;
  job_id: string | null;
  custom_fields: Record<string, unknown>;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    dueDate: row.due_date,
    assigneeEmail: row.assignee_email,
    quoteId: row.quote_id,
    customerId: row.customer_id,
    vendorId: row.vendor_id,
    jobId: row.job_id,
    customFields: row.custom_fields,
    completedAt: row.completed_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The task (locked for the rest of the transaction), or 404 when the organisation has none. */
export async function lockTask(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<TaskRow> {
  const [row] = await tx<TaskRow[]>`
    SELECT ${tx.unsafe(TASK_COLUMNS)} FROM tasks
    WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
  if (!row) throw notFound("Task", id);
  return row;
}

export async function findTask(sql: Queryable, organizationId: string, id: string): Promise<Task> {
  const [row] = await sql<TaskRow[]>`
    SELECT ${sql.unsafe(TASK_COLUMNS)} FROM tasks
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!row) throw notFound("Task", id);
  return toTask(row);
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
    RETURNING ${tx.unsafe(TASK_COLUMNS)}`;
  await writeEvents(
    tx,
    rows.map((row) => ({
      organizationId,
      type: "task.updated" as const,
      aggregateId: row.id,
      payload: toTask(row),
    })),
  );
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
      RETURNING ${tx.unsafe(TASK_COLUMNS)}`;
    let created = row!;
    if (taskCompletion(null, status) === "stamp") {
      const [stamped] = await tx<TaskRow[]>`
        UPDATE tasks SET completed_at = created_at WHERE id = ${created.id}
        RETURNING ${tx.unsafe(TASK_COLUMNS)}`;
      created = stamped!;
    }
    const task = toTask(created);
    await writeEvent(tx, {
      organizationId,
      type: "task.created",
      aggregateId: task.id,
      payload: task,
    });
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
    const current = await lockTask(tx, organizationId, id);
    await assertLinks(tx, organizationId, input);
    const changes = changedColumns(input, ["customFields"]);
    const values = await checkedCustomFields(
      tx,
      organizationId,
      "task",
      current.custom_fields,
      input.customFields,
    );
    if (values !== undefined) changes.custom_fields = jsonParam(tx, values);
    if (Object.keys(changes).length === 0) return toTask(current);
    const completion = taskCompletion(current.status, input.status ?? current.status);
    const [row] = await tx<TaskRow[]>`
      UPDATE tasks SET ${tx(changes)},
        completed_at = ${tx.unsafe(COMPLETED_AT[completion])},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(TASK_COLUMNS)}`;
    const task = toTask(row!);
    await writeEvent(tx, { organizationId, type: "task.updated", aggregateId: id, payload: task });
    return task;
  });
}

/** Deletes a task; its checklist, comments and attachments go with it (one event, the task's). */
export async function deleteTask(sql: Sql, organizationId: string, id: string): Promise<Task> {
  return await transaction(sql, async (tx) => {
    const task = toTask(await lockTask(tx, organizationId, id));
    await tx`DELETE FROM tasks WHERE id = ${id}`;
    await writeEvent(tx, { organizationId, type: "task.deleted", aggregateId: id, payload: task });
    return task;
  });
}

/** A rank in a declared order, so an enum sorts by meaning rather than by spelling. */
function rankOf(column: string, values: readonly string[]): string {
  return `array_position(ARRAY[${values.map((v) => `'${v}'`).join(", ")}]::text[], ${column})`;
}

/** The tasks' fields: what `filters` may name, and what `sortField` orders on. */
export const TASK_FIELDS = fieldTable({
  title: { type: "text" },
  description: { type: "text", nullable: true },
  status: {
    type: "enum",
    values: TASK_STATUSES,
    sortColumn: rankOf("status", TASK_STATUSES),
    sortType: "integer",
  },
  priority: {
    type: "enum",
    values: TASK_PRIORITIES,
    sortColumn: rankOf("priority", TASK_PRIORITIES),
    sortType: "integer",
  },
  dueDate: { type: "date", nullable: true },
  assigneeEmail: { type: "text", nullable: true },
  quoteId: { type: "uuid", nullable: true },
  customerId: { type: "uuid", nullable: true },
  vendorId: { type: "uuid", nullable: true },
  jobId: { type: "uuid", nullable: true },
  completedAt: { type: "datetime", nullable: true },
  createdAt: { type: "datetime" },
  updatedAt: { type: "datetime" },
}) satisfies FieldTable<typeof TASK_SORT_FIELDS[number]>;

const TASK_LIST = listSpec(ListTasksQuery, {
  from: "tasks",
  select: TASK_COLUMNS,
  fields: TASK_FIELDS,
  search: ["title", "description"],
  order: { field: "createdAt", direction: "asc" },
});

export async function listTasks(
  sql: Sql,
  organizationId: string,
  query: ListTasksQuery,
  pageSizeMax: number,
): Promise<{ items: Task[]; totalCount: number }> {
  return await offsetPage(
    sql,
    TASK_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: TaskRow[]) => rows.map(toTask),
  );
}

/**
 * A task's checklist, comments and attachments. Each is addressed by its own id; every change
 * locks the task first, so changes to one task's extras run one after another (a checklist's
 * 1..n order and the per-task ceilings hold under concurrent calls).
 */
import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import {
  type CreateTaskAttachmentBody,
  type CreateTaskChecklistItemBody,
  type CreateTaskCommentBody,
  TASK_EXTRAS_MAX,
  type TaskAttachment,
  type TaskChecklistItem,
  type TaskComment,
  type TaskExtras,
  type UpdateTaskChecklistItemBody,
  type UpdateTaskCommentBody,
} from "@printshop/shared/contracts/crm";
import { SortSequence } from "@printshop/shared/db/sort-order";
import { ApiError, conflict, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { CredentialKind, InternalContext } from "@printshop/shared/internal-context";
import { placeAt, type RowRef } from "@printshop/shared/ordering";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { credentialName, itemCompletion } from "../domain/tasks.ts";
import { COMPLETED_AT, lockTask } from "./tasks.ts";

/** Who is calling: the author of a comment, the uploader of an attachment. */
export interface Caller {
  credentialKind: CredentialKind;
  credentialId: string;
}

// ---------------------------------------------------------------------------------------------
// Rows

const ITEM_COLUMNS = "id, task_id, text, completed, sort_order, completed_at, created_at, " +
  "updated_at";

interface ItemRow {
  id: string;
  task_id: string;
  text: string;
  completed: boolean;
  sort_order: number;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toItem = (row: ItemRow): TaskChecklistItem => ({
  id: row.id,
  taskId: row.task_id,
  text: row.text,
  completed: row.completed,
  position: row.sort_order,
  completedAt: row.completed_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const COMMENT_COLUMNS = "id, task_id, body, author_credential_kind, author_credential_id, " +
  "created_at, edited_at";

interface CommentRow {
  id: string;
  task_id: string;
  body: string;
  author_credential_kind: CredentialKind;
  author_credential_id: string;
  created_at: Date;
  edited_at: Date | null;
}

const toComment = (row: CommentRow): TaskComment => ({
  id: row.id,
  taskId: row.task_id,
  authorEmail: null,
  body: row.body,
  authorName: credentialName(row.author_credential_kind, row.author_credential_id),
  authorCredentialKind: row.author_credential_kind,
  authorCredentialId: row.author_credential_id,
  createdAt: row.created_at.toISOString(),
  editedAt: row.edited_at?.toISOString() ?? null,
});

const ATTACHMENT_COLUMNS = "id, task_id, file_url, filename, mime_type, size_bytes, " +
  "uploaded_by_credential_kind, uploaded_by_credential_id, created_at";

interface AttachmentRow {
  id: string;
  task_id: string;
  file_url: string;
  filename: string;
  mime_type: string;
  /** bigint: postgres.js reads it as a string. */
  size_bytes: string;
  uploaded_by_credential_kind: CredentialKind;
  uploaded_by_credential_id: string;
  created_at: Date;
}

const toAttachment = (row: AttachmentRow): TaskAttachment => ({
  id: row.id,
  taskId: row.task_id,
  fileUrl: row.file_url,
  filename: row.filename,
  mimeType: row.mime_type,
  uploadedByEmail: null,
  uploadedByName: credentialName(row.uploaded_by_credential_kind, row.uploaded_by_credential_id),
  uploadedByCredentialKind: row.uploaded_by_credential_kind,
  uploadedByCredentialId: row.uploaded_by_credential_id,
  sizeBytes: Number(row.size_bytes),
  createdAt: row.created_at.toISOString(),
});

// ---------------------------------------------------------------------------------------------
// Reading

export async function findExtras(
  sql: Queryable,
  organizationId: string,
  taskId: string,
): Promise<TaskExtras> {
  const [task] = await sql`
    SELECT id FROM tasks WHERE organization_id = ${organizationId} AND id = ${taskId}`;
  if (!task) throw notFound("Task", taskId);
  const [items, comments, attachments] = await Promise.all([
    sql<ItemRow[]>`
      SELECT ${sql.unsafe(ITEM_COLUMNS)} FROM task_checklist_items
      WHERE task_id = ${taskId} ORDER BY sort_order, id`,
    sql<CommentRow[]>`
      SELECT ${sql.unsafe(COMMENT_COLUMNS)} FROM task_comments
      WHERE task_id = ${taskId} ORDER BY created_at, id`,
    sql<AttachmentRow[]>`
      SELECT ${sql.unsafe(ATTACHMENT_COLUMNS)} FROM task_attachments
      WHERE task_id = ${taskId} ORDER BY created_at, id`,
  ]);
  return {
    checklist: items.map(toItem),
    comments: comments.map(toComment),
    attachments: attachments.map(toAttachment),
  };
}

/** Refuses (409) one more extra of a kind once the task holds the most it may. */
async function assertRoom(
  tx: Queryable,
  taskId: string,
  table: "task_checklist_items" | "task_comments" | "task_attachments",
  what: string,
): Promise<void> {
  const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM ${tx(table)} WHERE task_id = ${taskId}`;
  if (count >= TASK_EXTRAS_MAX) {
    throw conflict(
      `Task "${taskId}" has ${count} ${what} already, the most a task holds; remove one first`,
    );
  }
}

/**
 * Locks the task an extra belongs to, then the extra itself, both in the caller's organisation:
 * 404 when either is missing (another organisation's extra looks exactly like a missing one).
 */
async function lockExtra<Row extends object>(
  tx: TransactionSql,
  organizationId: string,
  table: "task_checklist_items" | "task_comments" | "task_attachments",
  columns: string,
  what: string,
  id: string,
): Promise<Row> {
  const [owner] = await tx<{ task_id: string }[]>`
    SELECT task_id FROM ${tx(table)} WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!owner) throw notFound(what, id);
  await lockTask(tx, organizationId, owner.task_id);
  // Read again under the task's lock: it may have gone meanwhile.
  const [row] = await tx<Row[]>`
    SELECT ${tx.unsafe(columns)} FROM ${tx(table)}
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!row) throw notFound(what, id);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Checklist

const CHECKLIST = new SortSequence("task_id", [
  { kind: "item", table: "task_checklist_items" },
]);

/**
 * Writes the checklist in `ordered`, 1..n, and a `task_checklist_item.updated` for every item
 * but `except` whose position changed (`before` is the order as it was).
 */
async function renumber(
  tx: TransactionSql,
  organizationId: string,
  taskId: string,
  before: readonly RowRef<"item">[],
  ordered: readonly RowRef<"item">[],
  except: string,
): Promise<void> {
  await CHECKLIST.write(tx, taskId, ordered);
  const was = new Map(before.map((row, index) => [row.id, index]));
  const moved = ordered
    .filter((row, index) => row.id !== except && was.has(row.id) && was.get(row.id) !== index)
    .map((row) => row.id);
  if (moved.length === 0) return;
  const rows = await tx<ItemRow[]>`
    UPDATE task_checklist_items SET updated_at = now() WHERE id = ANY(${moved}::uuid[])
    RETURNING ${tx.unsafe(ITEM_COLUMNS)}`;
  const byId = new Map(rows.map((row) => [row.id, toItem(row)]));
  await writeEvents(
    tx,
    moved.map((id) => ({
      organizationId,
      type: "task_checklist_item.updated" as const,
      aggregateId: id,
      payload: byId.get(id)!,
    })),
  );
}

async function readItem(tx: Queryable, id: string): Promise<TaskChecklistItem> {
  const [row] = await tx<ItemRow[]>`
    SELECT ${tx.unsafe(ITEM_COLUMNS)} FROM task_checklist_items WHERE id = ${id}`;
  return toItem(row!);
}

export async function createChecklistItem(
  sql: Sql,
  organizationId: string,
  taskId: string,
  input: CreateTaskChecklistItemBody,
): Promise<TaskChecklistItem> {
  return await transaction(sql, async (tx) => {
    await lockTask(tx, organizationId, taskId);
    await assertRoom(tx, taskId, "task_checklist_items", "checklist items");
    const before = await CHECKLIST.read(tx, taskId);
    const id = uuidv7();
    await tx`
      INSERT INTO task_checklist_items (id, organization_id, task_id, text, sort_order)
      VALUES (${id}, ${organizationId}, ${taskId}, ${input.text}, ${before.length + 1})`;
    const row = { id, kind: "item" } as const;
    await renumber(tx, organizationId, taskId, before, placeAt(before, row, input.position), id);
    const item = await readItem(tx, id);
    await writeEvent(tx, {
      organizationId,
      type: "task_checklist_item.created",
      aggregateId: id,
      payload: item,
    });
    return item;
  });
}

export async function updateChecklistItem(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateTaskChecklistItemBody,
): Promise<TaskChecklistItem> {
  return await transaction(sql, async (tx) => {
    const current = await lockExtra<ItemRow>(
      tx,
      organizationId,
      "task_checklist_items",
      ITEM_COLUMNS,
      "Checklist item",
      id,
    );
    const completion = itemCompletion(current.completed, input.completed ?? current.completed);
    const changed = (input.text !== undefined && input.text !== current.text) ||
      completion !== "keep";
    let moved = false;
    if (input.position !== undefined) {
      const before = await CHECKLIST.read(tx, current.task_id);
      const row = { id, kind: "item" } as const;
      const ordered = placeAt(before, row, input.position);
      moved = ordered.findIndex((r) => r.id === id) !== before.findIndex((r) => r.id === id);
      if (moved) await renumber(tx, organizationId, current.task_id, before, ordered, id);
    }
    if (!changed && !moved) return toItem(current);
    const [row] = await tx<ItemRow[]>`
      UPDATE task_checklist_items SET
        text = ${input.text ?? current.text},
        completed = ${input.completed ?? current.completed},
        completed_at = ${tx.unsafe(COMPLETED_AT[completion])},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(ITEM_COLUMNS)}`;
    const item = toItem(row!);
    await writeEvent(tx, {
      organizationId,
      type: "task_checklist_item.updated",
      aggregateId: id,
      payload: item,
    });
    return item;
  });
}

export async function deleteChecklistItem(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<{ id: string; taskId: string }> {
  return await transaction(sql, async (tx) => {
    const current = await lockExtra<ItemRow>(
      tx,
      organizationId,
      "task_checklist_items",
      ITEM_COLUMNS,
      "Checklist item",
      id,
    );
    const before = await CHECKLIST.read(tx, current.task_id);
    await tx`DELETE FROM task_checklist_items WHERE id = ${id}`;
    const ordered = before.filter((row) => row.id !== id);
    await renumber(tx, organizationId, current.task_id, before, ordered, id);
    const deleted = { id, taskId: current.task_id };
    await writeEvent(tx, {
      organizationId,
      type: "task_checklist_item.deleted",
      aggregateId: id,
      payload: deleted,
    });
    return deleted;
  });
}

// ---------------------------------------------------------------------------------------------
// Comments

export async function createComment(
  sql: Sql,
  organizationId: string,
  taskId: string,
  input: CreateTaskCommentBody,
  caller: Caller,
): Promise<TaskComment> {
  return await transaction(sql, async (tx) => {
    await lockTask(tx, organizationId, taskId);
    await assertRoom(tx, taskId, "task_comments", "comments");
    const [row] = await tx<CommentRow[]>`
      INSERT INTO task_comments (id, organization_id, task_id, body, author_credential_kind,
                                 author_credential_id)
      VALUES (${uuidv7()}, ${organizationId}, ${taskId}, ${input.body}, ${caller.credentialKind},
              ${caller.credentialId})
      RETURNING ${tx.unsafe(COMMENT_COLUMNS)}`;
    const comment = toComment(row!);
    await writeEvent(tx, {
      organizationId,
      type: "task_comment.created",
      aggregateId: comment.id,
      payload: comment,
    });
    return comment;
  });
}

/** A new body stamps `editedAt`; the same body again changes nothing. */
export async function updateComment(
  sql: Sql,
  caller: InternalContext,
  id: string,
  input: UpdateTaskCommentBody,
): Promise<TaskComment> {
  const organizationId = caller.organizationId;
  return await transaction(sql, async (tx) => {
    const current = await lockExtra<CommentRow>(
      tx,
      organizationId,
      "task_comments",
      COMMENT_COLUMNS,
      "Comment",
      id,
    );
    // A comment keeps its author's words: another credential editing it would speak for them.
    if (
      current.author_credential_kind !== caller.credentialKind ||
      current.author_credential_id !== caller.credentialId
    ) {
      throw new ApiError(
        "forbidden",
        `Comment "${id}" was written by another credential; only its author may edit it`,
      );
    }
    if (current.body === input.body) return toComment(current);
    const [row] = await tx<CommentRow[]>`
      UPDATE task_comments SET body = ${input.body}, edited_at = now() WHERE id = ${id}
      RETURNING ${tx.unsafe(COMMENT_COLUMNS)}`;
    const comment = toComment(row!);
    await writeEvent(tx, {
      organizationId,
      type: "task_comment.updated",
      aggregateId: id,
      payload: comment,
    });
    return comment;
  });
}

// ---------------------------------------------------------------------------------------------
// Attachments

export async function createAttachment(
  sql: Sql,
  organizationId: string,
  taskId: string,
  input: CreateTaskAttachmentBody,
  caller: Caller,
): Promise<TaskAttachment> {
  return await transaction(sql, async (tx) => {
    await lockTask(tx, organizationId, taskId);
    await assertRoom(tx, taskId, "task_attachments", "attachments");
    const [row] = await tx<AttachmentRow[]>`
      INSERT INTO task_attachments (id, organization_id, task_id, file_url, filename, mime_type,
                                    size_bytes, uploaded_by_credential_kind,
                                    uploaded_by_credential_id)
      VALUES (${uuidv7()}, ${organizationId}, ${taskId}, ${input.fileUrl}, ${input.filename},
              ${input.mimeType}, ${input.sizeBytes}, ${caller.credentialKind},
              ${caller.credentialId})
      RETURNING ${tx.unsafe(ATTACHMENT_COLUMNS)}`;
    const attachment = toAttachment(row!);
    await writeEvent(tx, {
      organizationId,
      type: "task_attachment.created",
      aggregateId: attachment.id,
      payload: attachment,
    });
    return attachment;
  });
}

/** The extras a delete removes without renumbering anything, by what their events call them. */
const PLAIN_EXTRAS = {
  comment: {
    table: "task_comments",
    columns: COMMENT_COLUMNS,
    what: "Comment",
    event: "task_comment.deleted",
  },
  attachment: {
    table: "task_attachments",
    columns: ATTACHMENT_COLUMNS,
    what: "Attachment",
    event: "task_attachment.deleted",
  },
} as const;

/** Removes a comment or an attachment, with its `*.deleted` event. */
export async function deleteExtra(
  sql: Sql,
  organizationId: string,
  kind: keyof typeof PLAIN_EXTRAS,
  id: string,
): Promise<{ id: string; taskId: string }> {
  const { table, columns, what, event } = PLAIN_EXTRAS[kind];
  return await transaction(sql, async (tx) => {
    const current = await lockExtra<{ task_id: string }>(
      tx,
      organizationId,
      table,
      columns,
      what,
      id,
    );
    await tx`DELETE FROM ${tx(table)} WHERE id = ${id}`;
    const deleted = { id, taskId: current.task_id };
    await writeEvent(tx, { organizationId, type: event, aggregateId: id, payload: deleted });
    return deleted;
  });
}

/**
 * A task's checklist, comments and attachments (their tables, and the lock every change to one
 * takes first: task_extra_rows.ts).
 */
import {
  type Queryable,
  read,
  type Sql,
  transaction,
  type TransactionSql,
} from "@printshop/shared/db";
import type {
  CreateTaskAttachmentBody,
  CreateTaskChecklistItemBody,
  CreateTaskCommentBody,
  TaskAttachment,
  TaskChecklistItem,
  TaskComment,
  TaskExtras,
  UpdateTaskChecklistItemBody,
  UpdateTaskCommentBody,
} from "@printshop/shared/contracts/crm";
import { SortSequence } from "@printshop/shared/db/sort-order";
import type { RowOf } from "@printshop/shared/db/table";
import { ApiError, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller, InternalContext } from "@printshop/shared/internal-context";
import { placeAt, type RowRef } from "@printshop/shared/ordering";
import { itemCompletion } from "../domain/tasks.ts";
import { announce } from "./answers.ts";
import {
  assertRoom,
  ATTACHMENTS,
  CHECKLIST_ITEMS,
  type CommentRow,
  COMMENTS,
  type ItemRow,
  lockExtra,
  toAttachment,
  toComment,
} from "./task_extra_rows.ts";
import { COMPLETED_AT, TASKS } from "./tasks.ts";

// ---------------------------------------------------------------------------------------------
// Reading

export async function findExtras(
  sql: Queryable,
  organizationId: string,
  taskId: string,
): Promise<TaskExtras> {
  // One read for the organisation, the task and its three lists on one connection: straight on
  // the pool, the policies would show none of them.
  const [items, comments, attachments] = await read(sql, async (q) => {
    if (!await TASKS.find(q, organizationId, taskId)) throw notFound(TASKS.noun, taskId);
    return await Promise.all([
      q<ItemRow[]>`
        SELECT ${q.unsafe(CHECKLIST_ITEMS.select)} FROM task_checklist_items
        WHERE organization_id = ${organizationId} AND task_id = ${taskId}
        ORDER BY sort_order, id`,
      q<CommentRow[]>`
        SELECT ${q.unsafe(COMMENTS.select)} FROM task_comments
        WHERE organization_id = ${organizationId} AND task_id = ${taskId}
        ORDER BY created_at, id`,
      q<RowOf<typeof ATTACHMENTS>[]>`
        SELECT ${q.unsafe(ATTACHMENTS.select)} FROM task_attachments
        WHERE organization_id = ${organizationId} AND task_id = ${taskId}
        ORDER BY created_at, id`,
    ]);
  });
  return {
    checklist: items.map(CHECKLIST_ITEMS.read),
    comments: comments.map(toComment),
    attachments: attachments.map(toAttachment),
  };
}

// ---------------------------------------------------------------------------------------------
// Checklist

const CHECKLIST = new SortSequence("task_id", [
  { kind: "item", table: CHECKLIST_ITEMS.name },
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
    RETURNING ${tx.unsafe(CHECKLIST_ITEMS.select)}`;
  const byId = new Map(rows.map((row) => [row.id, CHECKLIST_ITEMS.read(row)]));
  const items = moved.map((id) => byId.get(id)!);
  await announce(tx, organizationId, "task_checklist_item.updated", items);
}

export async function createChecklistItem(
  sql: Sql,
  organizationId: string,
  taskId: string,
  input: CreateTaskChecklistItemBody,
): Promise<TaskChecklistItem> {
  return await transaction(sql, async (tx) => {
    await TASKS.lock(tx, organizationId, taskId);
    await assertRoom(tx, taskId, CHECKLIST_ITEMS, "checklist items");
    const before = await CHECKLIST.read(tx, taskId);
    const id = uuidv7();
    await tx`
      INSERT INTO task_checklist_items (id, organization_id, task_id, text, sort_order)
      VALUES (${id}, ${organizationId}, ${taskId}, ${input.text}, ${before.length + 1})`;
    const row = { id, kind: "item" } as const;
    await renumber(tx, organizationId, taskId, before, placeAt(before, row, input.position), id);
    const item = CHECKLIST_ITEMS.read((await CHECKLIST_ITEMS.find(tx, organizationId, id))!);
    await announce(tx, organizationId, "task_checklist_item.created", [item]);
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
    const current = await lockExtra(tx, organizationId, CHECKLIST_ITEMS, id);
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
    if (!changed && !moved) return CHECKLIST_ITEMS.read(current);
    const [row] = await tx<ItemRow[]>`
      UPDATE task_checklist_items SET
        text = ${input.text ?? current.text},
        completed = ${input.completed ?? current.completed},
        completed_at = ${tx.unsafe(COMPLETED_AT[completion])},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(CHECKLIST_ITEMS.select)}`;
    const item = CHECKLIST_ITEMS.read(row!);
    await announce(tx, organizationId, "task_checklist_item.updated", [item]);
    return item;
  });
}

export async function deleteChecklistItem(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<{ id: string; taskId: string }> {
  return await transaction(sql, async (tx) => {
    const current = await lockExtra(tx, organizationId, CHECKLIST_ITEMS, id);
    const before = await CHECKLIST.read(tx, current.task_id);
    await tx`DELETE FROM task_checklist_items WHERE id = ${id}`;
    const ordered = before.filter((row) => row.id !== id);
    await renumber(tx, organizationId, current.task_id, before, ordered, id);
    const deleted = { id, taskId: current.task_id };
    await announce(tx, organizationId, "task_checklist_item.deleted", [deleted]);
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
    await TASKS.lock(tx, organizationId, taskId);
    await assertRoom(tx, taskId, COMMENTS, "comments");
    const [row] = await tx<CommentRow[]>`
      INSERT INTO task_comments (id, organization_id, task_id, body, author_credential_kind,
                                 author_credential_id)
      VALUES (${uuidv7()}, ${organizationId}, ${taskId}, ${input.body}, ${caller.credentialKind},
              ${caller.credentialId})
      RETURNING ${tx.unsafe(COMMENTS.select)}`;
    const comment = toComment(row!);
    await announce(tx, organizationId, "task_comment.created", [comment]);
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
    const current = await lockExtra(tx, organizationId, COMMENTS, id);
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
      RETURNING ${tx.unsafe(COMMENTS.select)}`;
    const comment = toComment(row!);
    await announce(tx, organizationId, "task_comment.updated", [comment]);
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
    await TASKS.lock(tx, organizationId, taskId);
    await assertRoom(tx, taskId, ATTACHMENTS, "attachments");
    const [row] = await tx<RowOf<typeof ATTACHMENTS>[]>`
      INSERT INTO task_attachments (id, organization_id, task_id, file_url, filename, mime_type,
                                    size_bytes, uploaded_by_credential_kind,
                                    uploaded_by_credential_id)
      VALUES (${uuidv7()}, ${organizationId}, ${taskId}, ${input.fileUrl}, ${input.filename},
              ${input.mimeType}, ${input.sizeBytes}, ${caller.credentialKind},
              ${caller.credentialId})
      RETURNING ${tx.unsafe(ATTACHMENTS.select)}`;
    const attachment = toAttachment(row!);
    await announce(tx, organizationId, "task_attachment.created", [attachment]);
    return attachment;
  });
}

/** The extras a delete removes without renumbering anything, by what their events call them. */
const PLAIN_EXTRAS = {
  comment: { table: COMMENTS, event: "task_comment.deleted" },
  attachment: { table: ATTACHMENTS, event: "task_attachment.deleted" },
} as const;

/** Removes a comment or an attachment, with its `*.deleted` event. */
export async function deleteExtra(
  sql: Sql,
  organizationId: string,
  kind: keyof typeof PLAIN_EXTRAS,
  id: string,
): Promise<{ id: string; taskId: string }> {
  const { table, event } = PLAIN_EXTRAS[kind];
  return await transaction(sql, async (tx) => {
    const current = await lockExtra<{ task_id: string }>(tx, organizationId, table, id);
    await tx`DELETE FROM ${tx(table.name)} WHERE id = ${id}`;
    const deleted = { id, taskId: current.task_id };
    await announce(tx, organizationId, event, [deleted]);
    return deleted;
  });
}

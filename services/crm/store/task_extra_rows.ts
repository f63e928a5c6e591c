/**
 * The tables of a task's extras, declared once (shared/db/table.ts), and what every change to an
 * extra does first. Each extra is addressed by its own id; every change locks the task first, so
 * changes to one task's extras run one after another (a checklist's 1..n order and the per-task
 * ceilings hold under concurrent calls).
 */
import type { Queryable, TransactionSql } from "@printshop/shared/db";
import { CREDENTIAL_KINDS } from "@printshop/shared/contracts";
import {
  TASK_EXTRAS_MAX,
  type TaskAttachment,
  type TaskComment,
} from "@printshop/shared/contracts/crm";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { conflict } from "@printshop/shared/http";
import { credentialName } from "../domain/tasks.ts";

const TASK_REFERENCE = { task_id: "tasks" } as const;

export const CHECKLIST_ITEMS = defineTable({
  name: "task_checklist_items",
  tenant: true,
  noun: "Checklist item",
  references: TASK_REFERENCE,
  columns: {
    id: col.uuid(),
    taskId: col.uuid(),
    text: col.text(),
    completed: col.boolean(),
    // 1..n within the task, kept by a SortSequence.
    position: col.integer().named("sort_order"),
    completedAt: col.timestamp().nullable(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

export const COMMENTS = defineTable({
  name: "task_comments",
  tenant: true,
  noun: "Comment",
  references: TASK_REFERENCE,
  columns: {
    id: col.uuid(),
    taskId: col.uuid(),
    // A service knows a credential, not a person: no email, and a name that says which one.
    authorEmail: col.computed<null>(),
    body: col.text(),
    authorName: col.computed<string>(),
    authorCredentialKind: col.enum(CREDENTIAL_KINDS),
    authorCredentialId: col.text(),
    createdAt: col.timestamp(),
    editedAt: col.timestamp().nullable(),
  },
});

export const ATTACHMENTS = defineTable({
  name: "task_attachments",
  tenant: true,
  noun: "Attachment",
  references: TASK_REFERENCE,
  columns: {
    id: col.uuid(),
    taskId: col.uuid(),
    fileUrl: col.text(),
    filename: col.text(),
    mimeType: col.text(),
    uploadedByEmail: col.computed<null>(),
    uploadedByName: col.computed<string>(),
    uploadedByCredentialKind: col.enum(CREDENTIAL_KINDS),
    uploadedByCredentialId: col.text(),
    sizeBytes: col.bigint(),
    createdAt: col.timestamp(),
  },
});

export type ItemRow = RowOf<typeof CHECKLIST_ITEMS>;
export type CommentRow = RowOf<typeof COMMENTS>;

export function toComment(row: CommentRow): TaskComment {
  return COMMENTS.read(row, {
    authorEmail: null,
    authorName: credentialName(row.author_credential_kind, row.author_credential_id),
  });
}

export function toAttachment(row: RowOf<typeof ATTACHMENTS>): TaskAttachment {
  return ATTACHMENTS.read(row, {
    uploadedByEmail: null,
    uploadedByName: credentialName(row.uploaded_by_credential_kind, row.uploaded_by_credential_id),
  });
}

/** Refuses (409) one more extra of a kind once the task holds the most it may. */
export async function assertRoom(
  tx: Queryable,
  taskId: string,
  table: { readonly name: string },
  what: string,
): Promise<void> {
  const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM ${tx(table.name)} WHERE task_id = ${taskId}`;
  if (count >= TASK_EXTRAS_MAX) {
    throw conflict(
      `Task "${taskId}" has ${count} ${what} already, the most a task holds; remove one first`,
    );
  }
}

/** What an extra's table gives its lock. */
interface ExtraTable<Row> {
  get(tx: Queryable, organizationId: string, id: string): Promise<Row>;
}

/**
 * Locks the task an extra belongs to, then reads the extra again under that lock, both in the
 * caller's organisation: the extra's 404 when it is missing (another organisation's extra looks
 * exactly like a missing one). Read before the lock, the extra may have been changed or deleted
 * by the time the lock is had; read under it, it stays as read until commit. A task deleted
 * meanwhile took its extras with it, so that is the extra's 404 too: the extra is what was asked.
 */
export async function lockExtra<Row extends { task_id: string }>(
  tx: TransactionSql,
  organizationId: string,
  table: ExtraTable<Row>,
  id: string,
): Promise<Row> {
  const owner = await table.get(tx, organizationId, id);
  // An extra never moves to another task, so the one seen is the one to lock.
  await tx`
    SELECT 1 FROM tasks WHERE organization_id = ${organizationId} AND id = ${owner.task_id}
    FOR UPDATE`;
  return await table.get(tx, organizationId, id);
}

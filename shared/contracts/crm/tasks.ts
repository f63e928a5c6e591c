/**
 * Tasks: the shop's to-dos, linked to a quote, customer, vendor or job, each with a checklist,
 * comments and attachments (spec 2.9, 4.6).
 */
import { z } from "zod";
import {
  CREDENTIAL_KINDS,
  DateTime,
  Deleted,
  described,
  Email,
  IsoDate,
  page,
  setExamples,
  Text,
  Uuid,
  writeBodies,
} from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Flag, HttpsUrl, SortOrder } from "../quotes/values.ts";
import { CustomFieldValues, TIMESTAMP_DESCRIPTIONS } from "./values.ts";

/** Where a task stands. `done` stamps `completedAt`; any other status clears it. */
export const TASK_STATUSES = ["todo", "in_progress", "done", "cancelled"] as const;
export const TaskStatus = z.enum(TASK_STATUSES, {
  error: `Must be one of ${TASK_STATUSES.join(", ")}`,
});
export type TaskStatus = typeof TASK_STATUSES[number];

/** How pressing a task is, least first: a sort by priority follows this order, not the alphabet. */
export const TASK_PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const TaskPriority = z.enum(TASK_PRIORITIES, {
  error: `Must be one of ${TASK_PRIORITIES.join(", ")}`,
});
export type TaskPriority = typeof TASK_PRIORITIES[number];

/** Most checklist items, comments or attachments one task holds, each. */
export const TASK_EXTRAS_MAX = 500;

/** The largest attachment size accepted, in bytes (1 TiB): metadata only, nothing is stored. */
export const ATTACHMENT_SIZE_MAX = 1_099_511_627_776;

const TASK_DESCRIPTIONS = {
  id: "The task's id",
  title: "What is to be done, in a line",
  description: "More about it",
  status: "`todo`, `in_progress`, `done` or `cancelled`; `todo` when created without one",
  priority: "`low`, `normal`, `high` or `urgent`; `normal` when created without one",
  dueDate: "The day it is due, `YYYY-MM-DD`",
  assigneeEmail: "Email address of the person doing it",
  quoteId: "The quote it concerns (an id in the quotes service; kept as given, not checked)",
  customerId: "The customer it concerns: a customer of this organisation (400 otherwise); " +
    "set to null if that customer is deleted",
  vendorId: "The vendor it concerns: a vendor of this organisation (400 otherwise)",
  jobId: "The production job it concerns (kept as given; no service keeps jobs here)",
  customFields: "Values of the organisation's custom fields for tasks, by definition id",
  completedAt: "When the status last became `done`, set by the server; null unless done",
  ...TIMESTAMP_DESCRIPTIONS,
};

export const Task = z.object(described({
  id: Uuid,
  title: z.string(),
  description: z.string().nullable(),
  status: TaskStatus,
  priority: TaskPriority,
  dueDate: IsoDate.nullable(),
  assigneeEmail: z.string().nullable(),
  quoteId: Uuid.nullable(),
  customerId: Uuid.nullable(),
  vendorId: Uuid.nullable(),
  jobId: Uuid.nullable(),
  customFields: z.record(z.string(), z.unknown()),
  completedAt: DateTime.nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, TASK_DESCRIPTIONS)).meta({
  id: "Task",
  description: "A to-do of the shop, linked to what it concerns",
});
export type Task = z.infer<typeof Task>;

const TASK_ID = "0193b0c2-4d5e-7f60-8a71-b2c3d4e5f607";

export const TASK_EXAMPLE: Task = {
  id: TASK_ID,
  title: "Order 120 black tees from the supplier",
  description: "Riverside Bakery job: 5000 Black, sizes per the quote",
  status: "in_progress",
  priority: "high",
  dueDate: "2026-11-24",
  assigneeEmail: "mia@inkwellprint.com.au",
  quoteId: "0193a3e0-1b2c-7d3e-8f40-516273849506",
  customerId: "0193a3d1-0a1b-7c2d-8e3f-405162738495",
  vendorId: null,
  jobId: null,
  customFields: { "0193a3d0-7e1f-7a20-8b31-4c5d6e7f8092": 2 },
  completedAt: null,
  createdAt: "2026-11-20T23:14:05.118Z",
  updatedAt: "2026-11-21T09:30:00.000Z",
};
setExamples(Task, TASK_EXAMPLE);

const taskFields = {
  title: Text(200),
  description: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  status: TaskStatus,
  priority: TaskPriority,
  dueDate: IsoDate.nullable(),
  assigneeEmail: Email.nullable(),
  quoteId: Uuid.nullable(),
  customerId: Uuid.nullable(),
  vendorId: Uuid.nullable(),
  jobId: Uuid.nullable(),
  customFields: CustomFieldValues,
};

export const { create: CreateTaskBody, update: UpdateTaskBody } = writeBodies(
  "Task",
  described(taskFields, TASK_DESCRIPTIONS),
  ["title"],
);
setExamples(CreateTaskBody, {
  title: "Order 120 black tees from the supplier",
  priority: "high",
  dueDate: "2026-11-24",
  assigneeEmail: "mia@inkwellprint.com.au",
  customerId: "0193a3d1-0a1b-7c2d-8e3f-405162738495",
});
setExamples(UpdateTaskBody, { status: "done" });
export type CreateTaskBody = z.infer<typeof CreateTaskBody>;
export type UpdateTaskBody = z.infer<typeof UpdateTaskBody>;

export const TASK_SORT_FIELDS = [
  "dueDate",
  "createdAt",
  "updatedAt",
  "priority",
  "status",
  "title",
  "completedAt",
] as const;

export const ListTasksQuery = offsetListQuery({
  sortFields: TASK_SORT_FIELDS,
  named: described({
    status: TaskStatus.optional(),
    priority: TaskPriority.optional(),
    assigneeEmail: z.string().max(320, "Must be at most 320 characters").optional(),
    customerId: Uuid.optional(),
    vendorId: Uuid.optional(),
    quoteId: Uuid.optional(),
  }, {
    status: "Only tasks in this status",
    priority: "Only tasks of this priority",
    assigneeEmail: "Only tasks assigned to this email address",
    customerId: "Only tasks about this customer",
    vendorId: "Only tasks about this vendor",
    quoteId: "Only tasks about this quote",
  }),
  search: true,
});
export type ListTasksQuery = z.infer<typeof ListTasksQuery>;

// ---------------------------------------------------------------------------------------------
// Extras: checklist items, comments and attachments (spec 2.9), each addressed by its own id.

/**
 * Who wrote a comment or uploaded an attachment. The gateway passes services the calling
 * credential's kind and id, never a person: an API key or a partner app has no email address.
 */
const AUTHOR_EMAIL_NOTE = "always null for now: a credential (API key or partner app) has no " +
  "email address, and the API does not take one from the body, where anyone could claim any";
const AUTHOR_NAME_NOTE = "the credential that made the call, `API key <first 8 characters of " +
  "its id>` or `Partner app <first 8 characters of its id>`";

const CHECKLIST_DESCRIPTIONS = {
  id: "The checklist item's id",
  taskId: "The task it belongs to",
  text: "What is to be checked",
  completed: "Whether it is ticked",
  position: "Its place in the task's checklist, from 1; the checklist is always numbered 1..n",
  completedAt: "When it was ticked, set by the server; null while it is not",
  ...TIMESTAMP_DESCRIPTIONS,
};

export const TaskChecklistItem = z.object(described({
  id: Uuid,
  taskId: Uuid,
  text: z.string(),
  completed: z.boolean(),
  position: z.int(),
  completedAt: DateTime.nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
}, CHECKLIST_DESCRIPTIONS)).meta({
  id: "TaskChecklistItem",
  description: "One line of a task's checklist",
});
export type TaskChecklistItem = z.infer<typeof TaskChecklistItem>;
const CHECKLIST_EXAMPLE: TaskChecklistItem = {
  id: "0193b0c2-5a6b-7c7d-8e9f-a0b1c2d3e4f5",
  taskId: TASK_ID,
  text: "Confirm sizes with the customer",
  completed: true,
  position: 1,
  completedAt: "2026-11-21T08:02:44.310Z",
  createdAt: "2026-11-20T23:14:05.118Z",
  updatedAt: "2026-11-21T08:02:44.310Z",
};
setExamples(TaskChecklistItem, CHECKLIST_EXAMPLE);

const COMMENT_DESCRIPTIONS = {
  id: "The comment's id",
  taskId: "The task it is on",
  authorEmail: `Email address of the author: ${AUTHOR_EMAIL_NOTE}`,
  body: "The comment",
  authorName: `Who wrote it: ${AUTHOR_NAME_NOTE}`,
  authorCredentialKind: "How the author authenticated: `tenant_key` or `partner`",
  authorCredentialId: "The API key or partner app that wrote it (`credential.id` of GET /v1/me)",
  createdAt: "When it was written",
  editedAt: "When its body last changed; null if never edited",
};

export const TaskComment = z.object(described({
  id: Uuid,
  taskId: Uuid,
  authorEmail: z.string().nullable(),
  body: z.string(),
  authorName: z.string(),
  authorCredentialKind: z.enum(CREDENTIAL_KINDS),
  authorCredentialId: z.string(),
  createdAt: DateTime,
  editedAt: DateTime.nullable(),
}, COMMENT_DESCRIPTIONS)).meta({ id: "TaskComment", description: "A comment on a task" });
export type TaskComment = z.infer<typeof TaskComment>;
const COMMENT_EXAMPLE: TaskComment = {
  id: "0193b0c2-6b7c-7d8e-9fa0-b1c2d3e4f5a6",
  taskId: TASK_ID,
  authorEmail: null,
  body: "Supplier says Thursday; chasing for Wednesday",
  authorName: "API key 0192f3aa",
  authorCredentialKind: "tenant_key",
  authorCredentialId: "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f",
  createdAt: "2026-11-21T09:30:00.000Z",
  editedAt: null,
};
setExamples(TaskComment, COMMENT_EXAMPLE);

const ATTACHMENT_DESCRIPTIONS = {
  id: "The attachment's id",
  taskId: "The task it is on",
  fileUrl: "Where the file is, an https URL; the API keeps the link, not the file",
  filename: "The file's name as people see it",
  mimeType: "The file's media type (`application/pdf`, `image/png`)",
  uploadedByEmail: `Email address of who added it: ${AUTHOR_EMAIL_NOTE}`,
  uploadedByName: `Who added it: ${AUTHOR_NAME_NOTE}`,
  uploadedByCredentialKind: "How whoever added it authenticated: `tenant_key` or `partner`",
  uploadedByCredentialId: "The API key or partner app that added it (`credential.id` of " +
    "GET /v1/me)",
  sizeBytes: "The file's size in bytes, as the caller gave it",
  createdAt: "When it was added",
};

export const TaskAttachment = z.object(described({
  id: Uuid,
  taskId: Uuid,
  fileUrl: z.string(),
  filename: z.string(),
  mimeType: z.string(),
  uploadedByEmail: z.string().nullable(),
  uploadedByName: z.string(),
  uploadedByCredentialKind: z.enum(CREDENTIAL_KINDS),
  uploadedByCredentialId: z.string(),
  sizeBytes: z.int().min(0),
  createdAt: DateTime,
}, ATTACHMENT_DESCRIPTIONS)).meta({
  id: "TaskAttachment",
  description: "A file linked to a task (its address and metadata; the file lives elsewhere)",
});
export type TaskAttachment = z.infer<typeof TaskAttachment>;
const ATTACHMENT_EXAMPLE: TaskAttachment = {
  id: "0193b0c2-7c8d-7e9f-a0b1-c2d3e4f5a6b7",
  taskId: TASK_ID,
  fileUrl: "https://files.inkwellprint.com.au/po/PO-2291.pdf",
  filename: "PO-2291.pdf",
  mimeType: "application/pdf",
  uploadedByEmail: null,
  uploadedByName: "API key 0192f3aa",
  uploadedByCredentialKind: "tenant_key",
  uploadedByCredentialId: "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f",
  sizeBytes: 48213,
  createdAt: "2026-11-21T09:31:12.407Z",
};
setExamples(TaskAttachment, ATTACHMENT_EXAMPLE);

export const TaskExtras = z.object(described({
  checklist: z.array(TaskChecklistItem),
  comments: z.array(TaskComment),
  attachments: z.array(TaskAttachment),
}, {
  checklist: "The checklist, by position",
  comments: "Comments, oldest first",
  attachments: "Attachments, oldest first",
})).meta({ id: "TaskExtras", description: "A task's checklist, comments and attachments" });
export type TaskExtras = z.infer<typeof TaskExtras>;
setExamples(TaskExtras, {
  checklist: [CHECKLIST_EXAMPLE],
  comments: [COMMENT_EXAMPLE],
  attachments: [ATTACHMENT_EXAMPLE],
});

export const CreateTaskChecklistItemBody = z.strictObject(described({
  text: Text(500),
  position: SortOrder.optional(),
}, {
  text: CHECKLIST_DESCRIPTIONS.text,
  position: "Where to put it, from 1 (the others move down); at the end when omitted or " +
    "beyond the end",
})).meta({ id: "CreateTaskChecklistItemBody", description: "A new checklist item" });
setExamples(CreateTaskChecklistItemBody, { text: "Confirm sizes with the customer" });
export type CreateTaskChecklistItemBody = z.infer<typeof CreateTaskChecklistItemBody>;

export const UpdateTaskChecklistItemBody = z.strictObject(described({
  text: Text(500).optional(),
  completed: Flag.optional(),
  position: SortOrder.optional(),
}, {
  text: CHECKLIST_DESCRIPTIONS.text,
  completed: "`true` ticks it (the server sets `completedAt`), `false` unticks it (clears it)",
  position: "Where to move it, from 1; the others are renumbered 1..n around it (beyond the " +
    "end means last)",
})).meta({
  id: "UpdateTaskChecklistItemBody",
  description: "The checklist item fields to change; those not given stay as they are",
});
setExamples(UpdateTaskChecklistItemBody, { completed: true });
export type UpdateTaskChecklistItemBody = z.infer<typeof UpdateTaskChecklistItemBody>;

const CommentText = Text(10_000);

export const CreateTaskCommentBody = z.strictObject(described({ body: CommentText }, {
  body: "The comment; its author is the calling credential",
})).meta({ id: "CreateTaskCommentBody", description: "A new comment" });
setExamples(CreateTaskCommentBody, { body: "Supplier says Thursday; chasing for Wednesday" });
export type CreateTaskCommentBody = z.infer<typeof CreateTaskCommentBody>;

export const UpdateTaskCommentBody = z.strictObject(described({ body: CommentText }, {
  body: "The new text; the server sets `editedAt`",
})).meta({ id: "UpdateTaskCommentBody", description: "A comment's new text" });
setExamples(UpdateTaskCommentBody, { body: "Supplier confirmed Wednesday" });
export type UpdateTaskCommentBody = z.infer<typeof UpdateTaskCommentBody>;

export const CreateTaskAttachmentBody = z.strictObject(described({
  fileUrl: HttpsUrl,
  filename: Text(255),
  mimeType: z.string().max(255, "Must be at most 255 characters").regex(
    /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$/,
    "Must be a media type such as application/pdf",
  ),
  sizeBytes: z.int().min(0, "Must not be negative").max(
    ATTACHMENT_SIZE_MAX,
    `Must be at most ${ATTACHMENT_SIZE_MAX}`,
  ),
}, ATTACHMENT_DESCRIPTIONS)).meta({
  id: "CreateTaskAttachmentBody",
  description: "A file to link to a task: its https address and metadata (no upload)",
});
setExamples(CreateTaskAttachmentBody, {
  fileUrl: "https://files.inkwellprint.com.au/po/PO-2291.pdf",
  filename: "PO-2291.pdf",
  mimeType: "application/pdf",
  sizeBytes: 48213,
});
export type CreateTaskAttachmentBody = z.infer<typeof CreateTaskAttachmentBody>;

const ExtraDeleted = z.object(described({ id: Uuid, taskId: Uuid }, {
  id: "The id of what was removed",
  taskId: "The task it belonged to",
})).meta({
  id: "TaskExtraDeleted",
  description: "What a checklist item, comment or attachment delete removed",
});
setExamples(ExtraDeleted, { id: CHECKLIST_EXAMPLE.id, taskId: TASK_ID });

export const taskEvents = defineEvents("crm", "tasks.read", {
  "task.created": { summary: "A task was created", data: Task },
  "task.updated": {
    summary: "A task's own fields changed (its extras have events of their own)",
    data: Task,
  },
  "task.deleted": {
    summary: "A task was deleted, with its checklist, comments and attachments (no event " +
      "of their own)",
    data: Task,
  },
  "task_checklist_item.created": {
    summary: "A checklist item was added",
    data: TaskChecklistItem,
  },
  "task_checklist_item.updated": {
    summary: "A checklist item changed, including its position when another item was added, " +
      "moved or removed (one event per item whose position changed)",
    data: TaskChecklistItem,
  },
  "task_checklist_item.deleted": { summary: "A checklist item was removed", data: ExtraDeleted },
  "task_comment.created": { summary: "A comment was written", data: TaskComment },
  "task_comment.updated": { summary: "A comment was edited", data: TaskComment },
  "task_comment.deleted": { summary: "A comment was removed", data: ExtraDeleted },
  "task_attachment.created": { summary: "An attachment was added", data: TaskAttachment },
  "task_attachment.deleted": { summary: "An attachment was removed", data: ExtraDeleted },
});

const CHECKLIST_EVENTS = ["task_checklist_item.updated"] as const;

export const taskOperations = operations("Tasks", {
  createTask: {
    method: "POST",
    path: "/v1/tasks",
    scope: "tasks.write",
    summary: "Create a task",
    body: CreateTaskBody,
    responses: { 201: Task },
    events: ["task.created"],
    examples: {
      responses: {
        201: {
          ...TASK_EXAMPLE,
          status: "todo",
          customFields: {},
          quoteId: null,
          description: null,
        },
      },
    },
  },
  listTasks: {
    method: "GET",
    path: "/v1/tasks",
    scope: "tasks.read",
    summary: "List tasks, oldest first unless sorted otherwise (a sort by priority puts " +
      "`urgent` last ascending, first descending)",
    query: ListTasksQuery,
    responses: { 200: page(Task) },
    examples: { query: { status: "in_progress", sortField: "dueDate" } },
  },
  getTask: {
    method: "GET",
    path: "/v1/tasks/{taskId}",
    scope: "tasks.read",
    summary: "Read one task",
    responses: { 200: Task },
  },
  updateTask: {
    method: "PATCH",
    path: "/v1/tasks/{taskId}",
    scope: "tasks.write",
    summary: "Change a task; status `done` stamps `completedAt`, any other status clears it",
    body: UpdateTaskBody,
    responses: { 200: Task },
    events: ["task.updated"],
    examples: {
      responses: {
        200: { ...TASK_EXAMPLE, status: "done", completedAt: "2026-11-21T09:30:00.000Z" },
      },
    },
  },
  deleteTask: {
    method: "DELETE",
    path: "/v1/tasks/{taskId}",
    scope: "tasks.write",
    summary: "Delete a task with its checklist, comments and attachments",
    responses: { 200: Deleted },
    events: ["task.deleted"],
  },
  getTaskExtras: {
    method: "GET",
    path: "/v1/tasks/{taskId}/extras",
    scope: "tasks.read",
    summary: "Read a task's checklist (by position), comments and attachments (oldest first)",
    responses: { 200: TaskExtras },
  },
  createTaskChecklistItem: {
    method: "POST",
    path: "/v1/tasks/{taskId}/checklist",
    scope: "tasks.write",
    summary: "Add a checklist item, at the end unless a position is given",
    body: CreateTaskChecklistItemBody,
    responses: { 201: TaskChecklistItem },
    events: ["task_checklist_item.created", ...CHECKLIST_EVENTS],
    examples: {
      responses: {
        201: { ...CHECKLIST_EXAMPLE, completed: false, completedAt: null },
      },
    },
  },
  updateTaskChecklistItem: {
    method: "PATCH",
    path: "/v1/task-checklist-items/{checklistItemId}",
    scope: "tasks.write",
    summary: "Change, tick, untick or move a checklist item",
    body: UpdateTaskChecklistItemBody,
    responses: { 200: TaskChecklistItem },
    events: CHECKLIST_EVENTS,
  },
  deleteTaskChecklistItem: {
    method: "DELETE",
    path: "/v1/task-checklist-items/{checklistItemId}",
    scope: "tasks.write",
    summary: "Remove a checklist item; the ones after it move up",
    responses: { 200: ExtraDeleted },
    events: ["task_checklist_item.deleted", ...CHECKLIST_EVENTS],
  },
  createTaskComment: {
    method: "POST",
    path: "/v1/tasks/{taskId}/comments",
    scope: "tasks.write",
    summary: "Comment on a task, as the calling credential",
    body: CreateTaskCommentBody,
    responses: { 201: TaskComment },
    events: ["task_comment.created"],
  },
  updateTaskComment: {
    method: "PATCH",
    path: "/v1/task-comments/{commentId}",
    scope: "tasks.write",
    summary: "Edit a comment's text (sets `editedAt`)",
    body: UpdateTaskCommentBody,
    responses: { 200: TaskComment },
    events: ["task_comment.updated"],
    examples: {
      responses: {
        200: {
          ...COMMENT_EXAMPLE,
          body: "Supplier confirmed Wednesday",
          editedAt: "2026-11-21T10:05:41.002Z",
        },
      },
    },
  },
  deleteTaskComment: {
    method: "DELETE",
    path: "/v1/task-comments/{commentId}",
    scope: "tasks.write",
    summary: "Remove a comment",
    responses: { 200: ExtraDeleted },
    events: ["task_comment.deleted"],
  },
  createTaskAttachment: {
    method: "POST",
    path: "/v1/tasks/{taskId}/attachments",
    scope: "tasks.write",
    summary: "Link a file to a task by its https address (metadata only; nothing is uploaded)",
    body: CreateTaskAttachmentBody,
    responses: { 201: TaskAttachment },
    events: ["task_attachment.created"],
  },
  deleteTaskAttachment: {
    method: "DELETE",
    path: "/v1/task-attachments/{attachmentId}",
    scope: "tasks.write",
    summary: "Remove an attachment (the file itself is not touched)",
    responses: { 200: ExtraDeleted },
    events: ["task_attachment.deleted"],
  },
});

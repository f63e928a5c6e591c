import type { taskOperations } from "@printshop/shared/contracts/crm";
import type { Handlers } from "@printshop/shared/service-app";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import {
  createAttachment,
  createChecklistItem,
  createComment,
  deleteChecklistItem,
  deleteExtra,
  findExtras,
  updateChecklistItem,
  updateComment,
} from "../store/task_extras.ts";
import { createTask, deleteTask, findTask, listTasks, updateTask } from "../store/tasks.ts";

/** `/v1/tasks` and their extras: checklist items, comments and attachments by their own ids. */
export function taskRoutes({ sql, config }: ServiceDeps<Config>): Handlers<typeof taskOperations> {
  return {
    createTask: async ({ body, organizationId }) => ({
      status: 201,
      data: await createTask(sql, organizationId, body),
      message: "Task created",
    }),
    listTasks: async ({ query, organizationId }) => ({
      data: await listTasks(sql, organizationId, query, config.PAGE_SIZE_MAX),
    }),
    getTask: async ({ params, organizationId }) => ({
      data: await findTask(sql, organizationId, params.taskId),
    }),
    updateTask: async ({ params, body, organizationId }) => ({
      data: await updateTask(sql, organizationId, params.taskId, body),
      message: "Task updated",
    }),
    deleteTask: async ({ params, organizationId }) => {
      const task = await deleteTask(sql, organizationId, params.taskId);
      return { data: { id: task.id }, message: "Task deleted" };
    },
    getTaskExtras: async ({ params, organizationId }) => ({
      data: await findExtras(sql, organizationId, params.taskId),
    }),
    createTaskChecklistItem: async ({ params, body, organizationId }) => ({
      status: 201,
      data: await createChecklistItem(sql, organizationId, params.taskId, body),
      message: "Checklist item added",
    }),
    updateTaskChecklistItem: async ({ params, body, organizationId }) => ({
      data: await updateChecklistItem(sql, organizationId, params.checklistItemId, body),
      message: "Checklist item updated",
    }),
    deleteTaskChecklistItem: async ({ params, organizationId }) => ({
      data: await deleteChecklistItem(sql, organizationId, params.checklistItemId),
      message: "Checklist item removed",
    }),
    createTaskComment: async ({ params, body, organizationId, auth }) => ({
      status: 201,
      data: await createComment(sql, organizationId, params.taskId, body, auth),
      message: "Comment added",
    }),
    updateTaskComment: async ({ params, body, auth }) => ({
      data: await updateComment(sql, auth, params.commentId, body),
      message: "Comment updated",
    }),
    deleteTaskComment: async ({ params, organizationId }) => ({
      data: await deleteExtra(sql, organizationId, "comment", params.commentId),
      message: "Comment removed",
    }),
    createTaskAttachment: async ({ params, body, organizationId, auth }) => ({
      status: 201,
      data: await createAttachment(sql, organizationId, params.taskId, body, auth),
      message: "Attachment added",
    }),
    deleteTaskAttachment: async ({ params, organizationId }) => ({
      data: await deleteExtra(sql, organizationId, "attachment", params.attachmentId),
      message: "Attachment removed",
    }),
  };
}

/**
 * Custom field definitions (spec 2.10): fields a shop adds to its customers, vendors and tasks
 * (and lists for quotes and jobs), with the values checked against them.
 */
import { z } from "zod";
import { BooleanParam, DateTime, Deleted, described, setExamples, Text, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { CustomFieldEntity, CustomFieldType } from "./values.ts";

const DEFINITION_DESCRIPTIONS = {
  id: "The definition's id: the key of its values in a record's `customFields`",
  name: "Name shown beside the value",
  type: "What the value is: `text`, `number`, `date` (YYYY-MM-DD), `boolean`, `select` (one " +
    "of `options`) or `multiselect` (several of them)",
  entity: "What it describes: `customer`, `vendor`, `task`, `quote` or `job`",
  options: "The choices of a `select` or `multiselect` field, in order; empty for other types",
  createdAt: "When the definition was created",
  updatedAt: "When the definition last changed",
};

export const CustomFieldDefinition = z.object(described({
  id: Uuid,
  name: z.string(),
  type: CustomFieldType,
  entity: CustomFieldEntity,
  options: z.array(z.string()),
  createdAt: DateTime,
  updatedAt: DateTime,
}, DEFINITION_DESCRIPTIONS)).meta({
  id: "CustomFieldDefinition",
  description: "A field the shop adds to its records",
});
export type CustomFieldDefinition = z.infer<typeof CustomFieldDefinition>;
setExamples(CustomFieldDefinition, {
  id: "0193a3d0-7e1f-7a20-8b31-4c5d6e7f8091",
  name: "Preferred courier",
  type: "select",
  entity: "customer",
  options: ["StarTrack", "Aramex", "Pick-up"],
  createdAt: "2026-04-02T01:12:40.118Z",
  updatedAt: "2026-04-02T01:12:40.118Z",
});

const Options = z.array(Text(200)).max(200, "At most 200 options").refine(
  (options) => new Set(options).size === options.length,
  "Each option may appear once",
);

export const CreateCustomFieldBody = z.strictObject(described({
  name: Text(100),
  type: CustomFieldType,
  entity: CustomFieldEntity,
  options: Options.optional(),
}, DEFINITION_DESCRIPTIONS)).meta({
  id: "CreateCustomFieldBody",
  description: "A new custom field; `options` are required for select and multiselect",
});
setExamples(CreateCustomFieldBody, {
  name: "Preferred courier",
  type: "select",
  entity: "customer",
  options: ["StarTrack", "Aramex", "Pick-up"],
});
export type CreateCustomFieldBody = z.infer<typeof CreateCustomFieldBody>;

export const UpdateCustomFieldBody = z.strictObject(described({
  name: Text(100).optional(),
  options: Options.optional(),
}, DEFINITION_DESCRIPTIONS)).meta({
  id: "UpdateCustomFieldBody",
  description: "A new name or list of options; type and entity stay (values were checked " +
    "against them). An option records still hold cannot be removed",
});
setExamples(UpdateCustomFieldBody, { options: ["StarTrack", "Aramex", "Pick-up", "DHL"] });
export type UpdateCustomFieldBody = z.infer<typeof UpdateCustomFieldBody>;

export const ListCustomFieldsQuery = z.strictObject(described({
  entity: CustomFieldEntity.optional(),
}, { entity: "Only definitions for this entity" }));

export const DeleteCustomFieldQuery = z.strictObject(described({
  force: BooleanParam.optional(),
}, {
  force: "`true` deletes a definition records still hold values of, removing those values; " +
    "without it that is 409",
}));

export const customFieldEvents = defineEvents("crm", "customfields.read", {
  "custom_field.created": { summary: "A custom field was defined", data: CustomFieldDefinition },
  "custom_field.updated": {
    summary: "A custom field definition changed",
    data: CustomFieldDefinition,
  },
  "custom_field.deleted": {
    summary: "A custom field was deleted (with force, its values went with it)",
    data: CustomFieldDefinition,
  },
});

export const customFieldOperations = operations("Custom fields", {
  listCustomFields: {
    method: "GET",
    path: "/v1/custom-fields",
    scope: "customfields.read",
    summary: "Every custom field definition of the organisation (not paged), oldest first",
    query: ListCustomFieldsQuery,
    responses: { 200: z.array(CustomFieldDefinition).describe("The definitions, oldest first") },
    examples: { query: { entity: "customer" } },
  },
  createCustomField: {
    method: "POST",
    path: "/v1/custom-fields",
    scope: "customfields.write",
    summary: "Define a custom field",
    body: CreateCustomFieldBody,
    responses: { 201: CustomFieldDefinition },
    events: ["custom_field.created"],
  },
  updateCustomField: {
    method: "PATCH",
    path: "/v1/custom-fields/{fieldId}",
    scope: "customfields.write",
    summary: "Rename a custom field or change its options",
    body: UpdateCustomFieldBody,
    responses: { 200: CustomFieldDefinition },
    events: ["custom_field.updated"],
  },
  deleteCustomField: {
    method: "DELETE",
    path: "/v1/custom-fields/{fieldId}",
    scope: "customfields.write",
    summary: "Delete a custom field; one records hold values of only with `force=true`",
    query: DeleteCustomFieldQuery,
    responses: { 200: Deleted },
    // With force, each record that held a value is announced as changed.
    events: ["custom_field.deleted", "customer.updated", "vendor.updated", "task.updated"],
    examples: { query: { force: "true" } },
  },
});

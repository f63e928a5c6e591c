import { type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateCustomFieldBody,
  CUSTOM_FIELD_ENTITIES,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELD_VALUES_MAX,
  type CustomFieldDefinition,
  type CustomFieldEntity,
  type UpdateCustomFieldBody,
} from "@printshop/shared/contracts/crm";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { assertNoProblem, invalid, validationError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import {
  customFieldProblems,
  type Definition,
  mergedValues,
  optionsProblem,
} from "../domain/custom_fields.ts";
import type { EventData, EventType } from "@printshop/shared/contracts/platform";
import { announce } from "./answers.ts";

/**
 * The CRM tables whose rows carry values (a `custom_fields` jsonb column and `organization_id`),
 * by entity. Definitions for quotes and jobs have no values here.
 */
const VALUE_TABLES: Partial<Record<CustomFieldEntity, string>> = {
  customer: "customers",
  vendor: "vendors",
  task: "tasks",
};

/** The definitions table, declared once (shared/db/table.ts). */
export const DEFINITIONS = defineTable({
  name: "custom_field_definitions",
  tenant: true,
  noun: "Custom field",
  columns: {
    id: col.uuid(),
    name: col.text(),
    type: col.enum(CUSTOM_FIELD_TYPES),
    entity: col.enum(CUSTOM_FIELD_ENTITIES),
    options: col.textArray(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

export type DefinitionRow = RowOf<typeof DEFINITIONS>;

/**
 * A kind of record that holds custom field values (customers, vendors, tasks), as removing a
 * definition's values needs it (custom_field_removal.ts): its table, and its `….updated` event
 * with the records as that event carries them, so that a value removed is announced exactly as
 * any other change to the record is.
 */
export interface ValueHolder<Row extends { id: string }, T extends EventType> {
  readonly table: { readonly name: string; readonly select: string };
  readonly updated: T;
  /** The records as answered (each its event's payload), from their rows, in the same order. */
  answer(tx: Queryable, rows: readonly Row[]): Promise<(EventData<T> & { id: string })[]>;
}

/**
 * The organisation's definitions for one entity, as the value rules take them, held FOR SHARE
 * until the write commits: a definition's delete or change of options (which takes it FOR
 * UPDATE) then waits for the write and sees its value, or the write waits for it and sees the
 * definition gone, so no value outlives its definition or its option.
 */
async function definitionsFor(
  tx: Queryable,
  organizationId: string,
  entity: CustomFieldEntity,
): Promise<Definition[]> {
  return [
    ...await tx<Definition[]>`
      SELECT id, name, type, options FROM custom_field_definitions
      WHERE organization_id = ${organizationId} AND entity = ${entity}
      ORDER BY id FOR SHARE`,
  ];
}

/**
 * A record's custom field values after a write (the stored ones, the given ones laid over),
 * checked against the organisation's definitions for the entity: 400 naming each field that
 * does not fit. Returns the values to store (undefined when none were given).
 */
export async function checkedCustomFields(
  tx: Queryable,
  organizationId: string,
  entity: CustomFieldEntity,
  stored: Readonly<Record<string, unknown>>,
  given: Readonly<Record<string, unknown>> | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (given === undefined) return undefined;
  const problems = customFieldProblems(await definitionsFor(tx, organizationId, entity), given);
  if (problems.length > 0) throw invalid("custom field values", problems);
  const merged = mergedValues(stored, given);
  if (Object.keys(merged).length > CUSTOM_FIELD_VALUES_MAX) {
    throw validationError(
      "customFields",
      `A record holds at most ${CUSTOM_FIELD_VALUES_MAX} custom field values; this write would ` +
        `leave ${Object.keys(merged).length}`,
    );
  }
  return merged;
}

export async function listDefinitions(
  sql: Queryable,
  organizationId: string,
  entity: CustomFieldEntity | undefined,
): Promise<CustomFieldDefinition[]> {
  // Read for the organisation: straight on the pool, the policies would show no definition.
  const rows = await read(sql, (q) =>
    q<DefinitionRow[]>`
      SELECT ${q.unsafe(DEFINITIONS.select)} FROM custom_field_definitions
      WHERE organization_id = ${organizationId}
        ${entity === undefined ? q`` : q`AND entity = ${entity}`}
      ORDER BY created_at, id`);
  return rows.map(DEFINITIONS.read);
}

export async function createDefinition(
  sql: Sql,
  organizationId: string,
  input: CreateCustomFieldBody,
): Promise<CustomFieldDefinition> {
  const options = input.options ?? [];
  assertNoProblem(optionsProblem(input.type, [], options));
  return await transaction(sql, async (tx) => {
    const [row] = await tx<DefinitionRow[]>`
      INSERT INTO custom_field_definitions (id, organization_id, name, type, entity, options)
      VALUES (${uuidv7()}, ${organizationId}, ${input.name}, ${input.type}, ${input.entity},
              ${options}::text[])
      RETURNING ${tx.unsafe(DEFINITIONS.select)}`;
    const definition = DEFINITIONS.read(row!);
    await announce(tx, organizationId, "custom_field.created", [definition]);
    return definition;
  });
}

/**
 * The definition, locked FOR UPDATE, after the records holding a value of it, for a change that
 * goes on to write those records (a forced delete, custom_field_removal.ts): a record write
 * locks its record and then the definitions (FOR SHARE), so taking them in the same order here
 * keeps the two from deadlocking. Answers the ids of the records locked so (a record given a
 * value after they were read is not among them).
 */
export async function lockDefinition(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<{ row: DefinitionRow; holders: string[] }> {
  const known = await DEFINITIONS.find(tx, organizationId, id);
  const table = known ? VALUE_TABLES[known.entity] : undefined;
  const holders = table
    ? await tx<{ id: string }[]>`
      SELECT id FROM ${tx(table)}
      WHERE organization_id = ${organizationId} AND custom_fields ? ${id}
      ORDER BY id FOR UPDATE`
    : [];
  const row = await DEFINITIONS.lock(tx, organizationId, id);
  return { row, holders: holders.map((holder) => holder.id) };
}

/** The options records of the organisation still hold for a select or multiselect field. */
async function usedOptions(
  tx: Queryable,
  organizationId: string,
  definition: DefinitionRow,
): Promise<string[]> {
  const table = VALUE_TABLES[definition.entity];
  if (!table) return [];
  const rows = await tx<{ value: string }[]>`
    SELECT DISTINCT v.value FROM ${tx(table)} r,
      jsonb_array_elements_text(
        CASE jsonb_typeof(r.custom_fields -> ${definition.id})
          WHEN 'array' THEN r.custom_fields -> ${definition.id}
          ELSE jsonb_build_array(r.custom_fields -> ${definition.id}) END
      ) AS v(value)
    WHERE r.organization_id = ${organizationId} AND r.custom_fields ? ${definition.id}`;
  return rows.map((row) => row.value);
}

export async function updateDefinition(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateCustomFieldBody,
): Promise<CustomFieldDefinition> {
  return await transaction(sql, async (tx) => {
    // A body that names nothing changes nothing: answered as it is, with no event.
    if (input.name === undefined && input.options === undefined) {
      return DEFINITIONS.read(await DEFINITIONS.get(tx, organizationId, id));
    }
    // The definition's lock alone: a record given a value holds the definition FOR SHARE until
    // it commits, so the options in use read after this lock are all there will be until this
    // commits. No record is written here, so none is locked: locking every record holding a
    // value would hold 100,000 rows, and wait on any of them busy, for a rename.
    const row = await DEFINITIONS.lock(tx, organizationId, id);
    if (input.options !== undefined) {
      assertNoProblem(
        optionsProblem(row.type, await usedOptions(tx, organizationId, row), input.options),
      );
    }
    const [updated] = await tx<DefinitionRow[]>`
      UPDATE custom_field_definitions SET
        name = ${input.name ?? row.name},
        options = ${input.options ?? row.options}::text[],
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(DEFINITIONS.select)}`;
    const definition = DEFINITIONS.read(updated!);
    await announce(tx, organizationId, "custom_field.updated", [definition]);
    return definition;
  });
}

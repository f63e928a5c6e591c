import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
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
import { assertNoProblem, conflict, invalid, validationError } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import {
  customFieldProblems,
  type Definition,
  mergedValues,
  optionsProblem,
} from "../domain/custom_fields.ts";
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
const DEFINITIONS = defineTable({
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

type DefinitionRow = RowOf<typeof DEFINITIONS>;

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
  const rows = await sql<DefinitionRow[]>`
    SELECT ${sql.unsafe(DEFINITIONS.select)} FROM custom_field_definitions
    WHERE organization_id = ${organizationId}
      ${entity === undefined ? sql`` : sql`AND entity = ${entity}`}
    ORDER BY created_at, id`;
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
 * The definition, locked FOR UPDATE, after the records holding a value of it: a record write
 * locks its record and then the definitions (FOR SHARE), so taking them in the same order here
 * keeps a delete or an options change from deadlocking with it.
 */
async function lockDefinition(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<DefinitionRow> {
  const known = await DEFINITIONS.find(tx, organizationId, id);
  const table = known ? VALUE_TABLES[known.entity] : undefined;
  if (table) {
    await tx`
      SELECT id FROM ${tx(table)}
      WHERE organization_id = ${organizationId} AND custom_fields ? ${id}
      ORDER BY id FOR UPDATE`;
  }
  return await DEFINITIONS.lock(tx, organizationId, id);
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
    const row = await lockDefinition(tx, organizationId, id);
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

/**
 * Deletes a definition. Records holding a value of it keep it from going (409 naming how many)
 * unless `force`, which removes those values with it.
 */
export async function deleteDefinition(
  sql: Sql,
  organizationId: string,
  id: string,
  force: boolean,
): Promise<CustomFieldDefinition> {
  return await transaction(sql, async (tx) => {
    const row = await lockDefinition(tx, organizationId, id);
    const table = VALUE_TABLES[row.entity];
    if (table) {
      const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
        SELECT count(*)::int AS count FROM ${tx(table)}
        WHERE organization_id = ${organizationId} AND custom_fields ? ${id}`;
      if (count > 0 && !force) {
        throw conflict(
          `Custom field "${row.name}" has values on ${count} ${row.entity} record` +
            `${count === 1 ? "" : "s"}; delete with force=true to remove them with it`,
        );
      }
      if (count > 0) {
        await tx`
          UPDATE ${tx(table)} SET custom_fields = custom_fields - ${id}, updated_at = now()
          WHERE organization_id = ${organizationId} AND custom_fields ? ${id}`;
      }
    }
    await tx`DELETE FROM custom_field_definitions WHERE id = ${id}`;
    const definition = DEFINITIONS.read(row);
    await announce(tx, organizationId, "custom_field.deleted", [definition]);
    return definition;
  });
}

/**
 * Deleting a custom field definition. Records holding a value of it keep it from going (409)
 * unless `force`, which removes those values first; each record that loses one is announced by
 * its own `….updated`, carrying the record as it now is, exactly as any other change to it.
 *
 * A forced delete removes the values in batches of at most `BULK_MAX_ROWS` records, each batch
 * its own transaction (its values gone and its events written, or neither), and deletes the
 * definition last, in a transaction that holds it locked: no record can take a value of it then,
 * and any value written while the batches ran is removed (and announced) there. So the
 * definition never goes while a record holds its value, and every record that lost one says so.
 * Each batch holds only its own records' locks, briefly, where one transaction would hold every
 * record's until the last was announced (100,000 of them, all that time). What that costs is
 * that the delete is not all-or-nothing: stopped halfway (the process or the database gone), it
 * leaves the definition with fewer records holding it, each of those changes announced, and the
 * same call again finishes it.
 */
import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import type { CustomFieldDefinition, CustomFieldEntity } from "@printshop/shared/contracts/crm";
import type { EventType } from "@printshop/shared/contracts/platform";
import { conflict } from "@printshop/shared/http";
import { announce } from "./answers.ts";
import {
  type DefinitionRow,
  DEFINITIONS,
  lockDefinition,
  type ValueHolder,
} from "./custom_fields.ts";
import { CUSTOMER_VALUES } from "./customers.ts";
import { TASK_VALUES } from "./tasks.ts";
import { VENDOR_VALUES } from "./vendors.ts";

/** What removing a definition's values does with one kind of record. */
interface Remover {
  readonly table: string;
  /** Removes the value from those of `ids` that still hold it, each announced; answers how many. */
  remove(
    tx: TransactionSql,
    organizationId: string,
    fieldId: string,
    ids: readonly string[],
  ): Promise<number>;
}

function remover<Row extends { id: string }, T extends EventType>(
  holder: ValueHolder<Row, T>,
): Remover {
  const { name, select } = holder.table;
  return {
    table: name,
    async remove(tx, organizationId, fieldId, ids) {
      // Locked in id order, as a bulk change locks its records, so the two queue rather than
      // deadlock. A record whose value went meanwhile no longer matches: no change, no event.
      // Planned for its values each time (unsafe() sends an unnamed statement): prepared, it
      // went over to the generic plan after five batches, which takes the organisation for an
      // average one and read all of a large one for each batch (1.5 s a batch instead of 35 ms
      // for a shop of 100,000 customers among many).
      const rows = await tx.unsafe<Row[]>(
        `UPDATE "${name}" SET custom_fields = custom_fields - $3::text, updated_at = now()
         WHERE id IN (
           SELECT id FROM "${name}"
           WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND custom_fields ? $3::text
           ORDER BY id FOR UPDATE)
         RETURNING ${select}`,
        [organizationId, [...ids], fieldId],
      );
      const ordered = [...rows].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      await announce(tx, organizationId, holder.updated, await holder.answer(tx, ordered));
      return rows.length;
    },
  };
}

/** The records that carry values, by the entity their definitions name. */
const REMOVERS: Partial<Record<CustomFieldEntity, Remover>> = {
  customer: remover(CUSTOMER_VALUES),
  vendor: remover(VENDOR_VALUES),
  task: remover(TASK_VALUES),
};

/**
 * How many times a forced delete goes back for values written while it ran before it gives up
 * (409): each round removes what it found, so only writers as fast as the removal keep it going.
 */
const ROUNDS = 5;

/** The ids of the organisation's records holding a value of the field, in id order. */
async function holding(
  tx: Queryable,
  table: string,
  organizationId: string,
  fieldId: string,
): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM ${tx(table)}
    WHERE organization_id = ${organizationId} AND custom_fields ? ${fieldId} ORDER BY id`;
  return rows.map((row) => row.id);
}

/** How many of the organisation's records hold a value of the field. */
async function holdingCount(
  tx: Queryable,
  table: string,
  organizationId: string,
  fieldId: string,
): Promise<number> {
  const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM ${tx(table)}
    WHERE organization_id = ${organizationId} AND custom_fields ? ${fieldId}`;
  return count;
}

/** `ids` in slices of at most `size`. */
function slices(ids: readonly string[], size: number): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}

export async function deleteDefinition(
  sql: Sql,
  organizationId: string,
  id: string,
  force: boolean,
  batchSize: number,
): Promise<CustomFieldDefinition> {
  for (let round = 1;; round++) {
    if (force) {
      const { entity } = await transaction(sql, (tx) => DEFINITIONS.get(tx, organizationId, id));
      const values = REMOVERS[entity];
      if (values) {
        const ids = await transaction(sql, (tx) => holding(tx, values.table, organizationId, id));
        for (const batch of slices(ids, batchSize)) {
          await transaction(sql, (tx) => values.remove(tx, organizationId, id, batch));
        }
      }
    }
    const deleted = await transaction(
      sql,
      (tx) => deleteLocked(tx, organizationId, id, force, batchSize),
    );
    if (deleted) return deleted;
    if (round === ROUNDS) {
      throw conflict(
        `Custom field "${id}" kept being given values while it was deleted; stop writing them ` +
          `and try again`,
      );
    }
  }
}

/**
 * The definition's own transaction. Without `force` it writes no record, so the definition's
 * lock alone holds them (a record given a value takes the definition FOR SHARE first): any
 * record holding a value then is 409, and none can take one after. With `force`, locked after
 * the records that held its value when it was locked (none can take one after), those go here,
 * in batches, and then the definition. Answers null, changing nothing, when a record was given
 * a value between the two locks: removing it now would lock a record after the definition, the
 * other way round from a record write, so the caller removes it first and comes back.
 */
async function deleteLocked(
  tx: TransactionSql,
  organizationId: string,
  id: string,
  force: boolean,
  batchSize: number,
): Promise<CustomFieldDefinition | null> {
  if (!force) {
    const row = await DEFINITIONS.lock(tx, organizationId, id);
    const values = REMOVERS[row.entity];
    const count = values ? await holdingCount(tx, values.table, organizationId, id) : 0;
    if (count > 0) throw inUse(row, count);
    return await drop(tx, organizationId, row);
  }
  const { row, holders } = await lockDefinition(tx, organizationId, id);
  const values = REMOVERS[row.entity];
  if (values) {
    const left = await holding(tx, values.table, organizationId, id);
    const locked = new Set(holders);
    if (!left.every((holder) => locked.has(holder))) return null;
    for (const batch of slices(left, batchSize)) {
      await values.remove(tx, organizationId, id, batch);
    }
  }
  return await drop(tx, organizationId, row);
}

/** Deletes the definition, locked and holding no value now, with its event. */
async function drop(
  tx: TransactionSql,
  organizationId: string,
  row: DefinitionRow,
): Promise<CustomFieldDefinition> {
  await tx`DELETE FROM custom_field_definitions WHERE id = ${row.id}`;
  const definition = DEFINITIONS.read(row);
  await announce(tx, organizationId, "custom_field.deleted", [definition]);
  return definition;
}

function inUse(row: DefinitionRow, count: number): Error {
  return conflict(
    `Custom field "${row.name}" has values on ${count} ${row.entity} record` +
      `${count === 1 ? "" : "s"}; delete with force=true to remove them with it`,
  );
}

/**
 * Keys an organisation holds once per kind of row: a catalogue item's style code, the
 * `externalId` an integrator's sync gives a quote, customer, vendor, item or variant. The unique
 * index is the rule (no check-then-write race); a write it refuses is answered 409 naming the row
 * that holds the key, in the message and in `details`, so a retried sync finds what it already
 * made instead of making it again.
 */
import postgres from "postgres";
import { ApiError } from "../http/errors.ts";
import { type Queryable, read } from "./mod.ts";

/** One held key: where it lives and how the API names it. */
export interface HeldKey {
  /** The table and its column (`customers`, `external_id`). */
  table: string;
  column: string;
  /** The unique index on (organization_id, column) that holds the rule. */
  index: string;
  /** The body field that carries it (`externalId`). */
  field: string;
  /** What a row of the table is called in messages (`customer`). */
  noun: string;
}

/**
 * A table's external id as a held key: column `external_id`, field `externalId`, under the
 * unique index `<table>_external_id_key` its migration creates.
 */
export function externalIdKey(table: { name: string; noun: string }): HeldKey {
  return {
    table: table.name,
    column: "external_id",
    index: `${table.name}_external_id_key`,
    field: "externalId",
    noun: table.noun.toLowerCase(),
  };
}

/** Whether `error` is the unique index of `key` refusing a write. */
export function violates(error: unknown, key: HeldKey): boolean {
  return error instanceof postgres.PostgresError && error.code === "23505" &&
    error.constraint_name === key.index;
}

/** The 409 of a key another row holds (`holder` its id, when it could be read). */
export function keyTaken(key: HeldKey, value: string, holder: string | null): ApiError {
  const by = holder === null ? "" : ` by ${key.noun} ${holder}`;
  return new ApiError("conflict", `${key.field} "${value}" is already taken${by}`, [
    { path: key.field, message: `Already taken${by}` },
  ]);
}

/**
 * Runs `write`; when a unique index of one of `keys` refuses it, answers that key's 409 instead.
 * `values` are the keys' values as the write sets them (undefined or null: not written). The
 * failed transaction is gone by then: the holder is looked up in a read of its own, under the
 * organisation (on the bare pool it would see no rows and name none).
 */
export async function holdingKeys<T>(
  sql: Queryable,
  organizationId: string,
  keys: readonly { key: HeldKey; value: string | null | undefined }[],
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const hit = keys.find(({ key, value }) =>
      value !== undefined && value !== null && violates(error, key)
    );
    if (hit === undefined) throw error;
    const { key } = hit;
    const value = hit.value!;
    const [holder] = await read(sql, (q) =>
      q<{ id: string }[]>`
        SELECT id FROM ${q(key.table)}
        WHERE organization_id = ${organizationId} AND ${q(key.column)} = ${value}`);
    throw keyTaken(key, value, holder?.id ?? null);
  }
}

/**
 * Many rows inserted by one statement from one JSON parameter (`jsonb_to_recordset`): a bulk
 * create's variants, a change's ledger rows. What it writes and how it reads the records come
 * from the table's declaration, so neither is a second column list to keep in step.
 */

/** The part of a declared table (shared/db/table.ts) a recordset insert reads. */
interface Declared<F extends string> {
  readonly columnNames: { readonly [K in F]: string };
  recordTypes(fields: readonly F[], more?: readonly string[]): string;
}

export interface RecordsetInsert {
  /** The columns written, for `INSERT INTO t (…) SELECT … FROM jsonb_to_recordset(…)`. */
  columns: string;
  /** `name type, …` of the `AS r(…)` the records are read with. */
  types: string;
}

/**
 * The table's columns but `except` (the times the database sets), and `more` the resource does
 * not show, each `name type` (`organization_id uuid`).
 */
export function recordsetInsert<F extends string>(
  table: Declared<F>,
  except: readonly F[],
  more: readonly string[],
): RecordsetInsert {
  const fields = (Object.keys(table.columnNames) as F[]).filter((f) => !except.includes(f));
  const columns = fields.map((field) => table.columnNames[field])
    .concat(more.map((typed) => typed.split(" ")[0]!));
  return { columns: columns.join(", "), types: table.recordTypes(fields, more) };
}

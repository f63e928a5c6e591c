/**
 * A table declared once: its columns with their types, whether it belongs to an organisation,
 * and which of its fields lists may filter and sort on. From the one declaration a store gets its
 * column list, its row type, the mapping of a row to the resource the API answers with, the
 * field table of its lists (shared/db/fields.ts), and its find- and lock-by-id statements; no
 * store writes a column list, a row interface or a per-field mapper of its own.
 *
 * Names follow the API's: a field `deliveryDate` is the column `delivery_date` unless the column
 * says otherwise. Only names are mapped; a `json`/`jsonb` value is handed over as it is (a stored
 * document, a webhook payload, markup bands, the evidence a digest covers), never rewritten.
 */
import { type Fragment, type Queryable, read } from "./mod.ts";
import { columnOf, type Field, type FieldSpec, type FieldTable, fieldTable } from "./fields.ts";
import type { FilterFieldType } from "./filters.ts";
import { notFound } from "../http/errors.ts";

/**
 * How lists may use a column: filter on it, sort by it (fields.ts), with these options; `type`
 * when lists compare it otherwise than its own (an enum compared as text).
 */
type ListedOptions =
  & Partial<Pick<FieldSpec, "type">>
  & Omit<FieldSpec, "type" | "nullable" | "values">;

/**
 * One column: what the driver gives (`Db`), what the resource holds (`Api`), the column's name
 * when it is not the field's in snake_case (`Name`), and whether lists may use it (`Listed`).
 */
export interface Column<
  Db,
  Api,
  Name extends string | null = null,
  Listed extends boolean = false,
> {
  /** The column's name when not the conventional one. */
  readonly name: Name;
  /** The filter type of a listed column. */
  readonly type: FilterFieldType | null;
  /** The values an enum column takes. */
  readonly values: readonly string[] | null;
  /** Its SQL type, for statements that name it (`jsonb_to_recordset`'s record). */
  readonly sqlType: string;
  readonly isNullable: boolean;
  /** Set when lists may filter and sort on it. */
  readonly listed: ListedOptions | null;
  /** The resource's value from the driver's. */
  read(value: Db): Api;
  /** The same column, NULL allowed (read as null). */
  nullable(): Column<Db | null, Api | null, Name, Listed>;
  /** The same column, under another name. */
  named<N extends string>(name: N): Column<Db, Api, N, Listed>;
  /** The same column, one lists may filter and sort on (fields.ts's options). */
  filterable(options?: ListedOptions): Column<Db, Api, Name, true>;
}

type ColumnFields<D, A, N extends string | null> = Pick<
  Column<D, A, N, boolean>,
  "name" | "type" | "values" | "sqlType" | "isNullable" | "listed" | "read"
>;

function make<D, A, N extends string | null, L extends boolean>(
  fields: ColumnFields<D, A, N>,
): Column<D, A, N, L> {
  return {
    ...fields,
    nullable: () =>
      make<D | null, A | null, N, L>({
        ...fields,
        isNullable: true,
        read: (value) => value === null ? null : fields.read(value),
      }),
    named: <M extends string>(name: M) => make<D, A, M, L>({ ...fields, name }),
    filterable: (options: ListedOptions = {}) =>
      make<D, A, N, true>({ ...fields, listed: options }),
  };
}

function column<Db, Api>(
  type: FilterFieldType | null,
  sqlType: string,
  read: (value: Db) => Api,
): Column<Db, Api> {
  return make<Db, Api, null, false>({
    name: null,
    type,
    sqlType,
    values: null,
    isNullable: false,
    listed: null,
    read,
  });
}

const same = <T>(value: T): T => value;

/** Column builders, by what the column holds. */
export const col = {
  uuid: (): Column<string, string> => column("uuid", "uuid", same),
  text: (): Column<string, string> => column("text", "text", same),
  /** Text that takes one of `values`; lists filter it as an enum. */
  enum: <const V extends string>(values: readonly V[]): Column<V, V> =>
    make<V, V, null, false>({
      name: null,
      type: "enum",
      sqlType: "text",
      values,
      isNullable: false,
      listed: null,
      read: same,
    }),
  integer: (): Column<number, number> => column("integer", "integer", same),
  /** `numeric`, which the driver gives as exact text, as a JSON number. */
  number: (): Column<string, number> => column("number", "numeric", Number),
  /** `numeric` kept as its exact text (money a later sum must not round). */
  decimalText: (): Column<string, string> => column("number", "numeric", same),
  boolean: (): Column<boolean, boolean> => column("boolean", "boolean", same),
  /** `timestamptz` as an ISO 8601 string. */
  timestamp: (): Column<Date, string> =>
    column("datetime", "timestamptz", (value) => value.toISOString()),
  /** `date`, which the pool reads as `YYYY-MM-DD` text (shared/db/mod.ts). */
  date: (): Column<string, string> => column("date", "date", same),
  /** `text[]`. */
  textArray: (): Column<string[], string[]> => column(null, "text[]", same),
  /** `json`/`jsonb`, handed over as stored. */
  json: <T>(): Column<T, T> => column<T, T>(null, "jsonb", same),
  /** `text[]` whose items take one of `values`. */
  enumArray: <const V extends string>(_values: readonly V[]): Column<V[], V[]> =>
    column<V[], V[]>(null, "text[]", same),
  /** `bigint`, which the driver gives as text, as a JSON number (sizes, counts). */
  bigint: (): Column<string, number> => column("integer", "bigint", Number),
  /**
   * A field of the resource the table does not hold (children, a joined name, a total): read
   * from no column, but placed where it is declared, so the resource keeps its key order; its
   * value is given to `read`.
   */
  computed: <T>(): Computed<T> => ({ computed: true }) as Computed<T>,
};

/** A computed field (`col.computed`): its type only. */
export interface Computed<T> {
  readonly computed: true;
  /** Never set: it carries the type. */
  readonly value?: T;
}

// deno-lint-ignore no-explicit-any
type AnyColumn = Column<any, any, string | null, boolean>;
/** What a table's `columns` may hold. */
export type Columns = Record<string, AnyColumn | Computed<unknown>>;
/** Any declared table, for helpers that work on several. */
export type AnyTable = Table<Columns>;

/** The fields of `C` that are columns, and those that are computed. */
type StoredOf<C extends Columns> = {
  [K in keyof C & string]: C[K] extends AnyColumn ? K : never;
}[keyof C & string];
type ComputedOf<C extends Columns> = {
  [K in keyof C & string]: C[K] extends Computed<unknown> ? K : never;
}[keyof C & string];
type ComputedValue<F> = F extends Computed<infer T> ? T : never;
/** The values of a table's computed fields, for `read`. */
export type ComputedFields<C extends Columns> = { [K in ComputedOf<C>]: ComputedValue<C[K]> };

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

type ColumnName<K extends string, C> = C extends Column<infer _D, infer _A, infer N, boolean>
  ? N extends string ? N : SnakeCase<K>
  : never;
type DbOf<C> = C extends Column<infer D, infer _A, infer _N, boolean> ? D : never;
type ApiOf<C> = C extends Column<infer _D, infer A, infer _N, boolean> ? A
  : C extends Computed<infer T> ? T
  : never;

/** A row as the driver gives it: each column under its own name. */
export type RowOf<T> = T extends Table<infer C>
  ? { [K in StoredOf<C> as ColumnName<K, C[K]>]: DbOf<C[K]> }
  : never;

/** The resource the table's fields make, computed ones included, as the API gives them. */
export type ResourceOf<T> = T extends Table<infer C> ? { [K in keyof C]: ApiOf<C[K]> }
  : never;

/** The fields lists of the table may filter and sort on. */
type ListedOf<C extends Columns> = {
  [K in keyof C & string]: C[K] extends Column<infer _D, infer _A, infer _N, true> ? K : never;
}[keyof C & string];

export interface TableSpec<C extends Columns> {
  /** The table's name in its service's schema. */
  name: string;
  /** Whether each row belongs to an organisation (`organization_id`). */
  tenant: boolean;
  /** The fields the resource takes from the table, in the order the resource shows them. */
  columns: C;
  /** Where an `id` column's value names another table's row: column → table. */
  references?: Readonly<Record<string, string>>;
  /** The noun of a 404 (`Customer "…" was not found`). */
  noun: string;
}

export interface Table<C extends Columns> extends Readonly<Omit<TableSpec<C>, "references">> {
  readonly references: Readonly<Record<string, string>>;
  /** `id, company_name, …`: the columns the resource is read from, in order. */
  readonly select: string;
  /** The same, each qualified by `alias` (`c.id, c.company_name, …`). */
  selectAs(alias: string): string;
  /** Each column field's column name. */
  readonly columnNames: { readonly [K in StoredOf<C>]: string };
  /**
   * The field table of the table's lists: its filterable fields (fields.ts), qualified by
   * `alias`, and `extra` fields a list computes (a condition over several columns).
   */
  fields<const E extends Record<string, FieldSpec> = Record<never, FieldSpec>>(
    alias?: string,
    extra?: E,
  ): FieldTable<ListedOf<C> | (keyof E & string)>;
  /**
   * `name type, …` of `jsonb_to_recordset(…) AS r(…)`, for `fields` (the resource's, by field
   * name) and `more` columns the resource does not show (`organization_id uuid`).
   */
  recordTypes(fields: readonly StoredOf<C>[], more?: readonly string[]): string;
  /**
   * What a set-based insert names: the columns of every column field but `except`, then `more`
   * (columns the resource does not show, `name type`), as a column list and the matching
   * `jsonb_to_recordset` record.
   */
  insertable(
    except: readonly StoredOf<C>[],
    more?: readonly string[],
  ): { columns: string; types: string };
  /**
   * A row as the resource holds it, with the values of its computed fields placed where they
   * are declared.
   */
  read(row: RowOf<Table<C>>, computed?: ComputedFields<C>): ResourceOf<Table<C>>;
  /** The row with `id` in the organisation, or null. */
  find(tx: Queryable, organizationId: string, id: string): Promise<RowOf<Table<C>> | null>;
  /** The row with `id` in the organisation; 404 when it has none. */
  get(tx: Queryable, organizationId: string, id: string): Promise<RowOf<Table<C>>>;
  /** The row, locked for the rest of the transaction; 404 when the organisation has none. */
  lock(tx: Queryable, organizationId: string, id: string): Promise<RowOf<Table<C>>>;
  /** `organization_id = …`, the condition every tenant statement carries (qualified by alias). */
  ofOrganization(organizationId: string, alias?: string): (tx: Queryable) => Fragment;
}

/** What a declaration says of its table's tenancy, as the tenancy checks read it. */
export interface DeclaredTable {
  name: string;
  tenant: boolean;
  references: Readonly<Record<string, string>>;
}

const DECLARED: DeclaredTable[] = [];

/**
 * Every table declared so far in this process (each store module declares its own when it is
 * imported): e2e/tenancy_test.ts holds them to what the database has, so a declaration that says
 * `tenant` of a table without a forced policy, or the reverse, fails there.
 */
export function declaredTables(): readonly DeclaredTable[] {
  return DECLARED;
}

const isComputed = (field: AnyColumn | Computed<unknown>): field is Computed<unknown> =>
  "computed" in field;

export function defineTable<const C extends Columns>(spec: TableSpec<C>): Table<C> {
  DECLARED.push({ name: spec.name, tenant: spec.tenant, references: spec.references ?? {} });
  const fields = Object.entries(spec.columns);
  const entries = fields.filter((entry): entry is [string, AnyColumn] => !isComputed(entry[1]));
  const names = Object.fromEntries(
    entries.map(([field, c]) => [field, c.name ?? columnOf(field)]),
  ) as { [K in StoredOf<C>]: string };
  const nameOf = (field: string): string => names[field as StoredOf<C>];
  const columnList = (alias?: string): string =>
    entries.map(([field]) => (alias ? `${alias}.` : "") + nameOf(field)).join(", ");
  const select = columnList();
  const byId = (lock: boolean) => (sql: Queryable, organizationId: string, id: string) =>
    read(sql, async (tx) => {
      const tenant = spec.tenant ? tx`AND organization_id = ${organizationId}` : tx``;
      const [row] = await tx<RowOf<Table<C>>[]>`
        SELECT ${tx.unsafe(select)} FROM ${tx(spec.name)}
        WHERE id = ${id} ${tenant} ${lock ? tx`FOR UPDATE` : tx``}`;
      return row ?? null;
    });
  const find = byId(false);
  const lockRow = byId(true);
  return {
    ...spec,
    references: spec.references ?? {},
    select,
    selectAs: columnList,
    columnNames: names,
    fields<const E extends Record<string, FieldSpec>>(alias?: string, extra?: E) {
      const listed = entries.filter(([, c]) => c.listed !== null && c.type !== null);
      const computed = extra ? fieldTable(extra, alias ? { alias } : {}) : {};
      return Object.fromEntries([
        ...listed.map(([field, c]) => {
          const name = `${alias ? `${alias}.` : ""}${nameOf(field)}`;
          const column = c.listed!.column ?? name;
          const type = c.listed!.type ?? c.type!;
          const built: Field = {
            column,
            type,
            nullable: c.isNullable,
            sortColumn: c.listed!.sortColumn ?? column,
            sortType: c.listed!.sortType ?? type,
            ...(c.values && type === "enum" ? { values: c.values } : {}),
          };
          return [field, built] as const;
        }),
        ...Object.entries(computed),
      ]) as FieldTable<ListedOf<C> | (keyof E & string)>;
    },
    recordTypes(chosen, more = []) {
      const typed = chosen.map((field) =>
        `${nameOf(field)} ${(spec.columns[field] as AnyColumn).sqlType}`
      );
      return [...typed, ...more].join(", ");
    },
    insertable(except, more = []) {
      const chosen = entries.map(([field]) => field as StoredOf<C>)
        .filter((field) => !except.includes(field));
      const columns = [...chosen.map(nameOf), ...more.map((m) => m.split(" ")[0]!)].join(", ");
      return { columns, types: this.recordTypes(chosen, more) };
    },
    read(row, computed) {
      const source = row as Record<string, unknown>;
      const given = (computed ?? {}) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [field, c] of fields) {
        out[field] = isComputed(c) ? given[field] : c.read(source[nameOf(field)]);
      }
      return out as ResourceOf<Table<C>>;
    },
    find,
    async get(tx, organizationId, id) {
      const row = await find(tx, organizationId, id);
      if (!row) throw notFound(spec.noun, id);
      return row;
    },
    async lock(tx, organizationId, id) {
      const row = await lockRow(tx, organizationId, id);
      if (!row) throw notFound(spec.noun, id);
      return row;
    },
    ofOrganization(organizationId, alias) {
      const column = alias ? `${alias}.organization_id` : "organization_id";
      return (tx) => tx`${tx(column)} = ${organizationId}`;
    },
  };
}

/**
 * What a sort by an enum orders on: its position in `values` (the order the contract gives,
 * `standard` < … < `wholesale`), not the alphabet. For a column's `sortColumn`.
 */
export function enumRank(values: readonly string[], column: string): string {
  return `array_position(ARRAY[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(",")}]` +
    `::text[], ${column})`;
}

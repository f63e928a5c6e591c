/**
 * One field table per resource: the API's camelCase field names, the column behind each and its
 * type. Filters, sorts, list searches and PATCH updates all read it; a column is named by
 * convention (`deliveryDate` → `delivery_date`), so the table spells out only the exceptions.
 */
import type { FilterField, FilterFieldType } from "./filters.ts";

export interface FieldSpec {
  type: FilterFieldType;
  /** The column or SQL expression; `snake_case` of the field name unless given. */
  column?: string;
  /** The allowed values of an `enum` field. */
  values?: readonly string[];
  /** Whether the column can hold NULL: sorted last, either way. */
  nullable?: boolean;
  /** What a sort by this field orders on, when not the column (a number behind a reference). */
  sortColumn?: string;
  /** The type of `sortColumn`, when it differs from the field's own. */
  sortType?: FilterFieldType;
}

export interface Field extends FilterField {
  nullable: boolean;
  sortColumn: string;
  sortType: FilterFieldType;
}

export type FieldTable<K extends string = string> = { readonly [F in K]: Field };

/** `deliveryDate` → `delivery_date`: the naming convention between the API and its tables. */
export function columnOf(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * A resource's field table. `alias` qualifies the conventional columns (`d.created_at`) when the
 * resource's lists join another table.
 */
export function fieldTable<const T extends Record<string, FieldSpec>>(
  specs: T,
  options: { alias?: string } = {},
): FieldTable<keyof T & string> {
  const prefix = options.alias ? `${options.alias}.` : "";
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => {
      const column = spec.column ?? `${prefix}${columnOf(name)}`;
      const field: Field = {
        column,
        type: spec.type,
        nullable: spec.nullable ?? false,
        sortColumn: spec.sortColumn ?? column,
        sortType: spec.sortType ?? spec.type,
        ...(spec.values ? { values: spec.values } : {}),
      };
      return [name, field];
    }),
  ) as FieldTable<keyof T & string>;
}

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/**
 * `true` when every field of Body (but those in Except) has a column of its conventional name in
 * Row; otherwise the columns that are missing. A store states
 * `const _columns: EveryFieldHasAColumn<UpdateLineBody, LineRow, "sortOrder"> = true;` so a field
 * that would be written to no column fails to compile, not at run time.
 */
export type EveryFieldHasAColumn<Body, Row, Except extends keyof Body = never> =
  [Exclude<SnakeCase<Exclude<keyof Body, Except> & string>, keyof Row>] extends [never] ? true
    : { missingColumns: Exclude<SnakeCase<Exclude<keyof Body, Except> & string>, keyof Row> };

/**
 * The columns a PATCH sets: each given field (an `undefined` value is not given) under its
 * column by the naming convention, leaving out the fields the caller handles itself.
 */
export function changedColumns<T extends object>(
  input: T,
  except: readonly (keyof T)[] = [],
): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value !== undefined && !except.includes(key as keyof T)) changes[columnOf(key)] = value;
  }
  return changes;
}

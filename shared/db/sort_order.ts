import type { RowRef } from "../ordering.ts";
import { placeAt } from "../ordering.ts";
import type { Fragment, Queryable } from "./mod.ts";

/** A table whose rows take part in a sequence, and the kind its rows are known by. */
export interface SequenceMember<K extends string = string> {
  kind: K;
  /** Trusted table name; its rows have `id` and `sort_order`. */
  table: string;
}

/**
 * The `sort_order` sequence 1..n that rows of one or more tables share within a parent (the
 * lines and decorations of a quote group, say). Every change computes the new order in memory
 * and writes 1..n back, so the sequence never has a gap or a duplicate, whatever happened
 * before. Rows with equal sort_order (never written so) keep the members' order, then the id's.
 */
export class SortSequence<const K extends string = string> {
  constructor(
    /** Trusted column of each member table that names the parent. */
    private readonly parent: string,
    private readonly members: readonly SequenceMember<K>[],
  ) {}

  /** The parent's rows of every member table, as (id, kind, member, sort_order). */
  private rows(sql: Queryable, parentId: string): Fragment {
    const parts = this.members.map((member, index) =>
      sql`SELECT id, ${member.kind}::text AS kind, ${index}::int AS member, sort_order
          FROM ${sql.unsafe(member.table)} WHERE ${sql.unsafe(this.parent)} = ${parentId}`
    );
    return parts.reduce((acc, part) => sql`${acc} UNION ALL ${part}`);
  }

  /** The parent's rows in order. */
  async read(sql: Queryable, parentId: string): Promise<RowRef<K>[]> {
    const rows = await sql<{ id: string; kind: K }[]>`
      SELECT id, kind FROM (${this.rows(sql, parentId)}) rows ORDER BY sort_order, member, id`;
    return rows.map((r) => ({ id: r.id, kind: r.kind }));
  }

  /**
   * The sort_order a new row is INSERTed with, as SQL. Appended (no position), it is the next
   * number, taken in the INSERT itself, so the sequence stays 1..n without a read or a
   * renumbering (the caller holds the lock that orders changes to the parent's rows). It is one
   * past the highest number, so an appended row is last even behind a gap left by a write from
   * outside this class; the next place or compact closes it. At a position, the row starts past
   * the end and `placeIfGiven` moves it.
   */
  numberForInsert(sql: Queryable, parentId: string, position: number | undefined): Fragment {
    if (position !== undefined) return sql`${PAST_THE_END}::int`;
    return sql`(SELECT coalesce(max(sort_order), 0) + 1 FROM (${this.rows(sql, parentId)}) rows)`;
  }

  /**
   * Puts a row at `position` when one is given (a row INSERTed with `numberForInsert` at a
   * position, or one being moved); without one the row stays where it is.
   */
  async placeIfGiven(
    sql: Queryable,
    parentId: string,
    row: RowRef<K>,
    position: number | undefined,
  ): Promise<void> {
    if (position !== undefined) await this.place(sql, parentId, row, position);
  }

  /**
   * Writes sort_order 1..n in the given order to the parent's rows, touching only rows whose
   * number changes (a row of another parent is never touched, whatever `ordered` holds).
   */
  async write(sql: Queryable, parentId: string, ordered: readonly RowRef<K>[]): Promise<void> {
    await Promise.all(this.members.map((member) => {
      const ids: string[] = [];
      const numbers: number[] = [];
      ordered.forEach((r, i) => {
        if (r.kind !== member.kind) return;
        ids.push(r.id);
        numbers.push(i + 1);
      });
      if (ids.length === 0) return Promise.resolve();
      return sql`
        UPDATE ${sql.unsafe(member.table)} AS t SET sort_order = u.sort_order
        FROM unnest(${ids}::uuid[], ${numbers}::int[]) AS u(id, sort_order)
        WHERE t.id = u.id AND t.${sql.unsafe(this.parent)} = ${parentId}
          AND t.sort_order <> u.sort_order`;
    }));
  }

  /**
   * Puts `row` (already inserted, or being moved) at `position` (1-based, clamped; appended when
   * undefined) and renumbers the parent's rows.
   */
  async place(
    sql: Queryable,
    parentId: string,
    row: RowRef<K>,
    position: number | undefined,
  ): Promise<void> {
    await this.write(sql, parentId, placeAt(await this.read(sql, parentId), row, position));
  }

  /**
   * Closes the gap a deleted row left: in one statement, numbering the rows 1..n in their order
   * and writing, in each member table, only the numbers that change.
   */
  async compact(sql: Queryable, parentId: string): Promise<void> {
    const updates = this.members.map((member, index) =>
      sql`${sql.unsafe(`renumbered_${index}`)} AS (
        UPDATE ${sql.unsafe(member.table)} AS t SET sort_order = o.n FROM ordered o
        WHERE o.member = ${index} AND t.id = o.id AND t.${sql.unsafe(this.parent)} = ${parentId}
          AND t.sort_order <> o.n
      )`
    );
    await sql`
      WITH ordered AS (
        SELECT id, member, row_number() OVER (ORDER BY sort_order, member, id)::int AS n
        FROM (${this.rows(sql, parentId)}) rows
      ), ${updates.reduce((acc, update) => sql`${acc}, ${update}`)}
      SELECT 1`;
  }
}

/**
 * Where a row INSERTed at a position starts, before `place` moves it and renumbers its parent's
 * rows 1..n: behind every row it is placed among.
 */
export const PAST_THE_END = 100_000;

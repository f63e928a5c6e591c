import type { RowRef } from "../ordering.ts";
import { placeAt } from "../ordering.ts";
import type { Queryable } from "./mod.ts";

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

  /** The parent's rows in order. */
  async read(sql: Queryable, parentId: string): Promise<RowRef<K>[]> {
    const parts = this.members.map((member, index) =>
      sql`SELECT id, ${member.kind}::text AS kind, ${index}::int AS member, sort_order
          FROM ${sql.unsafe(member.table)} WHERE ${sql.unsafe(this.parent)} = ${parentId}`
    );
    const union = parts.reduce((acc, part) => sql`${acc} UNION ALL ${part}`);
    const rows = await sql<{ id: string; kind: K }[]>`
      SELECT id, kind FROM (${union}) rows ORDER BY sort_order, member, id`;
    return rows.map((r) => ({ id: r.id, kind: r.kind }));
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

  /** Closes the gap a deleted row left. */
  async compact(sql: Queryable, parentId: string): Promise<void> {
    await this.write(sql, parentId, await this.read(sql, parentId));
  }
}

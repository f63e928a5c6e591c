/**
 * Bulk operations over any resource with a list: resolve a `BulkTarget` (shared/contracts/bulk.ts)
 * to the organisation's rows when the request runs, locked for the rest of the caller's
 * transaction, then decide each row with a pure rule and apply the changes in one go, answering
 * the `BulkResult`. The filter branch selects exactly the rows the resource's list would show for
 * the same filters and search (the same spec and conditions as shared/db/pages.ts).
 */
import type postgres from "postgres";
import type { BulkOutcome, BulkResult, BulkTarget } from "../contracts/bulk.ts";
import { validationError } from "../http/errors.ts";
import { CUSTOM_PLANS, type Queryable, type Sql, transaction, type TransactionSql } from "./mod.ts";
import { type ListSpec, rowConditions, searches } from "./pages.ts";

/** The reason of an id the organisation does not have. */
export const NOT_FOUND_REASON = "not_found";

export interface ResolveOptions {
  /** What every targeted row meets (its organisation), ANDed with the target's conditions. */
  where: (sql: Queryable) => postgres.Fragment;
  target: BulkTarget;
  /** The live limit, `config.BULK_MAX_ROWS`. */
  bulkMaxRows: number;
  /** Where the target sits in the request body, for error details; `target` unless told. */
  path?: string;
  /**
   * The table alias `FOR UPDATE` locks when the spec's FROM joins others (only the resource's
   * own rows are locked); all of FROM's tables otherwise.
   */
  lockOf?: string;
}

/** A target resolved: the rows found (locked), and the ids asked for that were not. */
export interface ResolvedTarget<Row> {
  rows: Row[];
  /** Ids of the ids branch that are not the organisation's rows, in the order given. */
  missing: string[];
  /** The order outcomes are reported in: the ids as given, or the matching rows' order. */
  order: string[];
}

/**
 * Resolves a target inside the caller's transaction, locking the rows (`FOR UPDATE`, in id
 * order, so two bulk calls over overlapping rows queue rather than deadlock). The ids branch
 * finds the organisation's rows among the ids (repeats counted once); the filter branch takes
 * every row matching the filters and search now, minus `excludeIds`. More rows than
 * `bulkMaxRows` is a 400 naming the limit, before anything is changed.
 */
export async function resolveBulkTarget<Row extends { id: string }>(
  tx: TransactionSql,
  spec: ListSpec,
  { where, target, bulkMaxRows, path = "target", lockOf }: ResolveOptions,
): Promise<ResolvedTarget<Row>> {
  const idColumn = tx.unsafe(spec.id ?? "id");
  const lock = tx.unsafe(lockOf ? `FOR UPDATE OF ${lockOf}` : "FOR UPDATE");
  if (target.ids !== undefined) {
    const ids = [...new Set(target.ids.map((id) => id.toLowerCase()))];
    if (ids.length > bulkMaxRows) {
      throw validationError(
        `${path}.ids`,
        `At most ${bulkMaxRows} rows in one call (BULK_MAX_ROWS); got ${ids.length} ids`,
      );
    }
    const rows = await tx<Row[]>`
      SELECT ${tx.unsafe(spec.select)} FROM ${tx.unsafe(spec.from)}
      WHERE ${where(tx)} AND ${idColumn} = ANY(${ids}::uuid[])
      ORDER BY ${idColumn} ${lock}`;
    const found = new Set(rows.map((row) => row.id));
    return { rows: [...rows], missing: ids.filter((id) => !found.has(id)), order: ids };
  }
  // As a search list's read does (pages.ts, searches): planned for this organisation and term.
  if (searches(spec, target.search)) await tx.unsafe(CUSTOM_PLANS);
  let condition = rowConditions(tx, spec, where(tx), {
    search: target.search,
    filters: target.filters ?? [],
    filtersPath: `${path}.filters`,
  });
  if (target.excludeIds !== undefined && target.excludeIds.length > 0) {
    const excluded = target.excludeIds.map((id) => id.toLowerCase());
    condition = tx`${condition} AND NOT (${idColumn} = ANY(${excluded}::uuid[]))`;
  }
  // One row past the limit is enough to know the target is too large.
  const rows = await tx<Row[]>`
    SELECT ${tx.unsafe(spec.select)} FROM ${tx.unsafe(spec.from)} WHERE ${condition}
    ORDER BY ${idColumn} LIMIT ${bulkMaxRows + 1} ${lock}`;
  if (rows.length > bulkMaxRows) {
    throw validationError(
      path,
      `Matches more than ${bulkMaxRows} rows, the most one call may change (BULK_MAX_ROWS); ` +
        "narrow the filters or split the call",
    );
  }
  return { rows: [...rows], missing: [], order: rows.map((row) => row.id) };
}

/** What a pure rule decides for one row. */
export type BulkDecision<C> =
  | { status: "ok"; change: C }
  | { status: "unchanged" }
  | { status: "refused"; reason: string };

/** A row the rule accepted, with the change it decided. */
export interface BulkChange<Row, C> {
  row: Row;
  change: C;
}

/**
 * Decides every resolved row, applies the accepted changes in one call (the store's SQL and its
 * events, in the same transaction), and builds the result: one outcome per targeted row in the
 * target's order, ids not found as `failed` with reason `not_found`.
 */
export async function applyBulk<Row extends { id: string }, C>(
  resolved: ResolvedTarget<Row>,
  decide: (row: Row) => BulkDecision<C>,
  apply: (changes: BulkChange<Row, C>[]) => Promise<void>,
): Promise<BulkResult> {
  const byId = new Map<string, BulkOutcome>();
  const changes: BulkChange<Row, C>[] = [];
  for (const row of resolved.rows) {
    const decision = decide(row);
    if (decision.status === "ok") {
      changes.push({ row, change: decision.change });
      byId.set(row.id, { id: row.id, status: "ok" });
    } else if (decision.status === "refused") {
      byId.set(row.id, { id: row.id, status: "refused", reason: decision.reason });
    } else {
      byId.set(row.id, { id: row.id, status: "unchanged" });
    }
  }
  for (const id of resolved.missing) {
    byId.set(id, { id, status: "failed", reason: NOT_FOUND_REASON });
  }
  if (changes.length > 0) await apply(changes);
  const outcomes = resolved.order.map((id) => byId.get(id)!);
  const count = (status: BulkOutcome["status"]): number =>
    outcomes.filter((outcome) => outcome.status === status).length;
  return {
    requested: outcomes.length,
    affected: count("ok"),
    refused: count("refused"),
    failed: count("failed"),
    outcomes,
  };
}

/** A whole bulk call in one transaction: resolve the target, decide, apply, answer. */
export async function runBulk<Row extends { id: string }, C>(
  sql: Sql,
  spec: ListSpec,
  options: ResolveOptions,
  decide: (row: Row) => BulkDecision<C>,
  apply: (tx: TransactionSql, changes: BulkChange<Row, C>[]) => Promise<void>,
): Promise<BulkResult> {
  return await transaction(sql, async (tx) => {
    const resolved = await resolveBulkTarget<Row>(tx, spec, options);
    return await applyBulk(resolved, decide, (changes) => apply(tx, changes));
  });
}

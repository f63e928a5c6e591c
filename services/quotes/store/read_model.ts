import type { Queryable } from "@printshop/shared/db";
import type { QuoteGroup } from "@printshop/shared/contracts/quotes";
import { type GroupRow, GROUPS, toGroup } from "./rows.ts";
import {
  type DecorationRow,
  DECORATIONS,
  type LineRow,
  LINES,
  toDecoration,
  toLine,
  type VariantRow,
  VARIANTS,
} from "./item_rows.ts";

function bySortOrder(
  a: { sort_order: number; id: string },
  b: { sort_order: number; id: string },
): number {
  return a.sort_order - b.sort_order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

/**
 * The groups of many quotes with their lines, variants and decorations, in four statements
 * whatever the number of quotes (no query per row). Keyed by quote id; each collection sorted by
 * sortOrder then id. Cost fields only when `costs`.
 *
 * The JS read model: it answers the writes of groups (groupWithItems). Quotes themselves are read
 * as JSON built by PostgreSQL (quote_json.ts); read_model_parity_test.ts checks that JSON parses
 * to what toQuote over this gives.
 */
export async function groupsOfQuotes(
  sql: Queryable,
  quoteIds: string[],
  costs: boolean,
): Promise<Map<string, QuoteGroup[]>> {
  if (quoteIds.length === 0) return new Map();
  const [groups, lines, variants, decorations] = await Promise.all([
    // Unordered: sorting a few rows per parent here is cheaper than sorting them all in SQL.
    sql<GroupRow[]>`SELECT ${sql.unsafe(GROUPS.select)} FROM quote_groups
      WHERE quote_id = ANY(${quoteIds}::uuid[])`,
    sql<LineRow[]>`SELECT ${sql.unsafe(LINES.select)} FROM quote_lines
      WHERE quote_id = ANY(${quoteIds}::uuid[])`,
    sql<VariantRow[]>`SELECT ${sql.unsafe(VARIANTS.select)} FROM quote_variants
      WHERE quote_id = ANY(${quoteIds}::uuid[])`,
    sql<DecorationRow[]>`SELECT ${sql.unsafe(DECORATIONS.select)} FROM quote_decorations
      WHERE quote_id = ANY(${quoteIds}::uuid[])`,
  ]);
  for (
    const rows of [groups, lines, variants, decorations] as { sort_order: number; id: string }[][]
  ) {
    rows.sort(bySortOrder);
  }
  const variantsByLine = groupBy(variants, (v) => v.quote_line_id);
  const linesByGroup = groupBy(lines, (l) => l.quote_group_id);
  const decorationsByGroup = groupBy(decorations, (d) => d.quote_group_id);
  const result = new Map<string, QuoteGroup[]>();
  for (const g of groups) {
    const group = toGroup(
      g,
      (linesByGroup.get(g.id) ?? []).map((l) => toLine(l, variantsByLine.get(l.id) ?? [], costs)),
      (decorationsByGroup.get(g.id) ?? []).map((d) => toDecoration(d, costs)),
    );
    const list = result.get(g.quote_id);
    if (list) list.push(group);
    else result.set(g.quote_id, [group]);
  }
  return result;
}

/** One group with its rows, or null. */
export async function groupWithItems(
  sql: Queryable,
  quoteId: string,
  groupId: string,
  costs: boolean,
): Promise<QuoteGroup | null> {
  const groups = (await groupsOfQuotes(sql, [quoteId], costs)).get(quoteId) ?? [];
  return groups.find((g) => g.id === groupId) ?? null;
}

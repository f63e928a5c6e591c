import { SortSequence } from "@printshop/shared/db/sort-order";

/** A quote's groups: 1..n of their own. */
export const QUOTE_GROUPS = new SortSequence("quote_id", [{
  kind: "group",
  table: "quote_groups",
}]);

/**
 * A group's lines and decorations: ONE shared sequence 1..n across both tables (spec 2.3; docs
 * "Quote pricing rules", Row order); at equal numbers, lines come first.
 */
export const GROUP_ROWS = new SortSequence("quote_group_id", [
  { kind: "line", table: "quote_lines" },
  { kind: "decoration", table: "quote_decorations" },
]);

/** A line's variants: 1..n of their own. */
export const LINE_VARIANTS = new SortSequence("quote_line_id", [
  { kind: "variant", table: "quote_variants" },
]);

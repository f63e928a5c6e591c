import { z } from "zod";
import { described } from "./common.ts";

/**
 * The filter language of lists and bulk targets: `{ field, op, value?, values?, from?, to? }`.
 * Fields come from a per-resource allow-list with a type; values are always bound parameters.
 */
export const FILTER_OPS = [
  "eq",
  "ne",
  "in",
  "nin",
  "contains",
  "startsWith",
  "gt",
  "gte",
  "lt",
  "lte",
  "between",
  "isNull",
  "isNotNull",
] as const;
export type FilterOp = typeof FILTER_OPS[number];

const Scalar = z.union([z.string().max(500), z.number(), z.boolean()]);

export const Filter = z.strictObject(described({
  field: z.string().max(100),
  op: z.enum(FILTER_OPS, { error: `Must be one of ${FILTER_OPS.join(", ")}` }),
  value: Scalar.optional(),
  values: z.array(Scalar).max(1000, "At most 1000 values").optional(),
  from: Scalar.optional(),
  to: Scalar.optional(),
}, {
  field: "A field of the resource's list (its sortable and filterable fields)",
  op: "eq, ne, in, nin, contains (case-insensitive), startsWith, gt, gte, lt, lte, between, " +
    "isNull, isNotNull; the field's type decides which apply",
  value: "The operand of eq, ne, contains, startsWith, gt, gte, lt, lte",
  values: "The operands of in and nin",
  from: "The lower bound of between",
  to: "The upper bound of between",
})).meta({ id: "Filter", description: "One condition in the filter language" });
export type Filter = z.infer<typeof Filter>;

/** Most filters one list query or bulk target may give. */
export const FILTERS_MAX = 50;

export const Filters = z.array(Filter).max(FILTERS_MAX, `At most ${FILTERS_MAX} filters`);

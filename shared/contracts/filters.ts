import { z } from "zod";

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

export const Filter = z.strictObject({
  field: z.string().max(100),
  op: z.enum(FILTER_OPS, { error: `Must be one of ${FILTER_OPS.join(", ")}` }),
  value: Scalar.optional(),
  values: z.array(Scalar).max(1000, "At most 1000 values").optional(),
  from: Scalar.optional(),
  to: Scalar.optional(),
});
export type Filter = z.infer<typeof Filter>;

export const Filters = z.array(Filter).max(50, "At most 50 filters");

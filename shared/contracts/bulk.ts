/**
 * Bulk operations, the same for every resource (conventions, "Bulk operations"; spec 2.11): a
 * `target` that is either hand-picked ids or "everything matching" in the list's filter language,
 * resolved when the request runs, and a result with one outcome per row. Declared once here; a
 * resource's bulk body is `bulkBody(name, { …its own fields })`.
 */
import { z } from "zod";
import { described, setExamples, Uuid } from "./common.ts";
import { Filters } from "./filters.ts";
import { SearchParam } from "./lists.ts";

/**
 * The most ids the schema lets through: the highest BULK_MAX_ROWS the configuration accepts
 * (shared/config.ts). The live limit is checked when the target is resolved, naming it.
 */
export const BULK_ROWS_CEILING = 100_000;

const IdList = z.array(Uuid).max(BULK_ROWS_CEILING, `At most ${BULK_ROWS_CEILING} ids`);

/** The filter language (filters.ts), as a bulk body gives it: JSON rather than a query string. */
const TargetFilters = Filters;

const FILTER_BRANCH = ["filters", "search", "excludeIds"] as const;

export const BulkTarget = z.strictObject(described({
  ids: IdList.min(1, "Give at least one id").optional(),
  filters: TargetFilters.optional(),
  search: SearchParam.optional(),
  excludeIds: IdList.optional(),
}, {
  ids: "Branch 1: the rows to act on, hand-picked; ids this organisation does not have are " +
    "reported as `failed` with reason `not_found`",
  filters: "Branch 2: every row matching these filters (the list's filter language), " +
    "evaluated when the request runs",
  search: "Branch 2: every row the list's `search` would find with this text",
  excludeIds: "Branch 2: rows to leave out of select-all-matching",
})).superRefine((target, ctx) => {
  const filterBranch = FILTER_BRANCH.filter((name) => target[name] !== undefined);
  if (target.ids !== undefined && filterBranch.length > 0) {
    ctx.addIssue({
      code: "custom",
      path: [filterBranch[0]!],
      message: `Give either ids or ${FILTER_BRANCH.join("/")}, not both`,
    });
  } else if (target.ids === undefined && filterBranch.length === 0) {
    ctx.addIssue({
      code: "custom",
      path: [],
      message: `Give ids, or ${FILTER_BRANCH.join("/")} to act on every matching row ` +
        "(`filters: []` matches every row)",
    });
  }
}).meta({
  id: "BulkTarget",
  description: "The rows a bulk operation acts on: exactly one branch, `ids` or any of " +
    "`filters`, `search`, `excludeIds`; both or neither is a validation error. At most " +
    "`bulkMaxRows` (GET /v1/reference/limits) rows.",
});
export type BulkTarget = z.infer<typeof BulkTarget>;
setExamples(
  BulkTarget,
  { filters: [{ field: "status", op: "eq", value: "draft" }], search: "polo" },
  { ids: ["0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9012", "0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9013"] },
);

/** What became of one row, in the order the rows were targeted. */
export const BULK_OUTCOME_STATUSES = ["ok", "unchanged", "refused", "failed"] as const;
export type BulkOutcomeStatus = typeof BULK_OUTCOME_STATUSES[number];

export const BulkOutcome = z.object(described({
  id: Uuid,
  status: z.enum(BULK_OUTCOME_STATUSES),
  reason: z.string().optional(),
}, {
  id: "The row's id",
  status: "`ok` changed, `unchanged` already as asked, `refused` declined by a business rule " +
    "(not an error), `failed` could not be acted on",
  reason: "Why the row was refused or failed (`not_found` for an id the organisation does not " +
    "have)",
})).meta({ id: "BulkOutcome", description: "What a bulk operation did with one row" });
export type BulkOutcome = z.infer<typeof BulkOutcome>;

export const BulkResult = z.object(described({
  requested: z.int().min(0),
  affected: z.int().min(0),
  refused: z.int().min(0),
  failed: z.int().min(0),
  outcomes: z.array(BulkOutcome),
}, {
  requested: "How many rows the target resolved to when the request ran (ids given count " +
    "whether found or not)",
  affected: "Rows changed (`ok`)",
  refused: "Rows a business rule declined; not a failure",
  failed: "Rows that could not be acted on, counted apart from refused",
  outcomes: "One per row, in the order the rows were targeted",
})).meta({ id: "BulkResult", description: "What a bulk operation did, row by row" });
export type BulkResult = z.infer<typeof BulkResult>;
setExamples(BulkResult, {
  requested: 3,
  affected: 1,
  refused: 1,
  failed: 1,
  outcomes: [
    { id: "0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9012", status: "ok" },
    {
      id: "0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9013",
      status: "refused",
      reason: "An archived pre-built item cannot move back to draft",
    },
    { id: "0193a2c4-1b2d-7e3f-8a4b-5c6d7e8f9014", status: "failed", reason: "not_found" },
  ],
});

/**
 * A bulk operation's body: `target`, then the operation's own fields (already described),
 * listed in the document as `Bulk<name>Body`.
 */
export function bulkBody<const F extends Record<string, z.ZodType>>(
  name: string,
  fields: F,
  description: string,
): z.ZodObject<{ target: typeof BulkTarget } & F, z.core.$strict> {
  return z.strictObject({ target: BulkTarget, ...fields }).meta({
    id: `Bulk${name}Body`,
    description,
  }) as unknown as z.ZodObject<{ target: typeof BulkTarget } & F, z.core.$strict>;
}

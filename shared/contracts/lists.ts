/**
 * The query string of a list, built the same way for every resource: paging, sorting over the
 * resource's sortable fields, the filter language, an optional text search, and named
 * shorthands for common filters. Parameter order is the order the document lists them in.
 */
import { z } from "zod";
import { BooleanParam, described, NonNegativeIntParam, SortDirection } from "./common.ts";

/** `filters`: a URL-encoded JSON array in the filter language (see filters.ts). */
export const FiltersParam = z.string().max(20_000, "Must be at most 20000 characters");

export const SearchParam = z.string().max(200, "Must be at most 200 characters");

/** A cursor list's page size: at least 1, or a client looping on nextCursor would never end. */
export const PositiveIntParam = z.string().regex(/^[1-9]\d{0,8}$/, "Must be a whole number ≥ 1")
  .transform(Number);

/** An opaque cursor handed out as `nextCursor`. */
export const CursorParam = z.string().min(1, "Must not be empty").max(
  2000,
  "Must be at most 2000 characters",
);

type Fields = readonly [string, ...string[]];

export interface ListQueryOptions<F extends Fields, N extends z.ZodRawShape, S extends boolean> {
  /** The fields `sortField` may name. */
  sortFields: F;
  /** Shorthand filters (`status=sent`), listed after the paging parameters. */
  named?: N;
  /** Whether `search` is offered. */
  search?: S;
}

type SortShape<F extends Fields> = {
  sortField: z.ZodOptional<z.ZodEnum<{ [K in F[number]]: K }>>;
  sortDirection: z.ZodOptional<typeof SortDirection>;
  filters: z.ZodOptional<typeof FiltersParam>;
};

type SearchShape<S extends boolean> = S extends true ? { search: z.ZodOptional<typeof SearchParam> }
  : Record<never, never>;

/** A list's query: its paging parameters, then its named filters, search and order. */
type ListQuery<P, F extends Fields, N extends z.ZodRawShape, S extends boolean> = z.ZodObject<
  P & N & SearchShape<S> & SortShape<F>,
  z.core.$strict
>;

type OffsetPaging = {
  limit: z.ZodOptional<typeof NonNegativeIntParam>;
  offset: z.ZodOptional<typeof NonNegativeIntParam>;
  count: z.ZodOptional<typeof BooleanParam>;
};
type CursorPaging = {
  limit: z.ZodOptional<typeof PositiveIntParam>;
  cursor: z.ZodOptional<typeof CursorParam>;
};

export type OffsetListQuery<F extends Fields, N extends z.ZodRawShape, S extends boolean> =
  ListQuery<OffsetPaging, F, N, S>;
export type CursorListQuery<F extends Fields, N extends z.ZodRawShape, S extends boolean> =
  ListQuery<CursorPaging, F, N, S>;

/** Paging first, then the named filters, search and the order, in the document's order. */
function listQuery(
  paging: z.ZodRawShape,
  options: ListQueryOptions<Fields, z.ZodRawShape, boolean>,
): z.ZodObject {
  return z.strictObject({
    ...paging,
    ...options.named,
    ...described({
      ...(options.search ? { search: SearchParam.optional() } : {}),
      sortField: z.enum(options.sortFields, {
        error: `Must be one of ${options.sortFields.join(", ")}`,
      }).optional(),
      sortDirection: SortDirection.optional(),
      filters: FiltersParam.optional(),
    }, {
      search: "Text to look for (case-insensitive) in the list's searchable fields",
      sortField: "Field to order by; the id breaks ties, so the order is stable",
      sortDirection: "`asc` or `desc`; ascending when omitted",
      filters: "URL-encoded JSON array of filters `{ field, op, value?, values?, from?, to? }`; " +
        "ops: eq, ne, in, nin, contains, startsWith, gt, gte, lt, lte, between, isNull, isNotNull",
    }),
  });
}

/**
 * An offset list: `limit` (capped at PAGE_SIZE_MAX), `offset`, `count`, then the rest. Counting
 * reads every match, so a counted page costs more as the data grows; `count=false` is the page
 * alone, the same cost at any size (README "Lists").
 */
export function offsetListQuery<
  const F extends Fields,
  const N extends z.ZodRawShape = Record<never, never>,
  const S extends boolean = false,
>(options: ListQueryOptions<F, N, S>): OffsetListQuery<F, N, S> {
  const paging = described({
    limit: NonNegativeIntParam.optional(),
    offset: NonNegativeIntParam.optional(),
    count: BooleanParam.optional(),
  }, {
    limit: "Page size, a whole number ≥ 0; capped at `pageSizeMax` (GET /v1/reference/limits), " +
      "which is also the size when omitted",
    offset: "How many matching rows to skip, a whole number ≥ 0; 0 when omitted",
    count: "`false` skips counting the matches (`totalCount` is then null; `hasMore` still " +
      "says whether more follow). Counting reads every match, so it costs more as the list " +
      "grows; a page without it costs the same at any size. `true` when omitted",
  });
  return listQuery(paging, options) as unknown as OffsetListQuery<F, N, S>;
}

/** A cursor list: `limit` (at least 1, capped at PAGE_SIZE_MAX), `cursor`, then the rest. */
export function cursorListQuery<
  const F extends Fields,
  const N extends z.ZodRawShape = Record<never, never>,
  const S extends boolean = false,
>(options: ListQueryOptions<F, N, S>): CursorListQuery<F, N, S> {
  const paging = described({
    limit: PositiveIntParam.optional(),
    cursor: CursorParam.optional(),
  }, {
    limit: "Page size, a whole number ≥ 1; capped at `pageSizeMax` (GET /v1/reference/limits)",
    cursor: "The `nextCursor` of the previous page; omit for the first page",
  });
  return listQuery(paging, options) as unknown as CursorListQuery<F, N, S>;
}

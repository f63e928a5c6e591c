/**
 * The lists the scale bench measures, read from the contracts rather than written down: every
 * GET in `ROUTES` whose query pages (`limit` with `offset`, `cursor` or `after`), with its
 * named filters (every query parameter that is not paging, order, `filters` or `search`), its
 * `sortField` values and whether it offers `search`. A filter or sort a contract gains is
 * measured by the next run without a change here.
 */
import { z } from "zod";
import { ROUTES } from "@printshop/shared/routes";
import type { RouteDef } from "@printshop/shared/routes";

/** How a list pages: offset and totalCount, a signed cursor, or an event feed's `after`. */
export type Paging = "offset" | "cursor" | "feed";

/** A named filter of a list and the values it takes. */
export interface NamedFilter {
  name: string;
  /** `enum` lists its values; `boolean` is the "true"/"false" parameter; else free text. */
  kind: "enum" | "boolean" | "string";
  values: readonly string[];
}

export interface ListRoute {
  operationId: string;
  path: string;
  paging: Paging;
  /** `{name}` parameters of the path (a nested list's parent). */
  pathParams: string[];
  sortFields: string[];
  named: NamedFilter[];
  search: boolean;
}

const PAGING = new Set(["limit", "offset", "count", "cursor", "after"]);
const SHARED = new Set(["sortField", "sortDirection", "filters", "search"]);

/** The schema under `.optional()` and a transform (`BooleanParam`, the paging integers). */
function inner(schema: z.ZodType): z.ZodType {
  let s: z.ZodType = schema;
  for (;;) {
    if (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else return s;
  }
}

function namedFilter(name: string, schema: z.ZodType): NamedFilter {
  const s = inner(schema);
  if (s instanceof z.ZodEnum) {
    const values = s.options.map(String);
    const boolean = values.length === 2 && values.includes("true") && values.includes("false");
    return { name, kind: boolean ? "boolean" : "enum", values };
  }
  return { name, kind: "string", values: [] };
}

/** Every paged GET list of `routes`, in the contracts' order. */
export function listRoutes(routes: readonly RouteDef[] = ROUTES): ListRoute[] {
  const lists: ListRoute[] = [];
  for (const route of routes) {
    if (route.method !== "GET" || !route.query) continue;
    const shape = route.query.shape as Record<string, z.ZodType>;
    const names = Object.keys(shape);
    if (!names.includes("limit")) continue;
    const paging: Paging | null = names.includes("offset")
      ? "offset"
      : names.includes("cursor")
      ? "cursor"
      : names.includes("after")
      ? "feed"
      : null;
    if (paging === null) continue;
    const sortField = shape.sortField ? inner(shape.sortField) : undefined;
    lists.push({
      operationId: route.operationId,
      path: route.path,
      paging,
      pathParams: [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
      sortFields: sortField instanceof z.ZodEnum ? sortField.options.map(String) : [],
      named: names.filter((n) => !PAGING.has(n) && !SHARED.has(n))
        .map((n) => namedFilter(n, shape[n]!)),
      search: names.includes("search"),
    });
  }
  return lists;
}

/** GETs of one row under a list (`/v1/quotes/{quoteId}` under `/v1/quotes`), by list path. */
export function getByIdRoutes(
  lists: readonly ListRoute[],
  routes: readonly RouteDef[] = ROUTES,
): { path: string; listPath: string; param: string }[] {
  const listPaths = new Set(lists.map((l) => l.path));
  const found: { path: string; listPath: string; param: string }[] = [];
  for (const route of routes) {
    if (route.method !== "GET" || route.query) continue;
    const match = route.path.match(/^(.*)\/\{(\w+)\}$/);
    if (match && listPaths.has(match[1]!)) {
      found.push({ path: route.path, listPath: match[1]!, param: match[2]! });
    }
  }
  return found;
}

/** Operations whose path ends in `/facets`: what a list can be filtered by, aggregated. */
export function facetRoutes(routes: readonly RouteDef[] = ROUTES): string[] {
  return routes.filter((r) => r.method === "GET" && r.path.endsWith("/facets")).map((r) => r.path);
}

/** GETs that take a query but do not page (a short list by its owner), reported as not measured. */
export function unpagedLists(routes: readonly RouteDef[] = ROUTES): string[] {
  return routes.filter((r) =>
    r.method === "GET" && r.query && !Object.keys(r.query.shape).includes("limit")
  ).map((r) => r.path);
}

import { ApiError } from "./http/errors.ts";
import { COSTS_READ } from "./scopes.ts";

/** The fields that carry the shop's costs. */
export const COST_FIELDS = ["buyPrice", "extraCost", "setupCost", "unitCost"] as const;

/**
 * The fields that give a cost back from a sell price: a row's markup (sell ⊖ markup = cost) and
 * a markup group's bands. They follow costs.read exactly as the costs do.
 */
export const MARGIN_FIELDS = [
  "markupType",
  "markupValue",
  "setupMarkupType",
  "setupMarkupValue",
  "bands",
] as const;

/** Every field only a costs.read caller sees or sets, at any depth of a body or payload. */
export const COSTS_READ_FIELDS = [...COST_FIELDS, ...MARGIN_FIELDS] as const;
export type CostsReadField = typeof COSTS_READ_FIELDS[number];

const RESTRICTED: ReadonlySet<string> = new Set(COSTS_READ_FIELDS);

/** Whether a key is a cost or margin field. */
export function isCostsReadField(key: string): key is CostsReadField {
  return RESTRICTED.has(key);
}

/** Whether a caller with these scopes may see cost fields. */
export function canSeeCosts(scopes: readonly string[]): boolean {
  return scopes.includes(COSTS_READ);
}

/** The paths of cost and margin keys in a body, at any depth (`decorations.0.unitCost`). */
function costPaths(value: unknown, prefix: string, found: string[]): void {
  // Recursion is safe: this runs on the validated body, whose depth its schema bounds.
  if (Array.isArray(value)) {
    value.forEach((item, index) => costPaths(item, `${prefix}${index}.`, found));
  } else if (value !== null && typeof value === "object") {
    for (const [key, field] of Object.entries(value)) {
      if (isCostsReadField(key)) found.push(`${prefix}${key}`);
      else costPaths(field, `${prefix}${key}.`, found);
    }
  }
}

/**
 * A write that sets a cost or margin field, at any depth of its body, needs costs.read: 403
 * insufficient_scope otherwise.
 */
export function assertMayWriteCosts(scopes: readonly string[], body: unknown): void {
  if (canSeeCosts(scopes)) return;
  const given: string[] = [];
  costPaths(body, "", given);
  if (given.length > 0) {
    throw new ApiError(
      "insufficient_scope",
      `Setting ${given.map((f) => `"${f}"`).join(", ")} needs scope "${COSTS_READ}"`,
    );
  }
}

/** The `field` of every filter object (`{ field, op, … }`) at any depth of a value. */
function filteredFields(value: unknown, found: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) filteredFields(item, found);
  } else if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.field === "string" && typeof record.op === "string") found.push(record.field);
    for (const field of Object.values(record)) filteredFields(field, found);
  }
}

/**
 * Filtering or sorting on a cost or margin field tells its value as surely as showing it (narrow
 * `buyPrice gt x` until one row is left), so it needs costs.read too: the list's `filters` and
 * `sortField`, and the filters of a bulk target in a body. 403 insufficient_scope otherwise.
 */
export function assertMayFilterCosts(
  scopes: readonly string[],
  query: Record<string, unknown>,
  body: unknown,
): void {
  if (canSeeCosts(scopes)) return;
  const named: string[] = [];
  if (typeof query.sortField === "string") named.push(query.sortField);
  if (typeof query.filters === "string") {
    try {
      filteredFields(JSON.parse(query.filters), named);
    } catch {
      // Not JSON: the list refuses it with a 400 of its own.
    }
  }
  filteredFields(body, named);
  const costly = [...new Set(named.filter(isCostsReadField))];
  if (costly.length > 0) {
    throw new ApiError(
      "insufficient_scope",
      `Filtering or sorting on ${
        costly.map((f) => `"${f}"`).join(", ")
      } needs scope "${COSTS_READ}"`,
    );
  }
}

/** A value as a caller sees it: without cost and margin keys at any depth unless `costs`. */
export function visibleTo<T extends object>(value: T, costs: boolean): T {
  return costs ? value : withoutCosts(value) as T;
}

/**
 * A copy of JSON data without cost and margin fields at any depth: events are recorded with
 * them, and a subscriber or log reader without costs.read must not learn them.
 */
export function withoutCosts(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(withoutCosts);
  if (data !== null && typeof data === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      if (!isCostsReadField(key)) copy[key] = withoutCosts(value);
    }
    return copy;
  }
  return data;
}

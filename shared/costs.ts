import { ApiError } from "./http/errors.ts";
import { COSTS_READ } from "./scopes.ts";

/** The fields that carry the shop's costs; only a costs.read caller sees or sets them. */
export const COST_FIELDS = ["buyPrice", "extraCost", "setupCost", "unitCost"] as const;

/** Whether a caller with these scopes may see cost fields. */
export function canSeeCosts(scopes: readonly string[]): boolean {
  return scopes.includes(COSTS_READ);
}

/** A write that sets a cost field needs costs.read: 403 insufficient_scope otherwise. */
export function assertMayWriteCosts(scopes: readonly string[], body: unknown): void {
  if (canSeeCosts(scopes) || body === null || typeof body !== "object") return;
  const given = COST_FIELDS.filter((field) => field in body);
  if (given.length > 0) {
    throw new ApiError(
      "insufficient_scope",
      `Setting ${given.map((f) => `"${f}"`).join(", ")} needs scope "${COSTS_READ}"`,
    );
  }
}

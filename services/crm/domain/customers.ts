/**
 * Customer rules, as pure functions: what each bulk change does to one customer (`ok` with the
 * new value, `unchanged`, or `refused` with the reason a business rule gives).
 */
import type { BulkDecision } from "@printshop/shared/db/bulk-target";
import { type CustomerTier, TAGS_MAX } from "@printshop/shared/contracts/crm";

export interface CustomerState {
  tier: CustomerTier;
  tags: readonly string[];
  isArchived: boolean;
}

/** Tags compare without regard to case: they are kept lower-cased, each once, in order. */
export function normalTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()))];
}

/** A new tier; an archived customer's tier is frozen until it is brought back. */
export function decideTier(
  customer: CustomerState,
  tier: CustomerTier,
): BulkDecision<CustomerTier> {
  if (customer.tier === tier) return { status: "unchanged" };
  if (customer.isArchived) {
    return {
      status: "refused",
      reason: "An archived customer's tier cannot change; bring the customer back first",
    };
  }
  return { status: "ok", change: tier };
}

/** Tags added and removed; the customer's order is kept and new tags come after. */
export function decideTags(
  customer: CustomerState,
  change: { add?: readonly string[]; remove?: readonly string[] },
): BulkDecision<string[]> {
  const removed = new Set(normalTags(change.remove ?? []));
  const next = normalTags([...customer.tags, ...(change.add ?? [])]).filter((tag) =>
    !removed.has(tag)
  );
  const same = next.length === customer.tags.length &&
    next.every((tag, i) => tag === customer.tags[i]);
  if (same) return { status: "unchanged" };
  if (next.length > TAGS_MAX) {
    return {
      status: "refused",
      reason: `A customer holds at most ${TAGS_MAX} tags; this would give it ${next.length}`,
    };
  }
  return { status: "ok", change: next };
}

/** Archived or brought back. */
export function decideArchived(customer: CustomerState, archived: boolean): BulkDecision<boolean> {
  return customer.isArchived === archived
    ? { status: "unchanged" }
    : { status: "ok", change: archived };
}

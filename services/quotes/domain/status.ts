import type { QuoteStatus } from "@printshop/shared/contracts/quotes";

/**
 * The quote lifecycle. A quote is priced and edited in `draft`; `sent` freezes it while the
 * client decides (`approved`, `declined`) or time runs out (`expired`); reopening moves it back to
 * `draft`, where `group` rows re-band. Approved quotes can be reopened too (a change order).
 */
export const TRANSITIONS: Readonly<Record<QuoteStatus, readonly QuoteStatus[]>> = {
  draft: ["sent"],
  sent: ["approved", "declined", "expired", "draft"],
  approved: ["draft"],
  declined: ["draft"],
  expired: ["draft"],
};

export function canMove(from: QuoteStatus, to: QuoteStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Only a draft's rows and prices may change. */
export function isEditable(status: QuoteStatus): boolean {
  return status === "draft";
}

/** Moving back to an editable status is a reopen: `group` rows re-band. */
export function isReopen(from: QuoteStatus, to: QuoteStatus): boolean {
  return !isEditable(from) && isEditable(to);
}

import type { PrebuiltItemStatus } from "@printshop/shared/contracts/catalogue";

/**
 * The pre-built item lifecycle. A `draft` is put together; `active` is offered to quote from and
 * can go back to `draft` for rework; `archived` is retired and can only be offered again
 * (`active`): sending it back to `draft` would put a retired item among the ones being built.
 */
export const PREBUILT_TRANSITIONS: Readonly<
  Record<PrebuiltItemStatus, readonly PrebuiltItemStatus[]>
> = {
  draft: ["active", "archived"],
  active: ["draft", "archived"],
  archived: ["active"],
};

export function canMovePrebuilt(from: PrebuiltItemStatus, to: PrebuiltItemStatus): boolean {
  return PREBUILT_TRANSITIONS[from].includes(to);
}

/** What a status change does to one item: nothing, a move, or a refusal saying why. */
export type StatusMove =
  | { kind: "unchanged" }
  | { kind: "move"; to: PrebuiltItemStatus }
  | { kind: "refused"; reason: string };

export function statusMove(from: PrebuiltItemStatus, to: PrebuiltItemStatus): StatusMove {
  if (from === to) return { kind: "unchanged" };
  if (canMovePrebuilt(from, to)) return { kind: "move", to };
  const allowed = PREBUILT_TRANSITIONS[from].join(" or ");
  const article = /^[aeiou]/.test(from) ? "An" : "A";
  return {
    kind: "refused",
    reason: `${article} ${from} pre-built item cannot move to ${to}; it can move to ${allowed}`,
  };
}

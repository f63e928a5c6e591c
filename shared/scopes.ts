const AREAS_WITH_READ_WRITE = [
  "quotes",
  "garments",
  "customers",
  "vendors",
  "tasks",
  "customfields",
  "prebuiltitems",
  "webhooks",
] as const;

/** Every scope a credential can hold; anything else is refused when a key is issued. */
export const ALL_SCOPES = [
  ...AREAS_WITH_READ_WRITE.flatMap((area) => [`${area}.read`, `${area}.write`] as const),
  "proofs.read",
  "proofs.write",
  "proofs.approve",
  "costs.read",
] as const;

export type Scope = typeof ALL_SCOPES[number];

const KNOWN = new Set<string>(ALL_SCOPES);

export function isScope(value: string): value is Scope {
  return KNOWN.has(value);
}

/** Scope that lets a credential see cost fields (buyPrice, extraCost, setupCost, unitCost). */
export const COSTS_READ: Scope = "costs.read";

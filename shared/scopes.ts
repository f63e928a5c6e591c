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

/**
 * The first scope an operation needs that the caller lacks (its `scope`, then each of
 * `alsoRequires`), or null when it holds them all. The gateway and the services both ask this.
 */
export function missingScope(
  operation: { scope: Scope | null; alsoRequires?: readonly Scope[] },
  held: readonly string[],
): Scope | null {
  const needed = [
    ...(operation.scope === null ? [] : [operation.scope]),
    ...(operation.alsoRequires ?? []),
  ];
  return needed.find((scope) => !held.includes(scope)) ?? null;
}

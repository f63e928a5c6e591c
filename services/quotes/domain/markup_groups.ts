/**
 * The rules a markup group is held to as a whole, beyond its schema (pricing.md, Markup groups).
 * Pure: a candidate in, every problem out as a 400 detail.
 */
import type { ErrorDetail } from "@printshop/shared/http";
import type { DecorationMethod, MarkupLane, MarkupType } from "@printshop/shared/contracts/quotes";
import { type BandProblem, type MarkupBand, toDecimal, validateBands } from "./markup.ts";

/** A band as the API gives it (JSON numbers). */
export interface BandJson {
  from: number;
  markupType: MarkupType;
  markupValue: number;
}

/** A markup group as the pricing rules need it. */
export interface PricingMarkupGroup {
  id: string;
  lane: MarkupLane;
  decorationMethod: string | null;
  isDefault: boolean;
  appliesToSetupCost: boolean;
  bands: MarkupBand[];
}

/**
 * The group a `group`-source lane bands through: the one it names, else the organisation's
 * default for the lane (for decorations, a default for the decoration's method first; for setup,
 * one that applies to setup cost).
 */
export function groupForLane(
  groups: readonly PricingMarkupGroup[],
  lane: MarkupLane,
  named: string | null,
  method: string | null = null,
): PricingMarkupGroup | null {
  if (named) return groups.find((g) => g.id === named && g.lane === lane) ?? null;
  const defaults = groups.filter((g) =>
    g.lane === lane && g.isDefault && (lane !== "setup" || g.appliesToSetupCost)
  );
  return defaults.find((g) => method !== null && g.decorationMethod === method) ??
    defaults.find((g) => g.decorationMethod === null) ?? defaults[0] ?? null;
}

/** The fields of a markup group its rules are checked on, after defaults and a PATCH merge. */
export interface MarkupGroupCandidate {
  lane: MarkupLane;
  decorationMethod: DecorationMethod | null;
  appliesToSetupCost: boolean;
  bands: readonly BandJson[];
}

/** `validateBands` problems as 400 details, one per offending band field (`bands.1.from`). */
function bandDetails(bands: readonly BandJson[], problem: BandProblem): ErrorDetail[] {
  switch (problem.code) {
    case "no_bands":
      return [{ path: "bands", message: problem.message }];
    case "invalid_number":
      return [{ path: `bands.${problem.index}.${problem.field}`, message: problem.message }];
    case "not_a_quantity":
    case "negative_from":
      return [{ path: `bands.${problem.index}.from`, message: problem.message }];
    case "duplicate_from": {
      const [first, ...rest] = problem.indexes;
      return rest.map((index) => ({
        path: `bands.${index}.from`,
        message:
          `Duplicates the from of band ${first} (${problem.from}); from values must be unique`,
      }));
    }
    case "first_band_start": {
      const lowest = toDecimal(problem.from);
      return bands.flatMap((band, index) =>
        toDecimal(band.from).eq(lowest)
          ? [{ path: `bands.${index}.from`, message: problem.message }]
          : []
      );
    }
  }
}

/**
 * The problems with a markup group as it would be stored, empty when it is valid:
 *
 * - bands: `validateBands(lane, …)` on the bands as exact decimal strings;
 * - `decorationMethod` is refused on the garment and setup lanes (only decorations have a method);
 * - `appliesToSetupCost` is exactly "the lane is setup". The API derives it when it is not sent
 *   (create; or a PATCH that changes the lane) and refuses a value that contradicts the lane, so a
 *   stored group can never be a setup group that pricing would skip, or vice versa.
 */
export function markupGroupProblems(candidate: MarkupGroupCandidate): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (candidate.decorationMethod !== null && candidate.lane !== "decoration") {
    details.push({
      path: "decorationMethod",
      message:
        `Only decoration-lane groups have a decoration method; send null on the ${candidate.lane} lane`,
    });
  }
  const setup = candidate.lane === "setup";
  if (candidate.appliesToSetupCost !== setup) {
    details.push({
      path: "appliesToSetupCost",
      message: setup
        ? "Must be true for a setup-lane group"
        : `Must be false: only setup-lane groups apply to setup cost, this one is on the ${candidate.lane} lane`,
    });
  }
  const bands: MarkupBand[] = candidate.bands.map((b) => ({
    from: String(b.from),
    markupType: b.markupType,
    markupValue: String(b.markupValue),
  }));
  for (const problem of validateBands(candidate.lane, bands)) {
    details.push(...bandDetails(candidate.bands, problem));
  }
  return details;
}

/** A band as stored in the `bands` jsonb column (a type alias, so it is assignable to JSON). */
export type StoredBand = {
  from: number;
  markupType: MarkupType;
  markupValue: number;
};

/** Bands are stored (and answered) in ascending `from` order; their order carries no meaning. */
export function sortedBands(bands: readonly BandJson[]): StoredBand[] {
  return [...bands]
    .sort((a, b) => toDecimal(a.from).comparedTo(toDecimal(b.from)))
    .map((b) => ({ from: b.from, markupType: b.markupType, markupValue: b.markupValue }));
}

/** Which lane a markup group named by a decoration field must be on. */
export const DECORATION_GROUP_LANES: readonly (readonly [
  "markupGroupId" | "setupMarkupGroupId",
  MarkupLane,
])[] = [
  ["markupGroupId", "decoration"],
  ["setupMarkupGroupId", "setup"],
];

/**
 * A markup group a row names must be one of the organisation's groups on the lane the field is
 * for (`found`: the lane of the group of that id in the organisation, undefined when there is
 * none). Another organisation's group reads exactly like one that does not exist.
 */
export function laneProblem(
  field: string,
  found: MarkupLane | undefined,
  lane: MarkupLane,
): ErrorDetail | null {
  if (found === lane) return null;
  return {
    path: field,
    message: found
      ? `Must be a ${lane} markup group, not a ${found} one`
      : `Must be a ${lane} markup group of this organisation`,
  };
}

/** A `group` row that names no group needs a default of its lane to band through. */
export function noDefaultGroupProblem(
  groups: readonly PricingMarkupGroup[],
  field: string,
  lane: MarkupLane,
  method: string | null = null,
): ErrorDetail | null {
  if (groupForLane(groups, lane, null, method)) return null;
  const groupField = lane === "setup" ? "setupMarkupGroupId" : "markupGroupId";
  return {
    path: field,
    message: `No ${lane} markup group to band through: name one in "${groupField}", or make ` +
      `one the default of the ${lane} lane (isDefault)`,
  };
}

/**
 * What a change re-bands (pricing.md: a `group` row takes the band of its markup group again when
 * its quantity or cost changes, and on reopen). Pure: rows as the pricing rules read them in,
 * their markups and sells out. The recomputation of a stored quote and the pricing preview both
 * re-band through these, so a previewed tree prices as the same tree written.
 */
import type { DecorationMethod } from "@printshop/shared/contracts/quotes";
import { type DecorationInput, lineQuantity, rebandDecoration, rebandVariant } from "./pricing.ts";
import type { VariantInput } from "./pricing.ts";
import { groupForLane, type PricingMarkupGroup } from "./markup_groups.ts";

/** A variant of a line, whether the change re-bands it, and the group it names. */
export interface LineVariant {
  input: VariantInput;
  markupGroupId: string | null;
  inScope: boolean;
}

/**
 * A line's variants as the change leaves them: each `group` row in scope takes the band of its
 * garment group matching the line's quantity (Σ non-custom variants); every other row is as it
 * was. In the order given.
 */
export function rebandLineVariants(
  variants: readonly LineVariant[],
  markupGroups: readonly PricingMarkupGroup[],
): VariantInput[] {
  const qty = lineQuantity(variants.map((v) => v.input));
  return variants.map(({ input, markupGroupId, inScope }) => {
    const group = input.markupSource === "group" && inScope
      ? groupForLane(markupGroups, "garment", markupGroupId)
      : null;
    if (!group) return input;
    const banded = rebandVariant({ ...input, markupSource: "group" }, qty, group);
    return {
      ...input,
      markupType: banded.markupType,
      markupValue: banded.markupValue,
      unitPriceExGst: banded.unitPriceExGst,
    };
  });
}

/** A decoration and the groups its lanes name. */
export interface BandableDecoration {
  input: DecorationInput;
  method: DecorationMethod | null;
  markupGroupId: string | null;
  setupMarkupGroupId: string | null;
}

/** A decoration the change re-bands: each `group` lane takes its group's band (rebandDecoration). */
export function rebandDecorationLanes(
  decoration: BandableDecoration,
  markupGroups: readonly PricingMarkupGroup[],
): DecorationInput {
  const { input } = decoration;
  return {
    ...input,
    ...rebandDecoration(input, {
      unit: input.markupSource === "group"
        ? groupForLane(markupGroups, "decoration", decoration.markupGroupId, decoration.method)
        : null,
      setup: input.setupMarkupSource === "group"
        ? groupForLane(markupGroups, "setup", decoration.setupMarkupGroupId)
        : null,
    }),
  };
}

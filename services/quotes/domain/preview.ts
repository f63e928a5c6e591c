/**
 * The pricing preview (POST /v1/quotes/preview): a quote tree priced as the write operations
 * would leave it, in memory. Pure. Each row is made as its create makes it (new_rows.ts), is
 * checked by the rules its create checks, and re-bands what its create's recomputation re-bands
 * (reband.ts), in the order the writes would come: groups, then each group's lines with their
 * variants, then its decorations. The quote is then priced once, whole (quoteTotals), as every
 * recomputation prices it.
 */
import type { ErrorDetail } from "@printshop/shared/http";
import {
  type CreateQuoteDecorationBody,
  isAdjustment,
  type PreviewQuoteBody,
  type QuotePreview,
} from "@printshop/shared/contracts/quotes";
import {
  type DecorationInput,
  type GroupInput,
  type LineInput,
  MAX_QUOTE_TOTAL,
  quoteTotals,
  totalTooLarge,
} from "./pricing.ts";
import type { DecimalString } from "./markup.ts";
import { newDecoration, newLine, newVariant } from "./new_rows.ts";
import { type LineVariant, rebandDecorationLanes, rebandLineVariants } from "./reband.ts";
import {
  DECORATION_GROUP_LANES,
  laneProblem,
  noDefaultGroupProblem,
  type PricingMarkupGroup,
} from "./markup_groups.ts";
import {
  lineShapeProblem,
  noVariantsOn,
  variantPricingProblem,
  variantShapeProblem,
} from "./rows.ts";

/** The tax rate the tree is priced with, as the quote would copy it. */
export interface PreviewTaxRate {
  id: string | null;
  name: string;
  ratePct: DecimalString;
}

export type PreviewOutcome =
  | { ok: true; preview: QuotePreview }
  | { ok: false; problem: ErrorDetail };

const at = (prefix: string, problem: ErrorDetail | null): ErrorDetail | null =>
  problem === null ? null : { path: `${prefix}.${problem.path}`, message: problem.message };

/** The first problem the decoration's create would refuse it with, its path inside the tree. */
function decorationProblem(
  input: CreateQuoteDecorationBody,
  groups: readonly PricingMarkupGroup[],
  prefix: string,
): ErrorDetail | null {
  for (const [field, lane] of DECORATION_GROUP_LANES) {
    const id = input[field];
    if (id === undefined || id === null) continue;
    const problem = laneProblem(field, groups.find((g) => g.id === id)?.lane, lane);
    if (problem) return at(prefix, problem);
  }
  // As the create asks: a lane written `group` without a group needs a default (for the unit
  // lane, one for the decoration's method first).
  if (input.markupSource === "group" && !input.markupGroupId) {
    const problem = noDefaultGroupProblem(groups, "markupSource", "decoration", input.method);
    if (problem) return at(prefix, problem);
  }
  if (input.setupMarkupSource === "group" && !input.setupMarkupGroupId) {
    const problem = noDefaultGroupProblem(groups, "setupMarkupSource", "setup");
    if (problem) return at(prefix, problem);
  }
  return null;
}

const num = (value: DecimalString | null): number | null => value === null ? null : Number(value);

/**
 * The tree priced, or the first problem a write of it would have been refused with (a 400 detail
 * whose path points into the tree: `groups.0.lines.1.variants.2.markupGroupId`).
 */
export function previewQuote(
  body: PreviewQuoteBody,
  markupGroups: readonly PricingMarkupGroup[],
  taxRate: PreviewTaxRate,
): PreviewOutcome {
  const groupInputs: GroupInput[] = [];
  for (const [g, group] of (body.groups ?? []).entries()) {
    const lines: LineInput[] = [];
    for (const [l, line] of (group.lines ?? []).entries()) {
      const prefix = `groups.${g}.lines.${l}`;
      const { shape, pricing } = newLine(line);
      const shapeProblem = at(prefix, lineShapeProblem(shape));
      if (shapeProblem) return { ok: false, problem: shapeProblem };
      const variants: LineVariant[] = [];
      for (const [v, variant] of (line.variants ?? []).entries()) {
        const where = `${prefix}.variants.${v}`;
        if (isAdjustment(line.lineType)) {
          return {
            ok: false,
            problem: {
              path: `${prefix}.variants`,
              message: noVariantsOn(line.lineType),
            },
          };
        }
        const problem = at(
          where,
          variantShapeProblem(
            variant.isCustomLine ?? false,
            variant.size ?? null,
            variant.colour ?? null,
          ) ??
            variantPricingProblem(variant) ??
            (variant.markupGroupId
              ? laneProblem(
                "markupGroupId",
                markupGroups.find((m) => m.id === variant.markupGroupId)?.lane,
                "garment",
              )
              : null),
        );
        if (problem) return { ok: false, problem };
        const input = newVariant(variant);
        if (input.markupSource === "group" && !variant.markupGroupId) {
          const none = at(where, noDefaultGroupProblem(markupGroups, "markupSource", "garment"));
          if (none) return { ok: false, problem: none };
        }
        variants.push({ input, markupGroupId: variant.markupGroupId ?? null, inScope: true });
      }
      // Each variant's write re-bands every `group` row of the line on the line's quantity after
      // it. Quantities are never negative, so that quantity only grows, and a group's bands
      // cover every quantity from their first start up: once one matches, every later one does.
      // So the last write's re-banding decides every row, and one re-banding on the whole line
      // gives what the writes leave (reband_test.ts holds the two to the same answers). One
      // pass, where doing it write by write would cost the square of the line's variants.
      lines.push({ ...pricing, variants: rebandLineVariants(variants, markupGroups) });
    }
    const decorations: DecorationInput[] = [];
    for (const [d, decoration] of (group.decorations ?? []).entries()) {
      const problem = decorationProblem(decoration, markupGroups, `groups.${g}.decorations.${d}`);
      if (problem) return { ok: false, problem };
      // Its create's recomputation re-bands the new decoration's `group` lanes.
      const input = rebandDecorationLanes({
        input: newDecoration(decoration),
        method: decoration.method ?? null,
        markupGroupId: decoration.markupGroupId ?? null,
        setupMarkupGroupId: decoration.setupMarkupGroupId ?? null,
      }, markupGroups);
      decorations.push(input);
    }
    groupInputs.push({ lines, decorations });
  }

  const totals = quoteTotals(groupInputs, taxRate.ratePct);
  // The writes would have been refused at the row that took the total past what is stored.
  if (Math.abs(Number(totals.totalIncGst)) >= MAX_QUOTE_TOTAL) {
    return { ok: false, problem: totalTooLarge() };
  }
  return {
    ok: true,
    preview: {
      subtotalExGst: Number(totals.subtotalExGst),
      gstAmount: Number(totals.gstAmount),
      totalIncGst: Number(totals.totalIncGst),
      taxRateId: taxRate.id,
      taxName: taxRate.name,
      taxRatePct: Number(taxRate.ratePct),
      groups: (body.groups ?? []).map((group, g) => {
        const priced = totals.groups[g]!;
        return {
          name: group.name,
          totalQuantity: priced.totalQuantity,
          goodsTotalExGst: Number(priced.goodsTotal),
          adjustmentsTotalExGst: Number(priced.adjustmentsTotal),
          totalExGst: Number(priced.total),
          lines: (group.lines ?? []).map((line, l) => {
            const lineTotals = priced.lines[l]!;
            const variants = groupInputs[g]!.lines[l]!.variants;
            return {
              lineType: line.lineType,
              quantity: lineTotals.quantity,
              unitPriceExGst: Number(lineTotals.unitPriceExGst),
              grossTotalExGst: Number(lineTotals.grossTotal),
              discountAmount: Number(lineTotals.discountAmount),
              totalExGst: Number(lineTotals.total),
              variants: variants.map((v, k) => ({
                quantity: v.quantity,
                unitPriceExGst: Number(lineTotals.variants[k]!.unitPriceExGst),
                markupType: v.markupType,
                markupValue: num(v.markupValue),
                markupSource: v.markupSource,
                totalExGst: Number(lineTotals.variants[k]!.total),
              })),
            };
          }),
          decorations: groupInputs[g]!.decorations.map((d, k) => {
            const charges = priced.decorations[k]!;
            return {
              quantity: d.quantity,
              baseUnitCost: Number(charges.baseUnitCost),
              baseSetupCost: Number(charges.baseSetupCost),
              markupType: d.markupType,
              markupValue: num(d.markupValue),
              markupSource: d.markupSource,
              setupMarkupType: d.setupMarkupType,
              setupMarkupValue: num(d.setupMarkupValue),
              setupMarkupSource: d.setupMarkupSource,
              setupCharge: Number(charges.setupCharge),
              totalExGst: Number(charges.total),
            };
          }),
        };
      }),
    },
  };
}

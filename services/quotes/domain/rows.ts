/**
 * Rules across the fields of a line or a variant that a schema alone cannot say (pricing.md,
 * Lines and Variants). Pure: each answers the first problem as a 400 detail, or null.
 */
import type { ErrorDetail } from "@printshop/shared/http";
import { isAdjustment, type UpdateQuoteDecorationBody } from "@printshop/shared/contracts/quotes";

export interface LineShape {
  lineType: string;
  valueType: string | null;
  percentage: number | null;
  discountValueType: string | null;
  discountPercentage: number | null;
}

export function lineShapeProblem(shape: LineShape): ErrorDetail | null {
  if (isAdjustment(shape.lineType)) {
    if (shape.valueType === "Percentage" && shape.percentage === null) {
      return { path: "percentage", message: "Required when valueType is Percentage" };
    }
    if (shape.discountValueType !== null || shape.discountPercentage !== null) {
      return {
        path: "discountValueType",
        message: "A Discount or Surcharge line has no per-line discount",
      };
    }
  } else if (shape.valueType !== null || shape.percentage !== null) {
    return { path: "valueType", message: "Only Discount and Surcharge lines have a valueType" };
  }
  if ((shape.discountValueType === null) !== (shape.discountPercentage === null)) {
    return {
      path: "discountPercentage",
      message: "discountValueType and discountPercentage are given together",
    };
  }
  return null;
}

/** A Discount or Surcharge line is an amount of its own: a variant written to one is refused. */
export function noVariantsOn(lineType: string): string {
  return `A ${lineType} line has no variants`;
}

/** A custom line (freight, say) has no size or colour. */
export function variantShapeProblem(
  isCustomLine: boolean,
  size: string | null,
  colour: string | null,
): ErrorDetail | null {
  if (isCustomLine && (size !== null || colour !== null)) {
    return {
      path: size !== null ? "size" : "colour",
      message: "A custom line has no size or colour",
    };
  }
  return null;
}

export interface VariantPricingInput {
  unitPriceExGst?: number | undefined;
  markupType?: string | null | undefined;
  markupValue?: number | null | undefined;
}

/** A variant is priced by a sell price or by a markup, never both; a markup is type and value. */
export function variantPricingProblem(input: VariantPricingInput): ErrorDetail | null {
  if (
    input.unitPriceExGst !== undefined &&
    (input.markupType !== undefined || input.markupValue !== undefined)
  ) {
    return {
      path: "unitPriceExGst",
      message: "Give either unitPriceExGst (the row becomes manual) or a markup, not both",
    };
  }
  const typeGiven = input.markupType !== undefined && input.markupType !== null;
  const valueGiven = input.markupValue !== undefined && input.markupValue !== null;
  if (
    typeGiven !== valueGiven && (input.markupType !== undefined || input.markupValue !== undefined)
  ) {
    return { path: "markupValue", message: "markupType and markupValue are given together" };
  }
  return null;
}

/** A change to any of these re-bands a decoration's `group` lanes (pricing.md, Decorations). */
const DECORATION_REBAND_FIELDS: readonly (keyof UpdateQuoteDecorationBody)[] = [
  "quantity",
  "unitCost",
  "setupCost",
  "markupSource",
  "markupGroupId",
  "setupMarkupSource",
  "setupMarkupGroupId",
  // The unit lane's default group is chosen by method.
  "method",
];

/** Whether changing these decoration fields re-bands its `group` lanes. */
export function rebandsDecoration(changed: readonly (keyof UpdateQuoteDecorationBody)[]): boolean {
  return changed.some((field) => DECORATION_REBAND_FIELDS.includes(field));
}

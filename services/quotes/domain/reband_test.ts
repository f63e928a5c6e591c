/**
 * Why the pricing preview may re-band a line once: the writes re-band it after each variant, but
 * a line's quantity only grows and bands run from their first start up, so the last re-banding
 * decides. Random lines, two groups (one named, one the default), rows of every kind.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import type { PricingMarkupGroup } from "./markup_groups.ts";
import { type LineVariant, rebandLineVariants } from "./reband.ts";
import type { VariantInput } from "./pricing.ts";

const groupArb = (id: string, isDefault: boolean): fc.Arbitrary<PricingMarkupGroup> =>
  fc.uniqueArray(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 6 }).map((starts) => ({
    id,
    lane: "garment" as const,
    decorationMethod: null,
    isDefault,
    appliesToSetupCost: false,
    bands: starts.sort((a, b) => a - b).map((from, i) => ({
      from: String(from),
      markupType: i % 2 === 0 ? "percentage" as const : "fixed" as const,
      markupValue: String(10 + i * 7.5),
    })),
  }));

const variantArb: fc.Arbitrary<Omit<LineVariant, "inScope">> = fc.record({
  quantity: fc.integer({ min: 0, max: 30 }),
  buyPrice: fc.integer({ min: 0, max: 2000 }).map((n) => String(n / 100)),
  isCustomLine: fc.boolean(),
  source: fc.constantFrom("group", "manual"),
  markup: fc.option(fc.integer({ min: 0, max: 90 }).map(String), { nil: null }),
  named: fc.constantFrom("named", null),
}).map((v) => ({
  input: {
    quantity: v.quantity,
    buyPrice: v.buyPrice,
    extraCost: "0",
    markupType: v.markup === null ? null : "percentage",
    markupValue: v.markup,
    markupSource: v.source as "group" | "manual",
    unitPriceExGst: "3.5000",
    isCustomLine: v.isCustomLine,
  } satisfies VariantInput,
  markupGroupId: v.named,
}));

Deno.test("re-banding a line once, whole, leaves it as re-banding after each variant's write does", () => {
  fc.assert(
    fc.property(
      groupArb("named", false),
      groupArb("default", true),
      fc.array(variantArb, { maxLength: 12 }),
      (named, byDefault, variants) => {
        const groups = [named, byDefault];
        // As the writes do it: each variant written, then every row of the line re-banded.
        const written: LineVariant[] = [];
        for (const variant of variants) {
          written.push({ ...variant, inScope: true });
          rebandLineVariants(written, groups).forEach((input, i) => (written[i]!.input = input));
        }
        // As the pricing preview does it: the whole line, once.
        const once = rebandLineVariants(variants.map((v) => ({ ...v, inScope: true })), groups);
        assertEquals(once, written.map((v) => v.input));
      },
    ),
    { numRuns: 500 },
  );
});

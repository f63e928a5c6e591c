import assert from "node:assert/strict";
import fc from "fast-check";
import { applyMarkup, deriveMarkup, type MarkupGroup, type MarkupType } from "./markup.ts";
import {
  addsNothing,
  type AdjustmentLine,
  adjustmentTotal,
  type DecorationInput,
  decorationTotals,
  type GoodsLine,
  type GroupInput,
  groupTotals,
  isAdjustmentLine,
  LINE_TYPES,
  type LineInput,
  lineQuantity,
  lineTotals,
  type LineType,
  type ManualVariant,
  priceVariant,
  quoteTotals,
  rebandDecoration,
  rebandVariant,
  repriceOnCostChange,
  setManualSell,
  type ValueType,
  type VariantInput,
} from "./pricing.ts";

// ---------------------------------------------------------------------------------------------
// Builders

function variant(fields: Partial<VariantInput> = {}): VariantInput {
  return {
    quantity: 1,
    buyPrice: "0",
    extraCost: "0",
    markupType: null,
    markupValue: null,
    markupSource: "manual",
    unitPriceExGst: "0",
    isCustomLine: false,
    ...fields,
  };
}

function line<T extends LineType>(lineType: T, fields: Partial<LineInput> = {}): LineInput<T> {
  return {
    quantity: 0,
    unitPriceExGst: "0",
    valueType: null,
    percentage: null,
    discountValueType: null,
    discountPercentage: null,
    variants: [],
    ...fields,
    lineType,
  };
}

function decoration(fields: Partial<DecorationInput> = {}): DecorationInput {
  return {
    quantity: 0,
    unitCost: "0",
    markupType: null,
    markupValue: null,
    markupSource: "manual",
    baseUnitCost: "0",
    setupCost: "0",
    setupMarkupType: null,
    setupMarkupValue: null,
    setupMarkupSource: "manual",
    baseSetupCost: "0",
    includeSetupCost: false,
    rollUp: false,
    rollUpSetup: false,
    showOnDocuments: true,
    ...fields,
  };
}

// ---------------------------------------------------------------------------------------------
// The pricing.md worked example (one group, GST 10 %)

const mBlack = variant({
  quantity: 10,
  buyPrice: "5.00",
  extraCost: "0.50",
  markupType: "percentage",
  markupValue: "40",
});
const lBlack = variant({
  quantity: 5,
  buyPrice: "5.00",
  extraCost: "0",
  markupType: "fixed",
  markupValue: "3",
});
const freight = variant({
  quantity: 1,
  buyPrice: "20.00",
  markupType: "percentage",
  markupValue: "0",
  isCustomLine: true,
});
const garmentLine = line("Garment", { variants: [mBlack, lBlack, freight] });
const print = decoration({
  quantity: 15,
  unitCost: "1.20",
  markupType: "percentage",
  markupValue: "50",
  setupCost: "30.00",
  setupMarkupType: "fixed",
  setupMarkupValue: "15",
  includeSetupCost: true,
});
const tenPercentOff = line("Discount", { valueType: "Percentage", percentage: "10" });
const workedGroup: GroupInput = {
  lines: [garmentLine, tenPercentOff],
  decorations: [print],
  rollUpDecoration: false,
  rollUpSetup: false,
};

Deno.test("priceVariant() reproduces the pricing.md worked example variants", () => {
  assert.deepEqual(
    [mBlack, lBlack, freight].map((v) => {
      const { unitPriceExGst, total } = priceVariant(v);
      return [unitPriceExGst, total];
    }),
    [["7.7000", "77.00"], ["8.0000", "40.00"], ["20.0000", "20.00"]],
  );
  assert.equal(priceVariant(mBlack).cost, "5.5");
});

Deno.test("priceVariant() answers for the inputs it is given, whatever it priced before", () => {
  // priceVariant remembers what it priced: a row that differs from one priced just before in
  // any one input it reads must still be priced on its own.
  const base: VariantInput = {
    quantity: 10,
    buyPrice: "5.00",
    extraCost: "0.50",
    markupType: "percentage",
    markupValue: "40",
    markupSource: "manual",
    unitPriceExGst: "0",
    isCustomLine: false,
  };
  const cases: [Partial<VariantInput>, string, string][] = [
    [{}, "7.7000", "77.00"],
    [{ quantity: 5 }, "7.7000", "38.50"],
    [{ buyPrice: "6.00" }, "9.1000", "91.00"],
    [{ extraCost: "1.00" }, "8.4000", "84.00"],
    [{ markupType: "fixed" }, "45.5000", "455.00"],
    [{ markupValue: "50" }, "8.2500", "82.50"],
    [{ markupType: null, unitPriceExGst: "9.99" }, "9.9900", "99.90"],
    [{ markupType: null, unitPriceExGst: "9.98" }, "9.9800", "99.80"],
    [{ markupValue: null, unitPriceExGst: "9.97" }, "9.9700", "99.70"],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [change, sell, total] of cases) {
      const priced = priceVariant({ ...base, ...change });
      assert.deepEqual(
        [priced.unitPriceExGst, priced.total],
        [sell, total],
        `${JSON.stringify(change)}, round ${round}`,
      );
    }
  }
});

Deno.test("lineTotals() reproduces the pricing.md worked example line", () => {
  const totals = lineTotals(garmentLine);
  assert.equal(totals.quantity, 15);
  assert.equal(totals.total, "137.00");
  assert.equal(totals.grossTotal, "137.00");
  assert.equal(totals.discountAmount, "0.00");
  assert.equal(totals.unitPriceExGst, "7.8000");
});

Deno.test("decorationTotals() reproduces the pricing.md worked example decoration", () => {
  assert.deepEqual(decorationTotals(print), {
    baseUnitCost: "1.8000",
    baseSetupCost: "45.0000",
    setupCharge: "45.00",
    total: "72.00",
  });
});

Deno.test("groupTotals() reproduces the pricing.md worked example discount", () => {
  const totals = groupTotals(workedGroup);
  assert.equal(totals.goodsTotal, "209.00");
  assert.equal(totals.lines[1]!.total, "-20.90");
  assert.equal(adjustmentTotal(tenPercentOff, "209.00"), "-20.90");
  assert.equal(totals.adjustmentsTotal, "-20.90");
  assert.equal(totals.total, "188.10");
  assert.equal(totals.totalQuantity, 15);
});

Deno.test("quoteTotals() reproduces the pricing.md worked example", () => {
  const totals = quoteTotals([workedGroup], "10");
  assert.equal(totals.subtotalExGst, "188.10");
  assert.equal(totals.gstAmount, "18.81");
  assert.equal(totals.totalIncGst, "206.91");
});

// ---------------------------------------------------------------------------------------------
// Markup groups and manual rows (pricing.md markup group example)

const garmentGroup: MarkupGroup = {
  lane: "garment",
  bands: [
    { from: "1", markupType: "percentage", markupValue: "60" },
    { from: "12", markupType: "percentage", markupValue: "50" },
    { from: "48", markupType: "percentage", markupValue: "40" },
  ],
};

Deno.test("rebandVariant() sells cost 5.50 at 8.25 on a line of 15 and re-bands to 7.70 at 50", () => {
  const row = {
    ...variant({ quantity: 15, buyPrice: "5.00", extraCost: "0.50" }),
    markupSource: "group" as const,
  };
  const at15 = rebandVariant(row, 15, garmentGroup);
  assert.deepEqual(at15, {
    markupType: "percentage",
    markupValue: "50",
    markupSource: "group",
    unitPriceExGst: "8.2500",
    band: garmentGroup.bands[1],
  });
  const at50 = rebandVariant({ ...row, quantity: 50, ...at15 }, 50, garmentGroup);
  assert.equal(at50.markupValue, "40");
  assert.equal(at50.unitPriceExGst, "7.7000");
});

Deno.test("rebandVariant() bands on the line's quantity, which leaves custom rows out", () => {
  const variants = [
    variant({ quantity: 8, buyPrice: "5.50" }),
    variant({ quantity: 4, buyPrice: "5.50" }),
    variant({ quantity: 100, buyPrice: "20.00", isCustomLine: true }),
  ];
  assert.equal(lineQuantity(variants), 12);
  const small = { ...variants[0]!, markupSource: "group" as const };
  // On its own the row (8) would take the 60 % band; its line (12) takes 50 %.
  assert.equal(rebandVariant(small, lineQuantity(variants), garmentGroup).unitPriceExGst, "8.2500");
});

Deno.test("rebandVariant() keeps the row's markup when no band matches", () => {
  const row = {
    ...variant({ quantity: 0, buyPrice: "10", markupType: "fixed", markupValue: "2" }),
    markupSource: "group" as const,
  };
  const priced = rebandVariant(row, 0, garmentGroup);
  assert.equal(priced.band, null);
  assert.equal(priced.markupValue, "2");
  assert.equal(priced.unitPriceExGst, "12.0000");
  assert.throws(() => rebandVariant(row, 5, { ...garmentGroup, lane: "setup" }), RangeError);
});

Deno.test("repriceOnCostChange() keeps a manual 8.25 when the buy price rises by 1.00 and re-derives the markup", () => {
  const percentageRow: ManualVariant = {
    ...variant({ quantity: 15, buyPrice: "5.00", extraCost: "0.50" }),
    markupSource: "manual",
    markupType: "percentage",
    markupValue: "50",
    unitPriceExGst: "8.25",
  };
  const repriced = repriceOnCostChange(percentageRow, { buyPrice: "6.00", extraCost: "0.50" });
  assert.equal(repriced.unitPriceExGst, "8.2500");
  assert.equal(repriced.markupType, "percentage");
  assert.equal(repriced.markupSource, "manual");
  assert.equal(repriced.markupValue, "26.923"); // 1.75 / 6.50 = 26.923076…%
  assert.equal(applyMarkup("6.50", "percentage", repriced.markupValue!), "8.2500");
  // And the repriced row prices back to the same sell.
  assert.equal(
    priceVariant({ ...percentageRow, buyPrice: "6.00", ...repriced }).unitPriceExGst,
    "8.2500",
  );

  const fixedRow: ManualVariant = {
    ...percentageRow,
    markupType: "fixed",
    markupValue: "2.75",
  };
  const fixed = repriceOnCostChange(fixedRow, { buyPrice: "6.00", extraCost: "0.50" });
  assert.deepEqual(fixed, {
    markupType: "fixed",
    markupValue: "1.75",
    markupSource: "manual",
    unitPriceExGst: "8.2500",
  });

  const untyped: ManualVariant = { ...percentageRow, markupType: null, markupValue: null };
  assert.deepEqual(repriceOnCostChange(untyped, { buyPrice: "6", extraCost: "0.5" }), {
    markupType: null,
    markupValue: null,
    markupSource: "manual",
    unitPriceExGst: "8.2500",
  });
  // A percentage cannot reach a sell from a zero cost: the markup empties, the sell stays.
  assert.equal(
    repriceOnCostChange(percentageRow, { buyPrice: "0", extraCost: "0" }).markupValue,
    null,
  );
});

Deno.test("setManualSell() makes the row manual and derives its markup in its type", () => {
  const groupRow = variant({
    buyPrice: "5.50",
    markupType: "percentage",
    markupValue: "50",
    markupSource: "group",
  });
  assert.deepEqual(setManualSell(groupRow, "7.70"), {
    markupType: "percentage",
    markupValue: "40",
    markupSource: "manual",
    unitPriceExGst: "7.7000",
  });
});

Deno.test("priceVariant() keeps the stored sell of a row without a markup type and derives its markup back", () => {
  const old = variant({ quantity: 3, buyPrice: "5.00", extraCost: "1.00", unitPriceExGst: "9.00" });
  const priced = priceVariant(old);
  assert.equal(priced.unitPriceExGst, "9.0000");
  assert.equal(priced.total, "27.00");
  assert.equal(deriveMarkup(priced.cost, priced.unitPriceExGst, "fixed"), "3");
  assert.equal(deriveMarkup(priced.cost, priced.unitPriceExGst, "percentage"), "50");

  const free = priceVariant(variant({ buyPrice: "0", unitPriceExGst: "4.50" }));
  assert.equal(deriveMarkup(free.cost, free.unitPriceExGst, "fixed"), "4.5");
  assert.equal(deriveMarkup(free.cost, free.unitPriceExGst, "percentage"), null);
  // A type without a value is no markup either.
  const half = variant({ buyPrice: "5", markupType: "fixed", unitPriceExGst: "6.1" });
  assert.equal(priceVariant(half).unitPriceExGst, "6.1000");
});

// ---------------------------------------------------------------------------------------------
// Lines

Deno.test("lineTotals() counts custom (freight) variants in the total but not in the quantity", () => {
  const totals = lineTotals(line("Garment", {
    variants: [
      variant({ quantity: 4, unitPriceExGst: "10.00" }),
      variant({ quantity: 2, unitPriceExGst: "12.50" }),
      variant({ quantity: 1, unitPriceExGst: "35.00", isCustomLine: true }),
    ],
  }));
  assert.equal(totals.quantity, 6);
  assert.equal(totals.total, "100.00");
  assert.equal(totals.unitPriceExGst, "10.8333"); // 65 / 6 = 10.83333…

  const onlyFreight = lineTotals(line("Cost", {
    variants: [variant({ quantity: 1, unitPriceExGst: "35.00", isCustomLine: true })],
  }));
  assert.equal(onlyFreight.quantity, 0);
  assert.equal(onlyFreight.unitPriceExGst, "0.0000");
  assert.equal(onlyFreight.total, "35.00");
});

Deno.test("lineTotals() derives the unit price half away from zero at 4 decimals", () => {
  // (0.0001 + 0.0002) / 2 = 0.00015 → 0.0002.
  const totals = lineTotals(line("Garment", {
    variants: [
      variant({ quantity: 1, unitPriceExGst: "0.0001" }),
      variant({ quantity: 1, unitPriceExGst: "0.0002" }),
    ],
  }));
  assert.equal(totals.unitPriceExGst, "0.0002");
});

Deno.test("lineTotals() prices a line without variants as quantity × unitPriceExGst", () => {
  const totals = lineTotals(line("Service", { quantity: 3, unitPriceExGst: "19.995" }));
  assert.equal(totals.quantity, 3);
  assert.equal(totals.unitPriceExGst, "19.9950");
  assert.equal(totals.total, "59.985");
});

Deno.test("addsNothing() holds exactly for new lines that leave every total as it was", () => {
  const nothing = [
    line("Garment"),
    line("Garment", { quantity: 4, unitPriceExGst: "0" }),
    line("Service", { quantity: 0, unitPriceExGst: "12.50" }),
    line("Discount", { valueType: "Percentage", percentage: null }),
    line("Surcharge", { valueType: "Percentage", percentage: "0" }),
    line("Discount", { valueType: "Flat", quantity: 0, unitPriceExGst: "5" }),
  ];
  const something = [
    line("Service", { quantity: 1, unitPriceExGst: "0.0001" }),
    line("Garment", { discountValueType: "Flat", discountPercentage: "5" }),
    line("Discount", { valueType: "Percentage", percentage: "10" }),
    line("Surcharge", { valueType: "Flat", quantity: 1, unitPriceExGst: "2" }),
    // Variants count even when they add nothing: they move their line's garment band.
    line("Garment", { variants: [variant({ quantity: 0 })] }),
  ];
  const before = quoteTotals([workedGroup], "10");
  for (const added of nothing) {
    assert.equal(addsNothing(added), true, JSON.stringify(added));
    const after = quoteTotals([{ ...workedGroup, lines: [...workedGroup.lines, added] }], "10");
    assert.equal(after.groupsTotal, before.groupsTotal);
    assert.equal(after.totalIncGst, before.totalIncGst);
  }
  for (const added of something) assert.equal(addsNothing(added), false, JSON.stringify(added));
});

Deno.test("lineTotals() applies a per-line Percentage or Flat discount", () => {
  const base = { quantity: 10, unitPriceExGst: "5.00" };
  const percent = lineTotals(line("Service", {
    ...base,
    discountValueType: "Percentage",
    discountPercentage: "12.5",
  }));
  assert.deepEqual(
    [percent.grossTotal, percent.discountAmount, percent.total],
    ["50.00", "6.25", "43.75"],
  );
  const flat = lineTotals(line("Service", {
    ...base,
    discountValueType: "Flat",
    discountPercentage: "7.5",
  }));
  assert.deepEqual([flat.grossTotal, flat.discountAmount, flat.total], ["50.00", "7.50", "42.50"]);
  const none = lineTotals(line("Service", { ...base, discountValueType: "Flat" }));
  assert.equal(none.total, "50.00");

  // On a line with variants the discount comes off the whole line total, freight included,
  // and the derived unit price stays the undiscounted one.
  const garment = lineTotals({
    ...garmentLine,
    discountValueType: "Percentage",
    discountPercentage: "10",
  });
  assert.deepEqual([garment.total, garment.unitPriceExGst], ["123.30", "7.8000"]);
  // The discounted line total is what the group's goods total sees.
  const group = groupTotals({
    lines: [{ ...garmentLine, discountValueType: "Flat", discountPercentage: "7" }],
    decorations: [],
  });
  assert.equal(group.goodsTotal, "130.00");
});

Deno.test("groupTotals() adds surcharges, subtracts discounts, and counts only Garment lines' quantity", () => {
  const totals = groupTotals({
    lines: [
      line("Garment", { variants: [variant({ quantity: 12, unitPriceExGst: "10" })] }),
      line("Service", { quantity: 3, unitPriceExGst: "10" }),
      line("Garment", { quantity: 5, unitPriceExGst: "2" }),
      line("Surcharge", { valueType: "Flat", quantity: 2, unitPriceExGst: "7.50" }),
      line("Surcharge", { valueType: "Percentage", percentage: "2.5" }),
      line("Discount", { valueType: "Flat", quantity: 1, unitPriceExGst: "5" }),
    ],
    decorations: [decoration({ quantity: 12, baseUnitCost: "1.5" })],
  });
  // goods: 120 + 30 + 10 + 18 = 178
  assert.equal(totals.goodsTotal, "178.00");
  assert.deepEqual(totals.lines.slice(3).map((l) => l.total), ["15.00", "4.45", "-5.00"]);
  assert.equal(totals.total, "192.45");
  assert.equal(totals.totalQuantity, 17);
});

Deno.test("quoteTotals() keeps exact decimals where floats would drift", () => {
  const tenCents = line("Other", { quantity: 1, unitPriceExGst: "0.1" });
  const twentyCents = line("Other", { quantity: 1, unitPriceExGst: "0.2" });
  const group: GroupInput = { lines: [tenCents, twentyCents], decorations: [] };
  const totals = quoteTotals([group, group, group], "10");
  assert.equal(totals.groupsTotal, "0.90");
  assert.deepEqual(
    [totals.subtotalExGst, totals.gstAmount, totals.totalIncGst],
    ["0.90", "0.09", "0.99"],
  );
});

// ---------------------------------------------------------------------------------------------
// Decorations

Deno.test("decorationTotals() leaves the setup lane inert when includeSetupCost is false", () => {
  const excluded = decoration({
    quantity: 15,
    unitCost: "1.20",
    markupType: "percentage",
    markupValue: "50",
    setupCost: "30.00",
    setupMarkupType: "fixed",
    setupMarkupValue: "15",
    includeSetupCost: false,
  });
  assert.deepEqual(decorationTotals(excluded), {
    baseUnitCost: "1.8000",
    baseSetupCost: "45.0000",
    setupCharge: "0.00",
    total: "27.00",
  });
  const otherSetup = decorationTotals({
    ...excluded,
    setupCost: "999.99",
    setupMarkupType: "percentage",
    setupMarkupValue: "300",
    setupMarkupSource: "group",
    rollUpSetup: true,
  });
  assert.equal(otherSetup.total, "27.00");
});

Deno.test("decorationTotals() uses the stored charges of lanes without a markup type", () => {
  const old = decoration({
    quantity: 10,
    unitCost: "1",
    baseUnitCost: "2.25",
    setupCost: "20",
    baseSetupCost: "35",
    includeSetupCost: true,
  });
  assert.deepEqual(decorationTotals(old), {
    baseUnitCost: "2.2500",
    baseSetupCost: "35.0000",
    setupCharge: "35.00",
    total: "57.50",
  });
});

Deno.test("rebandDecoration() bands the unit lane on quantity and the setup lane on setup cost", () => {
  const unit: MarkupGroup = {
    lane: "decoration",
    bands: [
      { from: "1", markupType: "percentage", markupValue: "100" },
      { from: "24", markupType: "percentage", markupValue: "60" },
    ],
  };
  const setup: MarkupGroup = {
    lane: "setup",
    bands: [
      { from: "0", markupType: "fixed", markupValue: "20" },
      { from: "50", markupType: "percentage", markupValue: "25" },
    ],
  };
  const row = decoration({
    quantity: 30,
    unitCost: "1.20",
    markupSource: "group",
    setupCost: "60",
    setupMarkupSource: "group",
    includeSetupCost: true,
  });
  const both = rebandDecoration(row, { unit, setup });
  assert.deepEqual(
    [both.markupValue, both.baseUnitCost, both.setupMarkupValue, both.baseSetupCost],
    ["60", "1.9200", "25", "75.0000"],
  );
  assert.equal(both.unitBand, unit.bands[1]);
  assert.equal(both.setupBand, setup.bands[1]);

  // One lane group-owned, the other manual: the manual lane is left alone.
  const mixed = rebandDecoration({
    ...row,
    quantity: 10,
    setupMarkupSource: "manual",
    setupMarkupType: "fixed",
    setupMarkupValue: "5",
  }, { unit, setup });
  assert.deepEqual(
    [mixed.markupValue, mixed.baseUnitCost, mixed.setupMarkupValue, mixed.baseSetupCost],
    ["100", "2.4000", "5", "65.0000"],
  );
  assert.equal(mixed.setupBand, null);
  assert.throws(() => rebandDecoration(row, { unit: setup }), RangeError);
});

// ---------------------------------------------------------------------------------------------
// Rounding of the quote totals

function otherLine(amount: string): LineInput {
  return line("Other", { quantity: 1, unitPriceExGst: amount });
}

Deno.test("quoteTotals() rounds GST half away from zero (12.25 × 10 % = 1.225 → 1.23)", () => {
  const totals = quoteTotals([{ lines: [otherLine("12.25")], decorations: [] }], "10");
  assert.deepEqual(
    [totals.subtotalExGst, totals.gstAmount, totals.totalIncGst],
    ["12.25", "1.23", "13.48"],
  );
  const credit = quoteTotals([{
    lines: [otherLine("0"), line("Discount", { quantity: 1, unitPriceExGst: "12.25" })],
    decorations: [],
  }], "10");
  assert.deepEqual(
    [credit.subtotalExGst, credit.gstAmount, credit.totalIncGst],
    ["-12.25", "-1.23", "-13.48"],
  );
  const half = quoteTotals([{ lines: [otherLine("0.05")], decorations: [] }], "10");
  assert.equal(half.gstAmount, "0.01");
  const fractionalRate = quoteTotals([{ lines: [otherLine("100")], decorations: [] }], "12.345");
  assert.equal(fractionalRate.gstAmount, "12.35");
});

Deno.test("quoteTotals() rounds the subtotal once, half away from zero, from the unrounded group totals", () => {
  // 1.25 less 10 % = 1.125 → 1.13; two such groups sum to 2.25 before rounding, not 2.26.
  const group: GroupInput = {
    lines: [otherLine("1.25"), line("Discount", { valueType: "Percentage", percentage: "10" })],
    decorations: [],
  };
  assert.equal(quoteTotals([group], "0").subtotalExGst, "1.13");
  const two = quoteTotals([group, group], "10");
  assert.equal(two.groupsTotal, "2.25");
  assert.deepEqual([two.subtotalExGst, two.gstAmount, two.totalIncGst], ["2.25", "0.23", "2.48"]);
});

// ---------------------------------------------------------------------------------------------
// Properties. Oracles use BigInt fixed-point arithmetic, independent of decimal.js.

/** `s` × 10^scale as a BigInt; fails if `s` has more decimals than `scale`. */
function scaled(s: string, scale: number): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  assert.ok(match, `not a plain decimal: ${s}`);
  const [, sign, whole, fraction = ""] = match;
  assert.ok(fraction.length <= scale, `${s} has more than ${scale} decimals`);
  const value = BigInt(whole! + fraction.padEnd(scale, "0"));
  return sign === "-" ? -value : value;
}

/** n / d rounded half away from zero (d > 0). */
function divHalfAway(n: bigint, d: bigint): bigint {
  const abs = n < 0n ? -n : n;
  let q = abs / d;
  if ((abs % d) * 2n >= d) q += 1n;
  return n < 0n ? -q : q;
}

function cents(value: bigint): string {
  const abs = value < 0n ? -value : value;
  const text = `${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
  return value < 0n ? `-${text}` : text;
}

const SCALE = 12;

function fromUnits(n: number, decimals: number): string {
  const sign = n < 0 ? "-" : "";
  const abs = Math.abs(n);
  const unit = 10 ** decimals;
  return `${sign}${Math.floor(abs / unit)}.${String(abs % unit).padStart(decimals, "0")}`;
}

const money = fc.integer({ min: 0, max: 50_000_000 }).map((n) => fromUnits(n, 4));
const rate = fc.integer({ min: 0, max: 20_000 }).map((n) => fromUnits(n, 2));
const quantity = fc.integer({ min: 0, max: 500 });
const markup = fc.option(
  fc.record({ type: fc.constantFrom<MarkupType>("percentage", "fixed"), value: rate }),
  { nil: null },
);
const valueType = fc.option(fc.constantFrom<ValueType>("Flat", "Percentage"), { nil: null });

const variantArb = fc.record({
  quantity,
  buyPrice: money,
  extraCost: money,
  markup,
  unitPriceExGst: money,
  isCustomLine: fc.boolean(),
  showOnDocuments: fc.boolean(),
  group: fc.boolean(),
}).map(({ markup, group, ...rest }): VariantInput => ({
  ...rest,
  markupType: markup?.type ?? null,
  markupValue: markup?.value ?? null,
  markupSource: group ? "group" : "manual",
}));

const lineArb = fc.record({
  lineType: fc.constantFrom(...LINE_TYPES),
  quantity,
  unitPriceExGst: money,
  valueType,
  percentage: fc.option(rate, { nil: null }),
  discountValueType: valueType,
  discountPercentage: fc.option(rate, { nil: null }),
  variants: fc.array(variantArb, { maxLength: 4 }),
}).map((l): LineInput => isAdjustmentLine(l) ? { ...l, variants: [] } : l);

const decorationArb = fc.record({
  quantity,
  unitCost: money,
  unit: markup,
  baseUnitCost: money,
  setupCost: money,
  setup: markup,
  baseSetupCost: money,
  includeSetupCost: fc.boolean(),
  rollUp: fc.boolean(),
  rollUpSetup: fc.boolean(),
  showOnDocuments: fc.boolean(),
}).map(({ unit, setup, ...rest }): DecorationInput => ({
  ...rest,
  markupType: unit?.type ?? null,
  markupValue: unit?.value ?? null,
  markupSource: "manual",
  setupMarkupType: setup?.type ?? null,
  setupMarkupValue: setup?.value ?? null,
  setupMarkupSource: "manual",
}));

const groupArb = fc.record({
  lines: fc.array(lineArb, { maxLength: 5 }),
  decorations: fc.array(decorationArb, { maxLength: 3 }),
  rollUpDecoration: fc.boolean(),
  rollUpSetup: fc.boolean(),
});

/** numeric(7, 4) rates, with the common ones often enough to land on half cents. */
const taxRate = fc.oneof(
  fc.constantFrom("10", "15", "12.5", "5", "0"),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => fromUnits(n, 4)),
);

Deno.test("groupTotals(): rows sum to the group total and group totals to the quote's, before rounding", () => {
  fc.assert(
    fc.property(fc.array(groupArb, { maxLength: 4 }), (groups) => {
      const quote = quoteTotals(groups, "10");
      let groupsSum = 0n;
      quote.groups.forEach((group, g) => {
        const rows = [...group.lines, ...group.decorations].map((r) => scaled(r.total, SCALE));
        assert.equal(rows.reduce((a, b) => a + b, 0n), scaled(group.total, SCALE));
        const goods = [
          ...group.lines.filter((_, i) => !isAdjustmentLine(groups[g]!.lines[i]!)),
          ...group.decorations,
        ].map((r) => scaled(r.total, SCALE));
        assert.equal(goods.reduce((a, b) => a + b, 0n), scaled(group.goodsTotal, SCALE));
        group.lines.forEach((totals, i) => {
          const input = groups[g]!.lines[i]!;
          if (input.variants.length === 0) return;
          const variants = totals.variants.map((v) => scaled(v.total, SCALE));
          assert.equal(variants.reduce((a, b) => a + b, 0n), scaled(totals.grossTotal, SCALE));
          assert.equal(totals.quantity, lineQuantity(input.variants));
        });
        groupsSum += scaled(group.total, SCALE);
      });
      assert.equal(groupsSum, scaled(quote.groupsTotal, SCALE));
      assert.equal(
        quote.subtotalExGst,
        cents(divHalfAway(groupsSum, 10n ** BigInt(SCALE - 2))),
      );
    }),
  );
});

Deno.test("quoteTotals(): rollUp, rollUpSetup, showOnDocuments and group roll-ups never change a total", () => {
  fc.assert(
    fc.property(
      fc.array(groupArb, { maxLength: 3 }),
      fc.infiniteStream(fc.boolean()),
      (groups, flips) => {
        const flip = (): boolean => flips.next().value as boolean;
        const reflagged = groups.map((group): GroupInput => ({
          rollUpDecoration: flip(),
          rollUpSetup: flip(),
          lines: group.lines.map((l) => ({
            ...l,
            variants: l.variants.map((v) => ({ ...v, showOnDocuments: flip() })),
          })),
          decorations: group.decorations.map((d) => ({
            ...d,
            rollUp: flip(),
            rollUpSetup: flip(),
            showOnDocuments: flip(),
          })),
        }));
        assert.deepEqual(quoteTotals(reflagged, "10"), quoteTotals(groups, "10"));
      },
    ),
  );
});

Deno.test("quoteTotals(): gstAmount = round2(subtotal × pct / 100) and total = subtotal + gst, exactly", () => {
  fc.assert(
    fc.property(fc.array(groupArb, { maxLength: 3 }), taxRate, (groups, pct) => {
      const quote = quoteTotals(groups, pct);
      const subtotal = scaled(quote.subtotalExGst, 2);
      const gst = divHalfAway(subtotal * scaled(pct, 4), 100n * 10_000n);
      assert.equal(quote.gstAmount, cents(gst));
      assert.equal(quote.totalIncGst, cents(subtotal + gst));
    }),
  );
  // Plain subtotals, negative ones included, at rates that often leave exactly half a cent.
  fc.assert(
    fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), taxRate, (centsValue, pct) => {
      const amount = fromUnits(centsValue, 2);
      const quote = quoteTotals([{ lines: [otherLine(amount)], decorations: [] }], pct);
      const gst = divHalfAway(BigInt(centsValue) * scaled(pct, 4), 100n * 10_000n);
      assert.equal(quote.subtotalExGst, cents(BigInt(centsValue)));
      assert.equal(quote.gstAmount, cents(gst));
      assert.equal(quote.totalIncGst, cents(BigInt(centsValue) + gst));
    }),
    { numRuns: 2_000 },
  );
});

Deno.test("adjustmentTotal() takes a Percentage of the goods total and a Flat quantity × unit", () => {
  fc.assert(
    fc.property(money, rate, quantity, money, (goods, pct, qty, unit) => {
      const percent: AdjustmentLine = line("Surcharge", {
        valueType: "Percentage",
        percentage: pct,
      });
      const expected = scaled(goods, 4) * scaled(pct, 2);
      assert.equal(scaled(adjustmentTotal(percent, goods), 8), expected);
      const flat: AdjustmentLine = line("Discount", {
        valueType: "Flat",
        quantity: qty,
        unitPriceExGst: unit,
      });
      assert.equal(scaled(adjustmentTotal(flat, goods), 4), -BigInt(qty) * scaled(unit, 4));
    }),
  );
});

Deno.test("lineTotals() of a goods line without variants is quantity × unit less its discount", () => {
  fc.assert(
    fc.property(quantity, money, valueType, rate, (qty, unit, discountType, discount) => {
      const input: GoodsLine = line("Service", {
        quantity: qty,
        unitPriceExGst: unit,
        discountValueType: discountType,
        discountPercentage: discount,
      });
      const gross = BigInt(qty) * scaled(unit, 4) * 10n ** 4n; // scale 8
      const off = discountType === "Percentage"
        ? (gross * scaled(discount, 2)) / 10_000n // exact: scale 8 × 2dp / 100
        : discountType === "Flat"
        ? scaled(discount, 8)
        : 0n;
      assert.equal(scaled(lineTotals(input).total, 12), (gross - off) * 10_000n);
    }),
  );
});

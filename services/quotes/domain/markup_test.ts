import assert from "node:assert/strict";
import fc from "fast-check";
import {
  applyMarkup,
  bandFor,
  type BandProblem,
  deriveMarkup,
  type MarkupBand,
  validateBands,
} from "./markup.ts";

/** `n / 10^4` as a decimal string, built from integers only. */
function fromTenThousandths(n: number): string {
  const sign = n < 0 ? "-" : "";
  const abs = Math.abs(n);
  return `${sign}${Math.floor(abs / 10_000)}.${String(abs % 10_000).padStart(4, "0")}`;
}

const garmentBands: MarkupBand[] = [
  { from: "1", markupType: "percentage", markupValue: "60" },
  { from: "12", markupType: "percentage", markupValue: "50" },
  { from: "48", markupType: "percentage", markupValue: "40" },
];

function codes(problems: BandProblem[]): string[] {
  return problems.map((p) => p.code);
}

Deno.test("applyMarkup() adds a percentage of the cost or a fixed amount, to 4 decimals", () => {
  assert.equal(applyMarkup("5.50", "percentage", "40"), "7.7000");
  assert.equal(applyMarkup("5.00", "fixed", "3"), "8.0000");
  assert.equal(applyMarkup("20.00", "percentage", "0"), "20.0000");
  assert.equal(applyMarkup("30.00", "fixed", "15"), "45.0000");
  assert.equal(applyMarkup("0", "percentage", "60"), "0.0000");
});

Deno.test("applyMarkup() rounds the sell half away from zero at the 4th decimal", () => {
  // 0.0001 × 1.5 = 0.00015 → 0.0002; a float would not even hold 0.00015 exactly.
  assert.equal(applyMarkup("0.0001", "percentage", "50"), "0.0002");
  assert.equal(applyMarkup("-0.0001", "percentage", "50"), "-0.0002");
  // 1.2345 × 1.1 = 1.35795 → 1.3580 (the 5 rounds up).
  assert.equal(applyMarkup("1.2345", "percentage", "10"), "1.3580");
  // 0.0003 × 1.5 = 0.00045 → 0.0005 (half-to-even would give 0.0004).
  assert.equal(applyMarkup("0.0003", "percentage", "50"), "0.0005");
  assert.equal(applyMarkup("-0.0003", "percentage", "50"), "-0.0005");
  assert.equal(applyMarkup("1.00005", "fixed", "0"), "1.0001");
});

Deno.test("deriveMarkup() gives sell − cost for fixed and the percentage when cost > 0", () => {
  assert.equal(deriveMarkup("5.50", "7.70", "fixed"), "2.2");
  assert.equal(deriveMarkup("5.50", "7.70", "percentage"), "40");
  assert.equal(deriveMarkup("5.50", "8.25", "percentage"), "50");
  assert.equal(deriveMarkup("10", "7.5", "percentage"), "-25");
  assert.equal(deriveMarkup("0", "3.00", "percentage"), null);
  assert.equal(deriveMarkup("-1", "3.00", "percentage"), null);
  assert.equal(deriveMarkup("0", "3.00", "fixed"), "3");
});

Deno.test("deriveMarkup() rounds a repeating percentage to the fewest decimals that keep the sell", () => {
  // 1.75 / 6.50 × 100 = 26.923076…; 26.923 already gives 6.50 × 1.26923 = 8.2499950 → 8.2500.
  assert.equal(deriveMarkup("6.50", "8.25", "percentage"), "26.923");
  assert.equal(applyMarkup("6.50", "percentage", "26.923"), "8.2500");
  // A third on top: 33.333…% — a larger cost needs more decimals to land on the same sell.
  assert.equal(deriveMarkup("3", "4", "percentage"), "33.333");
  assert.equal(applyMarkup("3", "percentage", "33.333"), "4.0000");
  assert.equal(deriveMarkup("3000", "4000", "percentage"), "33.333333");
  assert.equal(applyMarkup("3000", "percentage", "33.33333"), "3999.9999");
  assert.equal(applyMarkup("3000", "percentage", "33.333333"), "4000.0000");
});

Deno.test("deriveMarkup() always reproduces the sell: applyMarkup(cost, type, derived) = sell", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 99_999_999 }), // cost 0.0001 .. 9999.9999
      fc.integer({ min: -99_999_999, max: 999_999_999 }),
      (costUnits, sellUnits) => {
        const cost = fromTenThousandths(costUnits);
        const sell = fromTenThousandths(sellUnits);
        const percentage = deriveMarkup(cost, sell, "percentage");
        assert.ok(percentage !== null);
        assert.equal(applyMarkup(cost, "percentage", percentage), sell);
        assert.equal(applyMarkup(cost, "fixed", deriveMarkup(cost, sell, "fixed")), sell);
      },
    ),
  );
});

Deno.test("validateBands() accepts the pricing.md garment bands and a setup lane from 0", () => {
  assert.deepEqual(validateBands("garment", garmentBands), []);
  assert.deepEqual(
    validateBands("decoration", [{ from: "0", markupType: "fixed", markupValue: "1.5" }]),
    [],
  );
  assert.deepEqual(
    validateBands("setup", [
      { from: "50.00", markupType: "percentage", markupValue: "25" },
      { from: "0", markupType: "fixed", markupValue: "15" },
    ]),
    [],
  );
});

Deno.test("validateBands() refuses duplicate from values, a bad start and negative or fractional from", () => {
  assert.deepEqual(validateBands("garment", []).map((p) => p.code), ["no_bands"]);

  const duplicate = validateBands("garment", [
    ...garmentBands,
    { from: "12.0", markupType: "fixed", markupValue: "2" },
  ]);
  assert.deepEqual(codes(duplicate), ["duplicate_from"]);
  assert.deepEqual(duplicate[0], {
    code: "duplicate_from",
    from: "12",
    indexes: [1, 3],
    message: "bands 1, 3 share from 12",
  });

  assert.deepEqual(
    codes(validateBands("garment", [{ from: "2", markupType: "percentage", markupValue: "60" }])),
    ["first_band_start"],
  );
  assert.deepEqual(
    codes(validateBands("setup", [{ from: "1", markupType: "percentage", markupValue: "60" }])),
    ["first_band_start"],
  );
  assert.deepEqual(
    codes(validateBands("garment", [
      { from: "-1", markupType: "percentage", markupValue: "60" },
      { from: "1", markupType: "percentage", markupValue: "60" },
    ])),
    ["negative_from", "first_band_start"],
  );
  assert.deepEqual(
    codes(validateBands("decoration", [
      { from: "0", markupType: "percentage", markupValue: "60" },
      { from: "2.5", markupType: "percentage", markupValue: "50" },
    ])),
    ["not_a_quantity"],
  );
  assert.deepEqual(
    validateBands("setup", [
      { from: "0", markupType: "percentage", markupValue: "abc" },
      { from: "NaN", markupType: "percentage", markupValue: "1" },
    ]).map((p) => p.code === "invalid_number" ? `${p.index}.${p.field}` : p.code),
    ["0.markupValue", "1.from"],
  );
  // A setup lane's from is a cost, so fractions are fine there.
  assert.deepEqual(
    validateBands("setup", [
      { from: "0", markupType: "percentage", markupValue: "60" },
      { from: "2.5", markupType: "percentage", markupValue: "50" },
    ]),
    [],
  );
});

Deno.test("bandFor() picks the band with the greatest from ≤ the value, or null", () => {
  assert.equal(bandFor(garmentBands, 0), null);
  assert.equal(bandFor(garmentBands, 1)?.markupValue, "60");
  assert.equal(bandFor(garmentBands, 11)?.markupValue, "60");
  assert.equal(bandFor(garmentBands, 12)?.markupValue, "50");
  assert.equal(bandFor(garmentBands, 15)?.markupValue, "50");
  assert.equal(bandFor(garmentBands, 50)?.markupValue, "40");
  assert.equal(bandFor([...garmentBands].reverse(), 47)?.markupValue, "50");
  const setup: MarkupBand[] = [
    { from: "0", markupType: "fixed", markupValue: "15" },
    { from: "100.00", markupType: "percentage", markupValue: "10" },
  ];
  assert.equal(bandFor(setup, "99.9999")?.markupValue, "15");
  assert.equal(bandFor(setup, "100")?.markupValue, "10");
  assert.equal(bandFor([], 5), null);
});

Deno.test("bandFor() agrees with a brute-force search over any band list", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 8 }),
      fc.integer({ min: 0, max: 250 }),
      (froms, value) => {
        const bands = froms.map((from): MarkupBand => ({
          from: String(from),
          markupType: "percentage",
          markupValue: String(from),
        }));
        const eligible = froms.filter((f) => f <= value);
        const expected = eligible.length === 0 ? null : String(Math.max(...eligible));
        assert.equal(bandFor(bands, value)?.from ?? null, expected);
      },
    ),
  );
});

Deno.test("bandFor() answers a whole quantity as it answers the same value as text", () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 8 }),
    fc.integer({ min: -2, max: 70 }),
    (starts, value) => {
      const bands = starts.map((from, i) => ({
        from: String(from),
        markupType: "percentage" as const,
        markupValue: String(i),
      }));
      assert.equal(bandFor(bands, value), bandFor(bands, String(value)));
    },
  ));
});

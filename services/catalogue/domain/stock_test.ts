import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { adjust, openingStock, type Stock, stocktake } from "./stock.ts";

const plain: Stock = { stockOnHand: 10, stockReserved: 2, stockByLocation: [] };
const located: Stock = {
  stockOnHand: 9,
  stockReserved: 0,
  stockByLocation: [{ location: "Main", quantity: 6 }, { location: "Van", quantity: 3 }],
};

Deno.test("openingStock(): locations give the sum, a different figure beside them is a problem", () => {
  const opened = openingStock({ stockByLocation: located.stockByLocation }, "input.0.");
  assertEquals("stock" in opened && opened.stock.stockOnHand, 9);
  assertEquals("ledger" in opened && opened.ledger.map((e) => [e.location, e.delta]), [
    ["Main", 6],
    ["Van", 3],
  ]);
  assertEquals(
    openingStock({ stockOnHand: 8, stockByLocation: located.stockByLocation }, "input.0."),
    {
      problem: {
        path: "input.0.stockOnHand",
        message: "Must be the sum of stockByLocation (9) when both are given",
      },
    },
  );
  const reserved = openingStock({ stockOnHand: 1, stockReserved: 2 }, "");
  assertEquals("problem" in reserved && reserved.problem.path, "stockReserved");
  const zero = openingStock({}, "");
  assertEquals("ledger" in zero && zero.ledger, [], "no ledger row for nothing");
});

Deno.test("adjust(): counts, locations matched without case, and the refusals", () => {
  const added = adjust(located, { location: "van", delta: 2 }, false);
  assertEquals("stock" in added && added.stock.stockByLocation, [
    { location: "Main", quantity: 6 },
    { location: "Van", quantity: 5 },
  ]);
  assertEquals(
    "entry" in added && [added.entry.stockOnHandAfter, added.entry.locationQuantityAfter],
    [
      11,
      5,
    ],
  );
  const newPlace = adjust(located, { location: "Shelf B", delta: 1 }, false);
  assertEquals("stock" in newPlace && newPlace.stock.stockByLocation.length, 3);
  const noLocation = adjust(located, { location: null, delta: 1 }, false);
  assertEquals("refused" in noLocation && noLocation.refused.kind, "invalid");
  const belowZero = adjust(located, { location: "Van", delta: -4 }, false);
  assertEquals("refused" in belowZero && belowZero.refused.kind, "conflict");
  assertEquals("stock" in adjust(located, { location: "Van", delta: -4 }, true), true);
  const belowReserved = adjust(plain, { location: null, delta: -9 }, false);
  assertEquals("refused" in belowReserved && belowReserved.refused.kind, "conflict");
  const unlocatedStock = adjust(plain, { location: "Main", delta: 1 }, false);
  assertEquals("refused" in unlocatedStock && unlocatedStock.refused.kind, "conflict");
});

Deno.test("stocktake(): one ledger row per difference, and the ledger adds up", () => {
  const counted = stocktake(located, {
    stockByLocation: [{ location: "Main", quantity: 4 }, { location: "Back room", quantity: 7 }],
  });
  assertEquals(
    "ledger" in counted && counted.ledger.map((e) => [e.location, e.delta, e.stockOnHandAfter]),
    [["Main", -2, 7], ["Van", -3, 4], ["Back room", 7, 11]],
  );
  assertEquals("stock" in counted && counted.stock.stockOnHand, 11);
  const fromPlain = stocktake(plain, { stockByLocation: [{ location: "Main", quantity: 10 }] });
  assertEquals(
    "ledger" in fromPlain && fromPlain.ledger.reduce((sum, e) => sum + e.delta, 0),
    0,
    "unlocated stock leaves and arrives at the location: the total is unchanged",
  );
  const figure = stocktake(located, { stockOnHand: 3 });
  assertEquals("problem" in figure && figure.problem.path, "stockOnHand");
  const over = stocktake(plain, { stockReserved: 11 });
  assertEquals("problem" in over && over.problem.path, "stockReserved");
  const drop = stocktake({ ...plain, stockReserved: 8 }, { stockOnHand: 5 });
  assertEquals("problem" in drop && drop.problem.path, "stockOnHand");
  assertEquals(stocktake(plain, {}), { stock: plain, ledger: [] });
});

Deno.test("adjust(): no location may pass the stock bound, even when the total stays inside it", () => {
  const skewed: Stock = {
    stockOnHand: 0,
    stockReserved: 0,
    stockByLocation: [{ location: "P", quantity: 100_000_000 }, {
      location: "N",
      quantity: -100_000_000,
    }],
  };
  const over = adjust(skewed, { location: "P", delta: 1 }, true);
  assertEquals("refused" in over && over.refused.kind, "conflict");
});

Deno.test("stocktake(): no locations from now on, with or without a figure", () => {
  const zeroed = stocktake({ ...plain, stockReserved: 0 }, { stockOnHand: 0, stockByLocation: [] });
  assertEquals("stock" in zeroed && zeroed.stock.stockOnHand, 0);
  assertEquals("ledger" in zeroed && zeroed.ledger.map((e) => [e.location, e.delta]), [[
    null,
    -10,
  ]]);
  const kept = stocktake(located, { stockByLocation: [] });
  assertEquals("stock" in kept && [kept.stock.stockOnHand, kept.stock.stockByLocation], [9, []]);
  assertEquals(
    "ledger" in kept && kept.ledger.map((e) => [e.location, e.delta, e.stockOnHandAfter]),
    [["Main", -6, 3], ["Van", -3, 0], [null, 9, 9]],
  );
});

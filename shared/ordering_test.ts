import assert from "node:assert/strict";
import fc from "fast-check";
import { placeAt, type RowRef } from "./ordering.ts";

const row = (id: string, kind = "line"): RowRef => ({ id, kind });
const ids = (rows: readonly RowRef[]): string[] => rows.map((r) => r.id);

Deno.test("placeAt() appends when no position is asked for and inserts at an asked one", () => {
  const rows = [row("a"), row("b"), row("c")];
  assert.deepEqual(ids(placeAt([], row("n"), undefined)), ["n"]);
  assert.deepEqual(ids(placeAt(rows, row("n"), undefined)), ["a", "b", "c", "n"]);
  assert.deepEqual(ids(placeAt(rows, row("n"), 2)), ["a", "n", "b", "c"]);
  assert.deepEqual(ids(placeAt(rows, row("n"), 1)), ["n", "a", "b", "c"]);
  // Clamped: past the end appends, below 1 goes first.
  assert.deepEqual(ids(placeAt(rows, row("n"), 99)), ["a", "b", "c", "n"]);
  assert.deepEqual(ids(placeAt(rows, row("n"), 0)), ["n", "a", "b", "c"]);
  assert.deepEqual(ids(placeAt(rows, row("n"), -5)), ["n", "a", "b", "c"]);
});

Deno.test("placeAt() moves a row that is already in the sequence", () => {
  const rows = [row("a"), row("b"), row("c"), row("d")];
  assert.deepEqual(ids(placeAt(rows, row("d"), 1)), ["d", "a", "b", "c"]);
  assert.deepEqual(ids(placeAt(rows, row("a"), 3)), ["b", "c", "a", "d"]);
  assert.deepEqual(ids(placeAt(rows, row("b"), undefined)), ["a", "c", "d", "b"]);
});

Deno.test("placeAt() knows a row by kind and id together", () => {
  const rows = [row("x", "line"), row("y", "decoration")];
  const placed = placeAt(rows, row("x", "decoration"), 1);
  assert.deepEqual(placed, [row("x", "decoration"), row("x", "line"), row("y", "decoration")]);
});

Deno.test("placeAt() keeps every other row once, in order, with the row at the clamped place", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 30 }),
      fc.option(fc.integer({ min: -5, max: 40 }), { nil: undefined }),
      fc.boolean(),
      (n, position, moving) => {
        const rows = Array.from({ length: n }, (_, i) => row(`r${i}`));
        const target = moving && n > 0 ? rows[Math.floor(n / 2)]! : row("new");
        const placed = placeAt(rows, target, position);
        const others = rows.filter((r) => r.id !== target.id);
        assert.equal(placed.length, others.length + 1);
        assert.deepEqual(placed.filter((r) => r.id !== target.id), others);
        const expected = position === undefined
          ? others.length
          : Math.min(Math.max(position, 1), others.length + 1) - 1;
        assert.equal(placed.indexOf(target), expected);
      },
    ),
  );
});

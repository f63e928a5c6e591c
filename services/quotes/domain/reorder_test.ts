import assert from "node:assert/strict";
import fc from "fast-check";
import { renumber, type RowKind, type RowRef } from "./reorder.ts";

const rows: RowRef[] = [
  { id: "l1", kind: "line" },
  { id: "d1", kind: "decoration" },
  { id: "l2", kind: "line" },
];

Deno.test("renumber() numbers lines and decorations 1..n in the requested order", () => {
  const result = renumber(rows, [
    { id: "l2", kind: "line" },
    { id: "l1", kind: "line" },
    { id: "d1", kind: "decoration" },
  ]);
  assert.deepEqual(result, {
    ok: true,
    assignments: [
      { id: "l2", kind: "line", sortOrder: 1 },
      { id: "l1", kind: "line", sortOrder: 2 },
      { id: "d1", kind: "decoration", sortOrder: 3 },
    ],
  });
  assert.deepEqual(renumber([], []), { ok: true, assignments: [] });
});

Deno.test("renumber() refuses an item listed twice, an unknown item and a missing item", () => {
  assert.deepEqual(
    renumber(rows, [
      { id: "l1", kind: "line" },
      { id: "d1", kind: "decoration" },
      { id: "l1", kind: "line" },
      { id: "l2", kind: "line" },
    ]),
    {
      ok: false,
      problems: [
        { code: "duplicate", item: { id: "l1", kind: "line" }, message: "line l1 is listed twice" },
      ],
    },
  );
  assert.deepEqual(
    renumber(rows, [
      { id: "l1", kind: "line" },
      { id: "d1", kind: "decoration" },
      { id: "zz", kind: "line" },
    ]),
    {
      ok: false,
      problems: [
        {
          code: "unknown",
          item: { id: "zz", kind: "line" },
          message: "line zz is not in this group",
        },
        { code: "missing", item: { id: "l2", kind: "line" }, message: "line l2 is not listed" },
      ],
    },
  );
  // The same id under the other kind is a different row.
  const wrongKind = renumber(rows, [
    { id: "l1", kind: "decoration" },
    { id: "d1", kind: "decoration" },
    { id: "l2", kind: "line" },
  ]);
  assert.ok(!wrongKind.ok);
  assert.deepEqual(wrongKind.problems.map((p) => `${p.code} ${p.item.kind} ${p.item.id}`), [
    "unknown decoration l1",
    "missing line l1",
  ]);
});

const rowsArb = fc.uniqueArray(
  fc.record({
    id: fc.string({ minLength: 1, maxLength: 6 }),
    kind: fc.constantFrom<RowKind>("line", "decoration"),
  }).map(({ id, kind }): RowRef => ({ id, kind })), // plain objects, for deepEqual
  { maxLength: 20, selector: (r) => `${r.kind}:${r.id}` },
);

const permutationArb = rowsArb.chain((all) =>
  fc.tuple(fc.constant(all), fc.shuffledSubarray(all, { minLength: all.length }))
);

Deno.test("renumber(): a random permutation gets exactly 1..n in that order, a permutation of the ids", () => {
  fc.assert(
    fc.property(permutationArb, ([all, order]) => {
      const result = renumber(all, order);
      assert.ok(result.ok);
      assert.deepEqual(
        result.assignments.map((a) => a.sortOrder),
        order.map((_, i) => i + 1),
      );
      assert.deepEqual(
        result.assignments.map(({ id, kind }) => ({ id, kind })),
        order,
      );
      const key = (r: RowRef): string => `${r.kind}:${r.id}`;
      assert.deepEqual(result.assignments.map(key).sort(), all.map(key).sort());
    }),
  );
});

Deno.test("renumber(): refuses any request with a duplicate, an unknown or a missing item", () => {
  fc.assert(
    fc.property(
      permutationArb.filter(([all]) => all.length > 0),
      fc.nat(),
      fc.constantFrom("duplicate", "unknown", "missing"),
      ([all, order], pick, code) => {
        const at = pick % order.length;
        const chosen = order[at]!;
        const unknown: RowRef = { id: "not-a-row-id-in-this-group", kind: "line" };
        const requested = code === "duplicate"
          ? [...order, chosen]
          : code === "unknown"
          ? [...order.slice(0, at), unknown, ...order.slice(at)]
          : order.filter((_, i) => i !== at);
        const result = renumber(all, requested);
        assert.ok(!result.ok);
        assert.deepEqual(result.problems.map((p) => [p.code, p.item]), [
          [code, code === "unknown" ? unknown : chosen],
        ]);
      },
    ),
  );
});

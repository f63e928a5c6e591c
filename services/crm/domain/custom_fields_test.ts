import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  customFieldProblems,
  type Definition,
  mergedValues,
  optionsProblem,
} from "./custom_fields.ts";

const id = (n: number): string => `00000000-0000-7000-8000-00000000000${n}`;
const definitions: Definition[] = [
  { id: id(1), name: "Note", type: "text", options: [] },
  { id: id(2), name: "Hours", type: "number", options: [] },
  { id: id(3), name: "Since", type: "date", options: [] },
  { id: id(4), name: "VIP", type: "boolean", options: [] },
  { id: id(5), name: "Courier", type: "select", options: ["A", "B"] },
  { id: id(6), name: "Sizes", type: "multiselect", options: ["S", "M", "L"] },
];

Deno.test("customFieldProblems(): each type takes its own values, null always fits", () => {
  assertEquals(
    customFieldProblems(definitions, {
      [id(1)]: "x",
      [id(2)]: 1.5,
      [id(3)]: "2024-02-29",
      [id(4)]: false,
      [id(5)]: "B",
      [id(6)]: ["S", "L"],
    }),
    [],
  );
  const bad = customFieldProblems(definitions, {
    [id(1)]: 3,
    [id(2)]: "3",
    [id(3)]: "2023-02-29",
    [id(4)]: "yes",
    [id(5)]: "C",
    [id(6)]: ["S", "S"],
    [id(7)]: "unknown",
  });
  assertEquals(bad.map((p) => p.path), [1, 2, 3, 4, 5, 6, 7].map((n) => `customFields.${id(n)}`));
  assertEquals(customFieldProblems(definitions, { [id(5)]: null }), []);
  assertEquals(customFieldProblems(definitions, { [id(5).toUpperCase()]: "A" }), []);
});

Deno.test("mergedValues(): given over stored, null removes, keys lower-cased", () => {
  assertEquals(
    mergedValues({ [id(1)]: "a", [id(2)]: 1 }, { [id(1).toUpperCase()]: "b", [id(2)]: null }),
    { [id(1)]: "b" },
  );
});

Deno.test("optionsProblem(): choices only for select types, never dropping one in use", () => {
  assertEquals(optionsProblem("text", [], []), null);
  assertEquals(optionsProblem("text", [], ["a"])?.path, "options");
  assertEquals(optionsProblem("select", [], [])?.path, "options");
  assertEquals(optionsProblem("select", ["A"], ["A", "B"]), null);
  assertEquals(optionsProblem("multiselect", ["A", "B"], ["A"])?.message.includes('"B"'), true);
});

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { decideArchived, decideTags, decideTier, normalTags } from "./customers.ts";

const current = { tier: "silver" as const, tags: ["a", "b"], isArchived: false };

Deno.test("decideTier(): unchanged at the tier, refused while archived, else the new tier", () => {
  assertEquals(decideTier(current, "silver"), { status: "unchanged" });
  assertEquals(decideTier(current, "gold"), { status: "ok", change: "gold" });
  assertEquals(decideTier({ ...current, isArchived: true }, "gold").status, "refused");
  assertEquals(decideTier({ ...current, isArchived: true }, "silver").status, "unchanged");
});

Deno.test("decideTags(): case-blind, order kept, new ones after, unchanged when nothing moves", () => {
  assertEquals(normalTags([" A", "a", "B "]), ["a", "b"]);
  assertEquals(decideTags(current, { add: ["C", "A"], remove: ["b"] }), {
    status: "ok",
    change: ["a", "c"],
  });
  assertEquals(decideTags(current, { add: ["B"] }), { status: "unchanged" });
  assertEquals(decideTags(current, { remove: ["z"] }), { status: "unchanged" });
});

Deno.test("decideArchived(): unchanged at the value", () => {
  assertEquals(decideArchived(current, false), { status: "unchanged" });
  assertEquals(decideArchived(current, true), { status: "ok", change: true });
});

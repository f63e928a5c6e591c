import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { PREBUILT_ITEM_STATUSES } from "@printshop/shared/contracts/catalogue";
import { canMovePrebuilt, PREBUILT_TRANSITIONS, statusMove } from "./prebuilt_status.ts";

Deno.test("statusMove(): same status is unchanged, allowed moves move, others are refused", () => {
  assertEquals(statusMove("draft", "draft"), { kind: "unchanged" });
  assertEquals(statusMove("draft", "active"), { kind: "move", to: "active" });
  assertEquals(statusMove("active", "draft"), { kind: "move", to: "draft" });
  assertEquals(statusMove("archived", "active"), { kind: "move", to: "active" });
  assertEquals(statusMove("archived", "draft"), {
    kind: "refused",
    reason: "An archived pre-built item cannot move to draft; it can move to active",
  });
});

Deno.test("PREBUILT_TRANSITIONS: every status can be left, none moves to itself", () => {
  for (const from of PREBUILT_ITEM_STATUSES) {
    assertEquals(PREBUILT_TRANSITIONS[from].length > 0, true, from);
    assertEquals(canMovePrebuilt(from, from), false, from);
  }
});

import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { credentialName, itemCompletion, taskCompletion } from "./tasks.ts";

Deno.test("taskCompletion: done stamps once, leaving done clears, other moves keep", () => {
  assertEquals(taskCompletion(null, "done"), "stamp");
  assertEquals(taskCompletion("in_progress", "done"), "stamp");
  assertEquals(taskCompletion("done", "done"), "keep");
  assertEquals(taskCompletion("done", "todo"), "clear");
  assertEquals(taskCompletion("done", "cancelled"), "clear");
  assertEquals(taskCompletion("todo", "cancelled"), "keep");
  assertEquals(taskCompletion(null, "todo"), "keep");
});

Deno.test("itemCompletion: ticking stamps, unticking clears, the same tick keeps its time", () => {
  assertEquals(
    [itemCompletion(false, true), itemCompletion(true, false), itemCompletion(true, true)],
    ["stamp", "clear", "keep"],
  );
});

Deno.test("credentialName: says which kind of credential and the start of its id", () => {
  assertEquals(credentialName("tenant_key", "0192f3aa-0b1c-7d2e"), "API key 0192f3aa");
  assertEquals(credentialName("partner", "0193aaaa-bbbb"), "Partner app 0193aaaa");
});

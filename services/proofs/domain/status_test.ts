import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { PROOF_STATUSES, type ProofStatus } from "@printshop/shared/contracts/proofs";
import { move, type ProofTrigger } from "./status.ts";

const to = (trigger: ProofTrigger, from: ProofStatus): ProofStatus | "refused" => {
  const result = move(trigger, from);
  return "to" in result ? result.to : "refused";
};

Deno.test("move: a send takes a draft to sent, keeps an undecided proof, refuses a decided one", () => {
  assertEquals(PROOF_STATUSES.map((s) => to("send", s)), [
    "sent",
    "sent",
    "viewed",
    "refused",
    "refused",
    "refused",
  ]);
  const refused = move("send", "approved");
  assertEquals(
    "refused" in refused && refused.refused.includes("POST …/revise"),
    true,
    "the refusal says what to do",
  );
});

Deno.test("move: only a sent proof becomes viewed; a view of any other is recorded in place", () => {
  assertEquals(PROOF_STATUSES.map((s) => to("view", s)), [
    "draft",
    "viewed",
    "viewed",
    "approved",
    "changes_requested",
    "rejected",
  ]);
});

Deno.test("move: decisions are taken by undecided proofs only", () => {
  assertEquals(PROOF_STATUSES.map((s) => to("approve", s)), [
    "approved",
    "approved",
    "approved",
    "refused",
    "refused",
    "refused",
  ]);
  assertEquals(PROOF_STATUSES.map((s) => to("request_changes", s)), [
    "changes_requested",
    "changes_requested",
    "changes_requested",
    "refused",
    "refused",
    "refused",
  ]);
});

Deno.test("move: revising returns any proof to draft", () => {
  assertEquals(PROOF_STATUSES.map((s) => to("revise", s)), PROOF_STATUSES.map(() => "draft"));
});

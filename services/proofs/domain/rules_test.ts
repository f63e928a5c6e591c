import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  decidedRevision,
  decisionProblems,
  ownerProblems,
  repeatedMockProblems,
  revisionContentProblems,
  sizeProblems,
} from "./rules.ts";
import { canonicalJson, shownContent, shownDigest } from "./evidence.ts";

Deno.test("sizeProblems: each size once, compared trimmed and without regard to case", () => {
  assertEquals(sizeProblems([{ size: "S", quantity: 1 }, { size: "M", quantity: 0 }], "sizes"), []);
  assertEquals(
    sizeProblems([
      { size: "M", quantity: 1 },
      { size: "L", quantity: 2 },
      { size: " m ", quantity: 3 },
    ], "sizes").map((p) => p.path),
    ["sizes.2.size"],
  );
});

Deno.test("ownerProblems: names every field when none is given", () => {
  assertEquals(ownerProblems({ jobId: "x" }, ["quoteId", "jobId"], "A proof"), []);
  const problems = ownerProblems({ quoteId: null }, ["quoteId", "quoteGroupId", "jobId"], "A mock");
  assertEquals(problems.map((p) => p.path), ["quoteId", "quoteGroupId", "jobId"]);
  assertEquals(problems[0]!.message, "A mock needs at least one of quoteId, quoteGroupId or jobId");
});

Deno.test("revision rules: something to show, each mock once", () => {
  assertEquals(revisionContentProblems([], []).map((p) => p.path), ["mockIds", "imageUrls"]);
  assertEquals(revisionContentProblems([], ["https://x.test/a.png"]), []);
  assertEquals(repeatedMockProblems(["a", "b", "a"]).map((p) => p.path), ["mockIds.2"]);
});

Deno.test("decision rules: a change request says what; a superseded revision conflicts", () => {
  assertEquals(decisionProblems("request_changes", " ").map((p) => p.path), ["comment"]);
  assertEquals(decisionProblems("approve", undefined), []);
  assertEquals(decidedRevision(undefined, 3), { revision: 3 });
  assertEquals(decidedRevision(3, 3), { revision: 3 });
  assertEquals("superseded" in decidedRevision(2, 3), true);
  assertEquals("problem" in decidedRevision(4, 3), true);
});

Deno.test("canonicalJson: keys sorted at every depth, arrays in order, no spaces", () => {
  assertEquals(
    canonicalJson({ b: [2, { d: 1, c: "é" }], a: null }),
    '{"a":null,"b":[2,{"c":"é","d":1}]}',
  );
});

Deno.test("shownDigest: the same showing gives the same digest, any change another", () => {
  const base = {
    proofId: "0193b1a0-3e4f-7a50-8b61-7c8d9eafb0c1",
    revision: 1,
    title: "Staff tees",
    notes: "Logo as supplied",
    mockImages: [["https://x.test/a.png", "https://x.test/b.png"]],
    imageUrls: ["https://x.test/c.png"],
    items: [{ quoteLineId: null, description: "Tee", sizes: [{ size: "M", quantity: 4 }] }],
  };
  const shown = shownContent(base);
  assertEquals(shown.images, [
    "https://x.test/a.png",
    "https://x.test/b.png",
    "https://x.test/c.png",
  ]);
  const digest = shownDigest(shown);
  assertEquals(/^[0-9a-f]{64}$/.test(digest), true);
  assertEquals(shownDigest(shownContent({ ...base })), digest);
  const reordered = shownContent({
    ...base,
    mockImages: [["https://x.test/b.png", "https://x.test/a.png"]],
  });
  const requantified = shownContent({
    ...base,
    items: [{ ...base.items[0]!, sizes: [{ size: "M", quantity: 5 }] }],
  });
  const otherRevision = shownContent({ ...base, revision: 2 });
  const retitled = shownContent({ ...base, title: "Staff tees, front and back" });
  const renoted = shownContent({ ...base, notes: null });
  for (const changed of [reordered, requantified, otherRevision, retitled, renoted]) {
    assertEquals(shownDigest(changed) === digest, false);
  }
});

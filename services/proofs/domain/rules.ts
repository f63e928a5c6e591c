/**
 * Rules of mocks, proofs and their items, as pure functions answering the problems they find
 * (the store turns them into a 400 naming each field).
 */
import type { ErrorDetail } from "@printshop/shared/http";
import type { ClientDecision, SizeQuantity } from "@printshop/shared/contracts/proofs";

/**
 * Sizes with quantities: each size once, compared as the catalogue compares sizes (trimmed,
 * without regard to case). Whole non-negative quantities are the schema's to check.
 */
export function sizeProblems(sizes: readonly SizeQuantity[], path: string): ErrorDetail[] {
  const seen = new Map<string, number>();
  const problems: ErrorDetail[] = [];
  sizes.forEach(({ size }, i) => {
    const key = size.trim().toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else {
      problems.push({
        path: `${path}.${i}.size`,
        message: `Size "${size}" is already given at ${path}.${first}; give each size once`,
      });
    }
  });
  return problems;
}

/**
 * A record that must name at least one of `fields` after a write: `merged` is what it will
 * hold. Every field is named, so the caller sees each way to fix it.
 */
export function ownerProblems(
  merged: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  what: string,
): ErrorDetail[] {
  if (fields.some((f) => merged[f] !== null && merged[f] !== undefined)) return [];
  const list = fields.length === 2 ? fields.join(" or ") : `${fields.slice(0, -1).join(", ")} ` +
    `or ${fields.at(-1)}`;
  return fields.map((path) => ({ path, message: `${what} needs at least one of ${list}` }));
}

/** A revision shows something: at least one mock or image. */
export function revisionContentProblems(
  mockIds: readonly string[],
  imageUrls: readonly string[],
): ErrorDetail[] {
  if (mockIds.length > 0 || imageUrls.length > 0) return [];
  const message = "A revision shows at least one mock or image; give mockIds or imageUrls";
  return [{ path: "mockIds", message }, { path: "imageUrls", message }];
}

/** The same mock twice in one revision would show its images twice. */
export function repeatedMockProblems(mockIds: readonly string[]): ErrorDetail[] {
  return mockIds.flatMap((id, i) =>
    mockIds.indexOf(id) === i ? [] : [{
      path: `mockIds.${i}`,
      message: `Mock "${id}" is already listed at mockIds.${mockIds.indexOf(id)}`,
    }]
  );
}

/** A change request says what to change. */
export function decisionProblems(
  decision: ClientDecision,
  comment: string | undefined,
): ErrorDetail[] {
  if (decision === "request_changes" && (comment === undefined || comment.trim() === "")) {
    return [{ path: "comment", message: "Say what the customer wants changed" }];
  }
  return [];
}

/**
 * Which revision a decision is about, given the one named (if any) and the current one: the
 * current; a superseded one is a conflict (the customer decided on what is no longer asked);
 * one not opened yet is a 400.
 */
export function decidedRevision(
  named: number | undefined,
  current: number,
): { revision: number } | { superseded: string } | { problem: ErrorDetail } {
  if (named === undefined || named === current) return { revision: current };
  if (named < current) {
    return {
      superseded: `Revision ${named} was superseded by revision ${current}; a decision is ` +
        `recorded on the current revision only`,
    };
  }
  return {
    problem: {
      path: "revision",
      message: `The proof has no revision ${named}; its current revision is ${current}`,
    },
  };
}

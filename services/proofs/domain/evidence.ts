/**
 * What a decision is evidence of: exactly what the revision showed (its images in order, its
 * items with their quantities), as canonical JSON, and the SHA-256 digest of that text. The API
 * and the approval page build it the same way, so a digest taken by either can be checked
 * against the other.
 */
import { createHash } from "node:crypto";
import type { ShownContent, SizeQuantity } from "@printshop/shared/contracts/proofs";

/**
 * JSON with object keys sorted at every depth and no whitespace: the same value always gives
 * the same text (the text a digest is taken of). Arrays keep their order, which is meaningful.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** Hex SHA-256 of the canonical JSON of what was shown. */
export function shownDigest(shown: ShownContent): string {
  return createHash("sha256").update(canonicalJson(shown), "utf8").digest("hex");
}

export interface RevisionShowing {
  proofId: string;
  revision: number;
  title: string | null;
  notes: string | null;
  /** The images of each mock the revision shows, mock by mock, in the revision's order. */
  mockImages: readonly (readonly string[])[];
  imageUrls: readonly string[];
  items: readonly {
    quoteLineId: string | null;
    description: string;
    sizes: readonly SizeQuantity[];
  }[];
}

/**
 * What a revision shows: the proof's title and the revision's notes, the mocks' images first
 * (mock by mock) then its own image URLs, and the items.
 */
export function shownContent(showing: RevisionShowing): ShownContent {
  return {
    proofId: showing.proofId,
    revision: showing.revision,
    title: showing.title,
    notes: showing.notes,
    images: [...showing.mockImages.flat(), ...showing.imageUrls],
    items: showing.items.map((item) => ({
      quoteLineId: item.quoteLineId,
      description: item.description,
      sizes: item.sizes.map(({ size, quantity }) => ({ size, quantity })),
    })),
  };
}

/**
 * What fixes a revision's content: once it was sent (the customer may have seen it), decided on
 * (a digest was taken of it) or approved (a decision, or the status set by hand), what it shows
 * stays as it is, so that what the customer saw and what a decision's digest covers are what the
 * proof and its mocks still show. A change is then a new revision.
 */
export interface RevisionFixity {
  proofId: string;
  revision: number;
  sent: boolean;
  decided: boolean;
  /** The proof is `approved` at this revision, or was (its history records the move). */
  approved: boolean;
}

/** Why the revision's content is fixed, as the end of a sentence; null while it may change. */
export function fixedBecause(fixity: RevisionFixity): string | null {
  if (fixity.decided) return "holds a customer's decision";
  if (fixity.sent) return "was sent to the customer";
  if (fixity.approved) return "was approved";
  return null;
}

/**
 * The 409 for changing `what` (the title, the items) of a proof whose current revision is
 * fixed; null when it is not.
 */
export function shownChangeRefusal(fixity: RevisionFixity, what: string): string | null {
  const because = fixedBecause(fixity);
  if (because === null) return null;
  return `Revision ${fixity.revision} of proof "${fixity.proofId}" ${because}, so what it ` +
    `shows (title, notes, images, items and their sizes) stays as it is; open a new revision ` +
    `(POST /v1/proofs/${fixity.proofId}/revise) to change ${what}`;
}

/**
 * The 409 for changing the images of mock `mockId`, shown by the revisions `showing`; null
 * when none of them is fixed. The mock's other fields are not shown, so they change freely.
 */
export function mockImagesRefusal(
  mockId: string,
  showing: readonly RevisionFixity[],
): string | null {
  const fixed = showing.filter((fixity) => fixedBecause(fixity) !== null);
  const first = fixed[0];
  if (first === undefined) return null;
  const others = fixed.length - 1;
  const more = others === 0 ? "" : ` (and ${others} more revision${others === 1 ? "" : "s"})`;
  return `Mock "${mockId}" is shown by revision ${first.revision} of proof "${first.proofId}", ` +
    `which ${fixedBecause(first)}${more}; a revision keeps showing what it showed, so the ` +
    `mock's images cannot change. Create a new mock with the new images and open a new ` +
    `revision with it`;
}

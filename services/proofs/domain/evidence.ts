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
